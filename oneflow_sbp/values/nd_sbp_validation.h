// Whether an NdSbp can describe a tensor of a given shape on a given mesh.
//
//   ValidateNdSbp(*NdSbp::Parse("(S(0),B)"), Shape{8, 4}, {2, 2});   // OK
//   ValidateNdSbp(*NdSbp::Parse("(S(2),B)"), Shape{8, 4}, {2, 2});
//   // kInvalidArgument "nd_sbp (S(2), B): S(2) on mesh axis 0 splits dim 2
//   //                   but shape [8,4] has rank 2"
#ifndef ONEFLOW_SBP_VALUES_ND_SBP_VALIDATION_H_
#define ONEFLOW_SBP_VALUES_ND_SBP_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {

// One entry per mesh axis, no unset entry, every split axis < rank, and
// partials of one kind only (no (P(max), P)). The
// message names the nd_sbp, the shape and the offending entry. Extents
// smaller than their parts are legal (shards may be empty).
absl::Status ValidateNdSbp(const NdSbp& nd_sbp, const Shape& shape,
                           absl::Span<const int64_t> hierarchy);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_ND_SBP_VALIDATION_H_
