// The operand of the scalar ops (scalar_add, scalar_mul, scalar_div,
// scalar_floordiv, scalar_fmod, scalar_pow), checked once for the CPU
// kernels (elementwise_kernels.cc) and the CUDA glue
// (kernels/cuda/cuda_support_kernels.cc): both devices take the same
// operand and refuse the same calls with the same messages.
#ifndef KERNELS_COMMON_SCALAR_ARGS_H_
#define KERNELS_COMMON_SCALAR_ARGS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

enum class ScalarOp { kAdd, kMul, kDiv, kFloorDiv, kFmod, kPow };

// OneFlow's order: the int operand when has_int_operand is set, else the
// float one.
struct ScalarOperand {
  bool has_int = false;
  int64_t int_value = 0;
  double float_value = 0;

  // The operand in compute type C.
  template <typename C>
  C As() const {
    return has_int ? static_cast<C>(int_value) : static_cast<C>(float_value);
  }
};

// The operand of `op` on input 0. kInvalidArgument: neither operand set;
// for an integer input, an int operand that does not fit its dtype, 0 for
// floordiv / fmod, a negative pow exponent. kUnimplemented: a float
// operand on an integer input (the result would need a floating dtype).
absl::StatusOr<ScalarOperand> CheckScalarOperand(const KernelContext& ctx, ScalarOp op);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_SCALAR_ARGS_H_
