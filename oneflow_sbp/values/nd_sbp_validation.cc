#include "oneflow_sbp/values/nd_sbp_validation.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace oneflow_sbp {
namespace {

// A one-entry layout on an N-D mesh is the common slip of a 1-D habit
// (DTensor and OneFlow both want one entry per mesh axis): show the two
// layouts the user most likely meant.
std::string OneEntryHint(const NdSbp& nd_sbp, size_t axes) {
  if (nd_sbp.size() != 1 || axes < 2) return "";
  NdSbp first_axis_only;
  first_axis_only.push_back(nd_sbp[0]);
  for (size_t i = 1; i < axes; ++i) first_axis_only.push_back(SbpParallel::Broadcast());
  const NdSbp every_axis = NdSbp::Repeat(nd_sbp[0], static_cast<int>(axes));
  return absl::StrCat("; give one SBP per mesh axis, e.g. ", first_axis_only.ToString(),
                      " (", nd_sbp[0].ToString(), " over mesh axis 0 only) or ",
                      every_axis.ToString(), " (over every axis)");
}

}  // namespace

absl::Status ValidateNdSbp(const NdSbp& nd_sbp, const Shape& shape,
                           absl::Span<const int64_t> hierarchy) {
  if (nd_sbp.size() != static_cast<int>(hierarchy.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nd_sbp ", nd_sbp.ToString(), " has ", nd_sbp.size(),
        " entries but the hierarchy [", absl::StrJoin(hierarchy, ","), "] has ",
        hierarchy.size(), " mesh axes", OneEntryHint(nd_sbp, hierarchy.size())));
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
    // (P(max), P) would be "the max over axis 0 of sums over axis 1": an
    // order-dependent value no collective produces and no rule makes.
    if (s.is_partial() && s.partial_kind() != *nd_sbp.partial_kind()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nd_sbp ", nd_sbp.ToString(), " mixes partial kinds (",
          PartialKindName(*nd_sbp.partial_kind()), " and ", PartialKindName(s.partial_kind()),
          "); one layout may hold partials of one reduction only"));
    }
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp
