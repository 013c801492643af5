// Reductions and the softmax family on CUDA: one block per output element
// (reduce) or per row (softmax), with block-wide sums and maxima.
// Accumulation is in double for reduce (as the CPU kernels) and in the
// compute type for softmax (float for halves).
#include <cmath>

#include "ops/kernels/cuda/cuda_common.cuh"
#include "ops/kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

struct ReduceIndex {
  int out_rank;
  int red_rank;
  int64_t out_dims[kMaxRank];
  int64_t out_stride[kMaxRank];
  int64_t red_dims[kMaxRank];
  int64_t red_stride[kMaxRank];
};

__device__ __forceinline__ int64_t Offset(int rank, const int64_t* dims, const int64_t* stride,
                                          int64_t flat) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (flat % dims[d]) * stride[d];
    flat /= dims[d];
  }
  return off;
}

// Max and min propagate NaN, as on the CPU.
__device__ __forceinline__ double Combine(ReduceCode op, double acc, double v) {
  switch (op) {
    case ReduceCode::kMax: return (isnan(acc) || isnan(v)) ? NAN : fmax(acc, v);
    case ReduceCode::kMin: return (isnan(acc) || isnan(v)) ? NAN : fmin(acc, v);
    default: return acc + v;
  }
}

template <typename T>
__global__ void ReduceKernel(ReduceCode op, ReduceIndex ri, int64_t red_n, double divisor,
                             const T* x, T* y) {
  __shared__ double partial[kThreads];
  const int64_t j = blockIdx.x;
  const int64_t base = Offset(ri.out_rank, ri.out_dims, ri.out_stride, j);
  const bool extremum = op == ReduceCode::kMax || op == ReduceCode::kMin;
  double acc = op == ReduceCode::kMax ? -INFINITY : op == ReduceCode::kMin ? INFINITY : 0.0;
  for (int64_t r = threadIdx.x; r < red_n; r += blockDim.x) {
    const double v = To<double>(x[base + Offset(ri.red_rank, ri.red_dims, ri.red_stride, r)]);
    acc = Combine(op, acc, v);
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      partial[threadIdx.x] = Combine(op, partial[threadIdx.x], partial[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double r = partial[0];
    if (op == ReduceCode::kMean) r /= divisor;
    (void)extremum;
    y[j] = To<T>(r);
  }
}

template <typename T>
__global__ void SoftmaxKernel(bool log_out, int64_t cols, const T* x, T* y) {
  using C = ComputeT<T>;
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  C m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = max(m, To<C>(row[c]));
  m = BlockMax(m);
  C s = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += exp(To<C>(row[c]) - m);
  s = BlockSum(s);
  const C log_s = log(s);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const C z = To<C>(row[c]) - m;
    out[c] = To<T>(log_out ? z - log_s : exp(z) / s);
  }
}

template <typename T>
__global__ void SoftmaxGradKernel(bool log_in, int64_t cols, const T* saved, const T* dy,
                                  T* dx) {
  using C = ComputeT<T>;
  const int64_t off = blockIdx.x * cols;
  C s = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    s += log_in ? To<C>(dy[off + c]) : To<C>(dy[off + c]) * To<C>(saved[off + c]);
  }
  s = BlockSum(s);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const C p = To<C>(saved[off + c]);
    const C g = To<C>(dy[off + c]);
    dx[off + c] = To<T>(log_in ? g - exp(p) * s : p * (g - s));
  }
}

}  // namespace

std::string Reduce(ReduceCode op, int dtype, int out_rank, const int64_t* out_dims,
                   const int64_t* out_stride, int red_rank, const int64_t* red_dims,
                   const int64_t* red_stride, double divisor, const void* x, void* y) {
  if (out_rank > kMaxRank || red_rank > kMaxRank) return "reduce: rank above 8";
  ReduceIndex ri{};
  ri.out_rank = out_rank;
  ri.red_rank = red_rank;
  int64_t out_n = 1, red_n = 1;
  for (int d = 0; d < out_rank; ++d) {
    ri.out_dims[d] = out_dims[d];
    ri.out_stride[d] = out_stride[d];
    out_n *= out_dims[d];
  }
  for (int d = 0; d < red_rank; ++d) {
    ri.red_dims[d] = red_dims[d];
    ri.red_stride[d] = red_stride[d];
    red_n *= red_dims[d];
  }
  if (out_n == 0) return "";
  if (out_n > 0x7fffffff) return "reduce: more than 2^31 outputs";
  return DispatchFloating("reduce", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    ReduceKernel<T><<<static_cast<unsigned>(out_n), kThreads, 0, Stream()>>>(
        op, ri, red_n, divisor, static_cast<const T*>(x), static_cast<T*>(y));
    return LaunchError("reduce");
  });
}

std::string Softmax(int dtype, bool log, int64_t rows, int64_t cols, const void* x, void* y) {
  if (rows == 0 || cols == 0) return "";
  if (rows > 0x7fffffff) return "softmax: more than 2^31 rows";
  return DispatchFloating("softmax", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    SoftmaxKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, Stream()>>>(
        log, cols, static_cast<const T*>(x), static_cast<T*>(y));
    return LaunchError("softmax");
  });
}

std::string SoftmaxGrad(int dtype, bool log, int64_t rows, int64_t cols, const void* saved,
                        const void* dy, void* dx) {
  if (rows == 0 || cols == 0) return "";
  if (rows > 0x7fffffff) return "softmax_grad: more than 2^31 rows";
  return DispatchFloating("softmax_grad", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    SoftmaxGradKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, Stream()>>>(
        log, cols, static_cast<const T*>(saved), static_cast<const T*>(dy), static_cast<T*>(dx));
    return LaunchError("softmax_grad");
  });
}

}  // namespace oneflow_sbp::kernels::cuda
