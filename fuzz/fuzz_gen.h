// Structured values drawn from fuzzer bytes: shapes, dtypes, placements of
// up to 4 mesh axes, and layouts that fit them. Shared by the Infer,
// planner and executor targets so that each spends its bytes on the thing
// it tests, not on getting past the parsers.
#ifndef FUZZ_FUZZ_GEN_H_
#define FUZZ_FUZZ_GEN_H_

#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::fuzz {

// Rank 0..max_rank, extents 1..max_dim (mostly small, so splits are uneven
// and sometimes smaller than their parts).
Shape GenShape(FuzzInput& in, int max_rank = 4, int64_t max_dim = 9);
DataType GenDataType(FuzzInput& in);
// 1..max_axes axes of extent 1..max_extent (at most max_ranks ranks in
// all), on consecutive device ranks from a small offset, sometimes listed
// in a permuted order.
Placement GenPlacement(FuzzInput& in, int max_axes = 4, int max_extent = 4,
                       int64_t max_ranks = 16);
// One entry per axis of `placement`: B, P or S(a) with a < tensor_rank.
// With allow_partial false, no P.
NdSbp GenNdSbp(FuzzInput& in, const Placement& placement, int tensor_rank,
               bool allow_partial = true);

}  // namespace oneflow_sbp::fuzz

#endif  // FUZZ_FUZZ_GEN_H_
