#include "oneflow_sbp/nd_sbp_validation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace oneflow_sbp {

absl::Status ValidateNdSbp(const NdSbp& nd_sbp, const Shape& shape,
                           absl::Span<const int64_t> hierarchy) {
  if (nd_sbp.size() != static_cast<int>(hierarchy.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nd_sbp ", nd_sbp.ToString(), " has ", nd_sbp.size(),
        " entries but the hierarchy [", absl::StrJoin(hierarchy, ","), "] has ",
        hierarchy.size(), " mesh axes"));
  }
  for (int i = 0; i < nd_sbp.size(); ++i) {
    const SbpParallel s = nd_sbp[i];
    if (s.is_unset()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nd_sbp ", nd_sbp.ToString(), " leaves mesh axis ", i, " unset"));
    }
    if (s.is_split() && s.split_axis() >= shape.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nd_sbp ", nd_sbp.ToString(), ": ", s.ToString(), " on mesh axis ", i,
          " splits dim ", s.split_axis(), " but shape ", shape.ToString(),
          " has rank ", shape.rank()));
    }
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp
