// The sentence-encoder head on CUDA: masked_mean_pool, l2_normalize and
// their grads, templated on the storage type T (f32 f64 f16 bf16,
// DispatchFloating) with the CPU kernels' arithmetic
// (kernels/cpu/encoder_kernels.cc): sums and values in double, in the
// CPU's order, products rounded on their own (nvcc would otherwise fuse
// a * b + c into an fma the CPU build never uses), each output rounded to
// T once. So the results are the CPU's bit for bit. Registered as kernels
// in cuda_encoder_kernels.cc. Memory-bound and small next to the encoder's
// matmuls: a thread per output column (pool) or per vector (l2), no
// shared memory, deterministic.
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

// A thread per (batch row r, column c), grid-stride. Forward: y[r, c] =
// sum over kept s of x[r, s, c] / max(count, 1e-9); grad: dx[r, s, c] =
// kept ? dy[r, c] / max(count, 1e-9) : 0. Consecutive threads take
// consecutive columns, so every access of a warp is one coalesced run.
template <typename T, bool kGrad>
__global__ void MaskedMeanPoolKernel(int64_t b, int64_t s, int64_t h, const void* mask,
                                     int mask_dtype, int64_t mask_row0, const T* in, T* out) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < b * h;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / h, c = t % h;
    const int64_t m0 = (r + mask_row0) * s;
    double count = 0, acc = 0;
    for (int64_t j = 0; j < s; ++j) {
      if (!MaskNonzero(mask, mask_dtype, m0 + j)) continue;
      count += 1;
      if constexpr (!kGrad) acc += To<double>(in[(r * s + j) * h + c]);
    }
    const double div = fmax(count, 1e-9);
    if constexpr (!kGrad) {
      out[t] = To<T>(acc / div);
    } else {
      const double g = To<double>(in[t]) / div;
      for (int64_t j = 0; j < s; ++j) {
        out[(r * s + j) * h + c] = To<T>(MaskNonzero(mask, mask_dtype, m0 + j) ? g : 0.0);
      }
    }
  }
}

// A thread per vector (o, i) of x viewed as [outer, n, inner]; element k
// at (o * n + k) * inner + i. Forward: x / max(norm, eps); grad: norm >=
// eps: (dy - y * sum(dy * y)) / norm with y = x / norm; else dy / eps.
template <typename T, bool kGrad>
__global__ void L2NormalizeKernel(int64_t outer, int64_t n, int64_t inner, double eps,
                                  const T* x, const T* dy, T* out) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       t < outer * inner; t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = t / inner * n * inner + t % inner;
    double ss = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double v = To<double>(x[base + k * inner]);
      ss += MulRn(v, v);
    }
    const double norm = sqrt(ss);
    if constexpr (!kGrad) {
      const double div = fmax(norm, eps);
      for (int64_t k = 0; k < n; ++k) {
        out[base + k * inner] = To<T>(To<double>(x[base + k * inner]) / div);
      }
    } else if (norm >= eps) {
      double dot = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = base + k * inner;
        dot += MulRn(To<double>(dy[at]), To<double>(x[at]) / norm);
      }
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = base + k * inner;
        out[at] = To<T>((To<double>(dy[at]) - MulRn(To<double>(x[at]) / norm, dot)) / norm);
      }
    } else {
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = base + k * inner;
        out[at] = To<T>(To<double>(dy[at]) / eps);
      }
    }
  }
}

}  // namespace

std::string MaskedMeanPool(int dtype, bool grad, int64_t b, int64_t s, int64_t h,
                           const void* mask, int mask_dtype, int64_t mask_row0, const void* in,
                           void* out) {
  const char* name = grad ? "masked_mean_pool_grad" : "masked_mean_pool";
  if (b * h == 0) return "";
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const unsigned blocks = GridFor(b * h, kThreads);
    if (grad) {
      MaskedMeanPoolKernel<T, true><<<blocks, kThreads, 0, Stream()>>>(
          b, s, h, mask, mask_dtype, mask_row0, static_cast<const T*>(in), static_cast<T*>(out));
    } else {
      MaskedMeanPoolKernel<T, false><<<blocks, kThreads, 0, Stream()>>>(
          b, s, h, mask, mask_dtype, mask_row0, static_cast<const T*>(in), static_cast<T*>(out));
    }
    return LaunchError(name);
  });
}

std::string L2Normalize(int dtype, bool grad, int64_t outer, int64_t n, int64_t inner,
                        double eps, const void* x, const void* dy, void* out) {
  const char* name = grad ? "l2_normalize_grad" : "l2_normalize";
  if (outer * inner == 0) return "";
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const unsigned blocks = GridFor(outer * inner, kThreads);
    if (grad) {
      L2NormalizeKernel<T, true><<<blocks, kThreads, 0, Stream()>>>(
          outer, n, inner, eps, static_cast<const T*>(x), static_cast<const T*>(dy),
          static_cast<T*>(out));
    } else {
      L2NormalizeKernel<T, false><<<blocks, kThreads, 0, Stream()>>>(
          outer, n, inner, eps, static_cast<const T*>(x), nullptr, static_cast<T*>(out));
    }
    return LaunchError(name);
  });
}

}  // namespace oneflow_sbp::kernels::cuda
