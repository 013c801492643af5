// TensorSliceView: the exact index ranges every rank holds of a logical
// tensor laid out as `nd_sbp` over a placement.
//
// Example (shape [10,6], "cpu:0-3 [2,2]", (S(0), S(1))):
//   absl::StatusOr<std::vector<TensorSlice>> s =
//       AllRankSlices(Shape{10, 6}, nd_sbp, placement);
//   (*s)[3].ToString();   // "[5,10)x[3,6)"
//
// Rule (SPEC.md §1.5): walk the mesh axes in order; on axis i with S(a) the
// range of dim a held so far is cut into hierarchy[i] balanced parts (the
// first d % n parts get one extra element) and the rank takes part
// coord[i]. B and P keep the range (a P rank holds an addend of the full
// range). Ranges may be empty when an extent is smaller than its parts.
#ifndef ONEFLOW_SBP_VALUES_TENSOR_SLICE_VIEW_H_
#define ONEFLOW_SBP_VALUES_TENSOR_SLICE_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {

// Half-open [begin, end).
struct IndexRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  friend bool operator==(IndexRange a, IndexRange b) {
    return a.begin == b.begin && a.end == b.end;
  }
  friend bool operator!=(IndexRange a, IndexRange b) { return !(a == b); }
};

// Part `index` of `range` cut into `parts` balanced parts (OneFlow's
// BalancedSplitter). Requires parts >= 1 and 0 <= index < parts.
IndexRange BalancedPart(IndexRange range, int64_t parts, int64_t index);
// Appends BalancedPart(range, parts, i) for i = 0 .. parts-1 to `out`, with
// one division for all of them (hot loops of the boxing planner).
void AppendBalancedParts(IndexRange range, int64_t parts, std::vector<IndexRange>* out);

// One range per tensor dim.
class TensorSlice {
 public:
  TensorSlice() = default;
  // The full extent of every dim of `shape`.
  explicit TensorSlice(const Shape& shape);

  int rank() const { return static_cast<int>(ranges_.size()); }
  IndexRange range(int dim) const { return ranges_[dim]; }
  void set_range(int dim, IndexRange r) { ranges_[dim] = r; }
  absl::Span<const IndexRange> ranges() const { return ranges_; }
  // Product of range sizes; 0 if any range is empty. 1 for a scalar.
  // Inline: the boxing planner's overlap and tiling checks call it in
  // their innermost loops.
  int64_t elem_cnt() const {
    int64_t n = 1;
    for (IndexRange r : ranges_) n *= r.size() > 0 ? r.size() : 0;
    return n;
  }
  // Intersection, dim by dim (empty ranges where they do not overlap).
  // Requires equal ranks.
  TensorSlice Intersect(const TensorSlice& other) const;

  // "[0,5)x[3,6)"; "[]" for a scalar.
  std::string ToString() const;

  friend bool operator==(const TensorSlice& a, const TensorSlice& b) {
    return a.ranges_ == b.ranges_;
  }
  friend bool operator!=(const TensorSlice& a, const TensorSlice& b) {
    return !(a == b);
  }

 private:
  absl::InlinedVector<IndexRange, 6> ranges_;
};

// The slice held by `parallel_id`. Errors as ValidateNdSbp, plus a
// parallel_id outside the placement.
absl::StatusOr<TensorSlice> RankSlice(const Shape& shape, const NdSbp& nd_sbp,
                                      const Placement& placement,
                                      int64_t parallel_id);

// Slices of all ranks, indexed by parallel_id.
absl::StatusOr<std::vector<TensorSlice>> AllRankSlices(const Shape& shape,
                                                       const NdSbp& nd_sbp,
                                                       const Placement& placement);

// Unchecked core of RankSlice for hot paths that validated already:
// requires nd_sbp.size() == coord.size() == hierarchy.size() and valid axes.
TensorSlice SliceAt(const Shape& shape, const NdSbp& nd_sbp,
                    absl::Span<const int64_t> hierarchy,
                    absl::Span<const int64_t> coord);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_TENSOR_SLICE_VIEW_H_
