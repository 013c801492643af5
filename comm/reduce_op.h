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
//   - f32, f64: IEEE; max and min propagate NaN (a NaN on either side wins,
//     the left one when both are); a sum of two NaNs is a NaN whose sign
//     and payload IEEE leaves open (the compiler may swap the operands);
//   - f16, bf16: each step is computed in f32 and rounded back to the
//     16-bit type (Eigen::half / Eigen::bfloat16), so a long sum rounds once
//     per addend, as a 16-bit accumulator would. Conversions round to
//     nearest even; a NaN becomes the quiet NaN of its sign (0x7e00 /
//     0xfe00 for f16, 0x7fc0 / 0xffc0 for bf16), as Eigen's do.
//
// Speed: the loops run over contiguous blocks of a fixed element count with
// restrict pointers and no per-element branch, so the compiler vectorises
// them for whatever the build targets (SSE2 on plain x86-64); the op and
// dtype are dispatched once per call. Buffers not aligned to their element
// type, and the in == inout == out case, take a scalar loop with the same
// results. See docs/PERFORMANCE.md, "Reductions at memory speed".
#ifndef COMM_REDUCE_OP_H_
#define COMM_REDUCE_OP_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "oneflow_sbp/values/data_type.h"

namespace oneflow_sbp::comm {

enum class ReduceOp : uint8_t { kSum, kMax, kMin };

// "sum", "max", "min".
absl::string_view ReduceOpName(ReduceOp op);

// inout[i] = op(inout[i], in[i]) for 0 <= i < count. `in` and `inout` hold
// `count` elements of `dtype` each and either do not overlap or are the
// same pointer. count <= 0 does nothing. Callers validate arguments; this
// is the inner loop.
void ReduceInto(ReduceOp op, DataType dtype, const void* in, void* inout, int64_t count);

// out[i] = op(a[i], b[i]) for 0 <= i < count: the receive side of a ring
// step, which combines a peer's partial `a` with this rank's addend `b`
// without first copying `a` anywhere. `out` may be the same pointer as `a`
// or `b` (or both); otherwise the three do not overlap. The operand order
// is that of ReduceInto(op, dtype, b, a, count) with `a` as inout, so the
// two give bit-identical results (NaN payloads included).
void ReduceTo(ReduceOp op, DataType dtype, const void* a, const void* b, void* out,
              int64_t count);

}  // namespace oneflow_sbp::comm

#endif  // COMM_REDUCE_OP_H_
