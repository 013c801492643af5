// Launchers of scalar_fill.cu (same conventions as cuda_launch.h: device
// pointers, the calling thread's stream, "" on success or an error string
// naming the kernel). Scalar and ActivationGrad take f32, f64, f16 and
// bf16, ScalarInt i32 and i64 (halves compute in float); Fill takes every dtype.
#ifndef KERNELS_CUDA_SCALAR_FILL_H_
#define KERNELS_CUDA_SCALAR_FILL_H_

#include <cstdint>
#include <string>

namespace oneflow_sbp::kernels::cuda {

enum class ScalarCode : int { kAdd, kMul, kDiv, kPow, kFloorDiv, kFmod };
// y[i] = op(x[i], operand) with the operand converted to the compute type
// (float for f32 f16 bf16: the glue passes a float's value, so that cast
// is exact).
std::string Scalar(ScalarCode op, int dtype, const void* x, void* y, int64_t n, double operand);
// The same on i32 and i64 tensors (no kDiv): integers wrap, kPow needs
// operand >= 0 and kFloorDiv / kFmod operand != 0 (the glue checks them,
// scalar_args.h).
std::string ScalarInt(ScalarCode op, int dtype, const void* x, void* y, int64_t n,
                      int64_t operand);

// relu_grad (saved = y), silu_grad and gelu_grad (saved = x):
// dx[i] = dy[i] * f'(saved[i]); relu_grad also takes i32 and i64.
enum class ActivationGradCode : int { kRelu, kSilu, kGelu };
std::string ActivationGrad(ActivationGradCode op, int dtype, const void* saved, const void* dy,
                           void* dx, int64_t n);

// y[i] = the element of elem_bytes (1, 2, 4, 8) bytes whose bytes are the
// low ones of `bits` (the glue converts the value on the host with the
// CPU's ConvertElement: saturation, NaN -> 0, halves through float).
std::string Fill(int elem_bytes, void* y, int64_t n, uint64_t bits);

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_SCALAR_FILL_H_
