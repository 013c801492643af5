// Element-wise reductions that the collectives apply when they combine
// addends: sum, max and min over every DataType.
//
// Example:
//   float acc[3] = {1, 2, 3};
//   const float in[3] = {10, 20, 30};
//   ReduceInto(ReduceOp::kSum, DataType::kFloat32, in, acc, 3);  // acc = {11, 22, 33}
//
// Semantics per type, the same on every backend and every run:
//   - integers (i8, i32, i64, u8) wrap on overflow (two's complement), so a
//     sum never has undefined behaviour;
//   - bool: sum and max are logical or, min is logical and;
//   - f32, f64: IEEE; max and min propagate NaN (a NaN on either side wins);
//   - f16, bf16: each step is computed in f32 and rounded back to the
//     16-bit type (Eigen::half / Eigen::bfloat16), so a long sum rounds once
//     per addend, as a 16-bit accumulator would.
#ifndef RUNTIME_COMM_REDUCE_OP_H_
#define RUNTIME_COMM_REDUCE_OP_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "oneflow_sbp/data_type.h"

namespace oneflow_sbp::comm {

enum class ReduceOp : uint8_t { kSum, kMax, kMin };

// "sum", "max", "min".
absl::string_view ReduceOpName(ReduceOp op);

// inout[i] = op(inout[i], in[i]) for 0 <= i < count. `in` and `inout` hold
// `count` elements of `dtype` each and either do not overlap or are the
// same pointer. count <= 0 does nothing. Callers validate arguments; this
// is the inner loop.
void ReduceInto(ReduceOp op, DataType dtype, const void* in, void* inout, int64_t count);

}  // namespace oneflow_sbp::comm

#endif  // RUNTIME_COMM_REDUCE_OP_H_
