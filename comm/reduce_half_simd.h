// Sum, max and min of f16 and bf16 buffers with AVX2 (and F16C for f16),
// chosen at run time: the portable loops of reduce_op.cc convert halves
// element by element in integer arithmetic, which left an f16 reduction
// at 0.27 GB/s against 4.7 for f32 (docs/PERFORMANCE.md). Used by
// ReduceTo; not an API of its own.
//
// The results are reduce_op.cc's bits exactly: halves widen to f32
// exactly, the op runs in f32 (NaN on either side wins, the left one if
// both are NaN), and the f32 result rounds to nearest even, every NaN
// becoming the canonical quiet NaN with its sign (f16 0x7e00, bf16 0x7fc0)
// as the portable Store does. //tests/runtime:reduce_op_test compares the two.
#ifndef COMM_REDUCE_HALF_SIMD_H_
#define COMM_REDUCE_HALF_SIMD_H_

#include <cstdint>

#include "comm/reduce_op.h"
#include "oneflow_sbp/values/data_type.h"

namespace oneflow_sbp::comm {

// out[i] = op(a[i], b[i]) for i < count, as ReduceTo (out may be a or b;
// any alignment). Returns false, touching nothing, for other dtypes or
// where the CPU lacks the instructions.
bool ReduceHalfSimd(ReduceOp op, DataType dtype, const void* a, const void* b, void* out,
                    int64_t count);

// Tests: whether ReduceHalfSimd runs on this CPU (for f16 and bf16), and a
// switch that turns it off so the portable loops can be tested on a CPU
// that has it (process-wide; not for concurrent use with reductions).
bool HasReduceHalfSimd();
void SetReduceHalfSimdEnabledForTesting(bool enabled);

}  // namespace oneflow_sbp::comm

#endif  // COMM_REDUCE_HALF_SIMD_H_
