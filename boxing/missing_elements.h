// The most elements any rank of a placement lacks to hold its slice of a
// layout, given what it holds in another: the A* bound of the boxing
// planner (planner.h), computed without per-rank state.
//
//   MaxMissingElements(Shape{8, 6}, {2, 2}, Nd("(S(0),S(1))"), Nd("(S(0),B)"));
//   // 12: each rank holds 4x3 of the 4x6 it needs
//
// A rank's range of dim d is [0, D) cut by the axes that split d, in axis
// order (SliceAt), so its need and its holding in dim d depend only on the
// coordinates of the axes splitting d in either layout. Dims that share
// such an axis are coupled; groups of coupled dims (components) are not,
// so each component's coordinates are walked on their own (the distinct
// (needed, held) element pairs kept), and the components combined over
// those pairs. A mesh of 16,384 ranks whose layouts split different dims
// by different axes costs two walks of 16 and 1,024 coordinates, not
// 16,384 slices; a transpose of both axes still walks every rank once.
#ifndef BOXING_MISSING_ELEMENTS_H_
#define BOXING_MISSING_ELEMENTS_H_

#include <cstdint>

#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::boxing {

// max over ranks of |need slice| - |need slice ∩ held slice|. Requires
// valid layouts of `hierarchy` for `shape` (ValidateNdSbp).
int64_t MaxMissingElements(const Shape& shape, absl::Span<const int64_t> hierarchy,
                           const NdSbp& held, const NdSbp& need);

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_MISSING_ELEMENTS_H_
