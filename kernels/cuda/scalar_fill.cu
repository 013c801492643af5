// Scalar arithmetic, fill and the activation gradients on CUDA: one
// grid-stride pass each, computing in the CPU kernels' compute type
// (float for halves) with the CPU kernels' formulas
// (kernels/cpu/elementwise_kernels.cc, softmax_kernels.cc), so the
// results differ from the CPU's only by the device's math library.
#include <cmath>
#include <type_traits>

#include "kernels/common/int_arith.h"

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/scalar_fill.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// int_arith.h's host/device helpers: integers wrap, floor division and
// fmod with the CPU's sign rules (the glue refuses an integer 0 divisor).
template <typename C>
__device__ __forceinline__ C ApplyScalar(ScalarCode op, C x, C b) {
  switch (op) {
    case ScalarCode::kAdd: return WrapAdd(x, b);
    case ScalarCode::kMul: return WrapMul(x, b);
    case ScalarCode::kDiv: return x / b;
    case ScalarCode::kFloorDiv: return FloorDiv(x, b);
    case ScalarCode::kFmod: return Fmod(x, b);
    case ScalarCode::kPow:
      if constexpr (std::is_integral_v<C>) {
        return IntPow(x, b);
      } else {
        return pow(x, b);
      }
  }
  return x;
}

template <typename T, typename B>
__global__ void ScalarKernel(ScalarCode op, const T* x, T* y, int64_t n, B operand) {
  using C = ComputeT<T>;
  const C b = static_cast<C>(operand);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = To<T>(ApplyScalar(op, To<C>(x[i]), b));
  }
}

// Products rounded on their own: nvcc would fuse a * b + c into one fma,
// which the CPU build (x86-64, no FMA) never does.
__device__ __forceinline__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

// softmax_kernels.cc's formulas; integers (relu_grad only) select.
template <typename C>
__device__ __forceinline__ C ApplyGrad(ActivationGradCode op, C s, C dy) {
  if constexpr (std::is_integral_v<C>) {
    return s > C(0) ? dy : C(0);
  } else {
    switch (op) {
      case ActivationGradCode::kRelu: return s > C(0) ? dy : C(0);
      case ActivationGradCode::kSilu: {
        const C sig = C(1) / (C(1) + exp(-s));
        return dy * sig * (C(1) + MulRn(s, C(1) - sig));
      }
      case ActivationGradCode::kGelu: {
        const C cdf = C(0.5) * (C(1) + erf(s * C(M_SQRT1_2)));
        const C pdf = exp(C(-0.5) * s * s) * C(0.3989422804014327);  // 1 / sqrt(2 pi)
        return dy * (cdf + MulRn(s, pdf));
      }
    }
    return dy;
  }
}

template <typename T>
__global__ void ActivationGradKernel(ActivationGradCode op, const T* saved, const T* dy, T* dx,
                                     int64_t n) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    dx[i] = To<T>(ApplyGrad(op, To<C>(saved[i]), To<C>(dy[i])));
  }
}

template <typename T>
__global__ void FillKernel(T* y, int64_t n, T v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = v;
  }
}

template <typename T>
std::string LaunchFill(void* y, int64_t n, T v) {
  FillKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(static_cast<T*>(y), n, v);
  return LaunchError("Fill");
}

}  // namespace

std::string Scalar(ScalarCode op, int dtype, const void* x, void* y, int64_t n, double operand) {
  if (n == 0) return "";
  return DispatchFloating("Scalar", dtype, [&](auto tag) {
    using T = decltype(tag);
    ScalarKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
        op, static_cast<const T*>(x), static_cast<T*>(y), n, operand);
    return LaunchError("Scalar");
  });
}

std::string ScalarInt(ScalarCode op, int dtype, const void* x, void* y, int64_t n,
                      int64_t operand) {
  if (n == 0) return "";
  auto launch = [&](auto tag) -> std::string {
    using T = decltype(tag);
    if (op == ScalarCode::kDiv) return "ScalarInt: no integer scalar_div";
    ScalarKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
        op, static_cast<const T*>(x), static_cast<T*>(y), n, operand);
    return LaunchError("ScalarInt");
  };
  switch (dtype) {
    case DtypeCode::kI32: return launch(int32_t{});
    case DtypeCode::kI64: return launch(int64_t{});
    default: return "ScalarInt: unsupported dtype " + std::to_string(dtype);
  }
}

std::string ActivationGrad(ActivationGradCode op, int dtype, const void* saved, const void* dy,
                           void* dx, int64_t n) {
  if (n == 0) return "";
  auto launch = [&](auto tag) -> std::string {
    using T = decltype(tag);
    ActivationGradKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
        op, static_cast<const T*>(saved), static_cast<const T*>(dy), static_cast<T*>(dx), n);
    return LaunchError("ActivationGrad");
  };
  if (op == ActivationGradCode::kRelu && dtype == DtypeCode::kI32) return launch(int32_t{});
  if (op == ActivationGradCode::kRelu && dtype == DtypeCode::kI64) return launch(int64_t{});
  return DispatchFloating("ActivationGrad", dtype, launch);
}

std::string Fill(int elem_bytes, void* y, int64_t n, uint64_t bits) {
  if (n == 0) return "";
  return DispatchBytes("Fill", elem_bytes, [&](auto tag) {
    using U = decltype(tag);
    return LaunchFill(y, n, static_cast<U>(bits));  // the low elem_bytes bytes
  });
}

}  // namespace oneflow_sbp::kernels::cuda
