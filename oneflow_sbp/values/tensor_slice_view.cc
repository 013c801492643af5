#include "oneflow_sbp/values/tensor_slice_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

IndexRange BalancedPart(IndexRange range, int64_t parts, int64_t index) {
  OFS_CHECK(parts >= 1 && index >= 0 && index < parts) << parts << " " << index;
  const int64_t d = std::max<int64_t>(range.size(), 0);
  const int64_t q = d / parts;
  const int64_t r = d % parts;
  const int64_t begin = range.begin + index * q + std::min(index, r);
  return IndexRange{begin, begin + q + (index < r ? 1 : 0)};
}

void AppendBalancedParts(IndexRange range, int64_t parts, std::vector<IndexRange>* out) {
  OFS_CHECK(parts >= 1) << parts;
  const int64_t d = std::max<int64_t>(range.size(), 0);
  const int64_t q = d / parts;
  const int64_t r = d % parts;
  int64_t begin = range.begin;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t len = q + (i < r ? 1 : 0);
    out->push_back(IndexRange{begin, begin + len});
    begin += len;
  }
}

TensorSlice::TensorSlice(const Shape& shape) {
  for (int64_t d : shape.dims()) ranges_.push_back(IndexRange{0, d});
}

TensorSlice TensorSlice::Intersect(const TensorSlice& other) const {
  OFS_CHECK(rank() == other.rank()) << ToString() << " vs " << other.ToString();
  TensorSlice out = *this;
  for (int i = 0; i < rank(); ++i) {
    const int64_t b = std::max(ranges_[i].begin, other.ranges_[i].begin);
    const int64_t e = std::min(ranges_[i].end, other.ranges_[i].end);
    out.ranges_[i] = IndexRange{b, std::max(b, e)};
  }
  return out;
}

std::string TensorSlice::ToString() const {
  if (ranges_.empty()) return "[]";
  return absl::StrJoin(ranges_, "x", [](std::string* out, IndexRange r) {
    absl::StrAppend(out, "[", r.begin, ",", r.end, ")");
  });
}

TensorSlice SliceAt(const Shape& shape, const NdSbp& nd_sbp,
                    absl::Span<const int64_t> hierarchy,
                    absl::Span<const int64_t> coord) {
  TensorSlice slice(shape);
  for (size_t i = 0; i < hierarchy.size(); ++i) {
    const SbpParallel s = nd_sbp[static_cast<int>(i)];
    if (!s.is_split()) continue;
    const int dim = s.split_axis();
    slice.set_range(dim, BalancedPart(slice.range(dim), hierarchy[i], coord[i]));
  }
  return slice;
}

absl::StatusOr<TensorSlice> RankSlice(const Shape& shape, const NdSbp& nd_sbp,
                                      const Placement& placement,
                                      int64_t parallel_id) {
  absl::Status valid = ValidateNdSbp(nd_sbp, shape, placement.hierarchy());
  OFS_RETURN_IF_ERROR(valid);
  if (parallel_id < 0 || parallel_id >= placement.parallel_num()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallel_id ", parallel_id, " is outside placement ",
        placement.ToString(), " (", placement.parallel_num(),
        placement.parallel_num() == 1 ? " rank)" : " ranks)"));
  }
  const MeshCoord coord = placement.CoordinateOf(parallel_id);
  return SliceAt(shape, nd_sbp, placement.hierarchy(), coord);
}

absl::StatusOr<std::vector<TensorSlice>> AllRankSlices(const Shape& shape,
                                                       const NdSbp& nd_sbp,
                                                       const Placement& placement) {
  absl::Status valid = ValidateNdSbp(nd_sbp, shape, placement.hierarchy());
  OFS_RETURN_IF_ERROR(valid);
  std::vector<TensorSlice> slices;
  slices.reserve(placement.parallel_num());
  for (int64_t id = 0; id < placement.parallel_num(); ++id) {
    slices.push_back(
        SliceAt(shape, nd_sbp, placement.hierarchy(), placement.CoordinateOf(id)));
  }
  return slices;
}

}  // namespace oneflow_sbp
