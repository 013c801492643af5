#include "ops/slice_params.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

std::string Ints(absl::Span<const int64_t> v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

}  // namespace

absl::StatusOr<std::vector<SliceDim>> ResolveSliceDims(absl::Span<const int64_t> start,
                                                       absl::Span<const int64_t> stop,
                                                       absl::Span<const int64_t> step,
                                                       const TensorDesc& full,
                                                       absl::string_view bn) {
  const int rank = full.shape.rank();
  for (const auto* v : {&start, &stop, &step}) {
    if (static_cast<int>(v->size()) != rank) {
      const char* name = v == &start ? "start" : v == &stop ? "stop" : "step";
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute ", name, " ", Ints(*v), " has ", v->size(), " entries but ", bn, " ",
          full.ToString(), " has rank ", rank));
    }
  }
  std::vector<SliceDim> out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = full.shape.dim(i);
    if (step[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute step ", Ints(step), " has ", step[i], " on dim ", i,
          "; steps must be > 0"));
    }
    auto norm = [d](int64_t v) {
      if (v < 0) v = v < -d ? 0 : v + d;
      return v > d ? d : v;
    };
    out[i] = SliceDim{norm(start[i]), norm(stop[i]), step[i]};
    if (out[i].start >= out[i].stop) {
      return absl::InvalidArgumentError(absl::StrCat(
          "slice ", start[i], ":", stop[i], ":", step[i], " selects nothing on dim ", i,
          " of ", bn, " ", full.ToString(), " (start ", out[i].start, " >= stop ",
          out[i].stop, " after normalisation); zero-size tensors are not supported"));
    }
  }
  return out;
}

std::vector<int64_t> SlicedDims(const std::vector<SliceDim>& s) {
  std::vector<int64_t> dims;
  for (const SliceDim& d : s) dims.push_back(d.size());
  return dims;
}

absl::StatusOr<NarrowRange> ResolveNarrowRange(int64_t dim, int64_t start, int64_t length,
                                               const TensorDesc& full, absl::string_view bn) {
  OFS_RETURN_IF_ERROR(CheckRank(full, bn, 1, /*at_least=*/true));
  NarrowRange r;
  OFS_ASSIGN_OR_RETURN(r.dim, NormalizeAxis(dim, full.shape.rank(), "attribute dim"));
  const int64_t d = full.shape.dim(r.dim);
  r.length = length;
  if (start < -d || start >= d) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute start ", start, " is out of range for dim ", r.dim, " of ", bn, " ",
        full.ToString(), " (valid: ", -d, " .. ", d - 1, ")"));
  }
  r.start = start < 0 ? start + d : start;
  if (r.length < 1 || r.length > d - r.start) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute length ", r.length, " is out of range for start ", r.start, " on dim ",
        r.dim, " of ", bn, " ", full.ToString(), " (valid: 1 .. ", d - r.start, ")"));
  }
  return r;
}

absl::StatusOr<std::vector<int>> ResolvePermutation(const std::vector<int64_t>& perm, int rank) {
  if (static_cast<int>(perm.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute perm [", absl::StrJoin(perm, ","), "] has ", perm.size(),
        " entries for an input of rank ", rank));
  }
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    OFS_ASSIGN_OR_RETURN(int a, NormalizeAxis(p, rank, "attribute perm entry"));
    if (seen[a]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute perm [", absl::StrJoin(perm, ","), "] is not a permutation"));
    }
    seen[a] = true;
    out.push_back(a);
  }
  return out;
}

}  // namespace oneflow_sbp::ops
