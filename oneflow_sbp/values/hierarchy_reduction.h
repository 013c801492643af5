// Hierarchy reduction: merging mesh axes that carry the same SBP, so that
// e.g. (S(0), S(0)) on [2,2] becomes S(0) on [4] (SPEC.md §4.3, OneFlow's
// NdSbpsDimReduce / InOutParallelDimReduce). A pure function of the
// hierarchy, the nd_sbps and the tensor shape.
//
// Example:
//   ReducedNdSbps r = ReduceNdSbps({2, 3}, {P_P, B_B}, Shape{12, 10});
//   // r.hierarchy == {6}, r.nd_sbps == {(P), (B)}
//
// Rules: size-1 mesh axes are dropped. A mesh axis merges into the
// previous reduced axis only if, for every nd_sbp, it carries the same SBP
// as that reduced axis, and for splits the nested split equals the flat
// one (CanMergeSplit on every extent the split dim may have there).
#ifndef ONEFLOW_SBP_VALUES_HIERARCHY_REDUCTION_H_
#define ONEFLOW_SBP_VALUES_HIERARCHY_REDUCTION_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {

using Hierarchy = absl::InlinedVector<int64_t, NdSbp::kMaxAxes>;

// True iff splitting extent v over a·b ranks nested ([a,b]:(S,S)) gives
// every rank the same range as the flat split over m = a·b ranks:
// r = v mod m satisfies r <= 1 or r == m - 1.
bool CanMergeSplit(int64_t v, int64_t m);

struct ReducedNdSbps {
  Hierarchy hierarchy;
  absl::InlinedVector<NdSbp, 2> nd_sbps;
};

// Joint reduction of nd_sbps of one tensor of `shape` over `hierarchy`.
// Requires every nd_sbp to have hierarchy.size() entries with split axes
// < shape.rank() (validated by callers).
ReducedNdSbps ReduceNdSbps(absl::Span<const int64_t> hierarchy,
                           absl::Span<const NdSbp> nd_sbps, const Shape& shape);

struct InOutReduced {
  Hierarchy in_hierarchy;
  Hierarchy out_hierarchy;
  NdSbp in;
  NdSbp out;
};

// Reduces a producer/consumer pair. Equal hierarchies reduce jointly;
// otherwise each side alone, then a 1-axis side facing a 2-axis side of the
// same device count is lifted to (s, s) when s is not a split or the split
// merges over all devices.
InOutReduced InOutReduce(absl::Span<const int64_t> in_hierarchy,
                         absl::Span<const int64_t> out_hierarchy, const NdSbp& in,
                         const NdSbp& out, const Shape& shape);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_HIERARCHY_REDUCTION_H_
