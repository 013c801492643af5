// Reductions and the softmax family on CUDA: one block per output element
// (reduce) or per row (softmax), grid-striding, with block-wide sums and
// maxima. Accumulation is in double for floating reduce (int64 for
// integers) and for softmax, as the CPU kernels. The block's tree order
// of summation differs from the CPU's sequential one: f64 sums may differ
// in the last bits; f32 and halves, summed in double, almost never.
#include <cmath>
#include <type_traits>

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

// The accumulator: double for floating types, int64 for integers (with
// two's-complement wrap-around), as the CPU kernels (reduce_kernels.cc).
template <typename T> struct Accum { using type = double; };
template <> struct Accum<int32_t> { using type = int64_t; };
template <> struct Accum<int64_t> { using type = int64_t; };

template <ReduceCode kOp, typename A>
__device__ __forceinline__ A Identity() {
  if constexpr (kOp == ReduceCode::kProd) return A(1);
  if constexpr (std::is_integral<A>::value) {
    if constexpr (kOp == ReduceCode::kMax) return INT64_MIN;
    if constexpr (kOp == ReduceCode::kMin) return INT64_MAX;
  } else {
    if constexpr (kOp == ReduceCode::kMax) return -INFINITY;
    if constexpr (kOp == ReduceCode::kMin) return INFINITY;
  }
  return A(0);
}

// acc (+) v, chosen at compile time. Max and min propagate NaN, nansum
// skips it, integer sums and products wrap, all as on the CPU.
template <ReduceCode kOp, typename A>
__device__ __forceinline__ A Combine(A acc, A v) {
  if constexpr (std::is_integral<A>::value) {
    using U = unsigned long long;  // NOLINT: wrap-around arithmetic
    if constexpr (kOp == ReduceCode::kProd) return A(U(acc) * U(v));
    if constexpr (kOp == ReduceCode::kMax) return acc < v ? v : acc;
    if constexpr (kOp == ReduceCode::kMin) return v < acc ? v : acc;
    return A(U(acc) + U(v));
  } else {
    // The CPU's expressions: the NaN operand itself (its sign and payload:
    // x86's default NaN of inf - inf is negative), and between equal
    // values the accumulator (so max(-0, +0) is -0, not fmax's either).
    if constexpr (kOp == ReduceCode::kMax || kOp == ReduceCode::kMin) {
      if (isnan(acc) || isnan(v)) return isnan(acc) ? acc : v;
      return (kOp == ReduceCode::kMax) == (acc < v) ? v : acc;
    }
    if constexpr (kOp == ReduceCode::kProd) return acc * v;
    if constexpr (kOp == ReduceCode::kNanSum) return isnan(v) ? acc : acc + v;
    return acc + v;
  }
}

// Output elements grid-stride over the blocks (the grid is capped at
// GridFor's 65536), each reduced by the whole block.
template <ReduceCode kOp, typename T>
__global__ void ReduceKernel(ReduceIndex ri, int64_t out_n, int64_t red_n, double divisor,
                             const T* x, T* y) {
  using A = typename Accum<T>::type;
  __shared__ A partial[kThreads];
  for (int64_t j = blockIdx.x; j < out_n; j += gridDim.x) {
    const int64_t base = Offset(ri.out_rank, ri.out_dims, ri.out_stride, j);
    A acc = Identity<kOp, A>();
    for (int64_t r = threadIdx.x; r < red_n; r += blockDim.x) {
      const A v = To<A>(x[base + Offset(ri.red_rank, ri.red_dims, ri.red_stride, r)]);
      acc = Combine<kOp>(acc, v);
    }
    __syncthreads();  // the previous output's tree is done with partial
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        partial[threadIdx.x] = Combine<kOp>(partial[threadIdx.x], partial[threadIdx.x + s]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      A r = partial[0];
      // Divides only by a positive count, as the CPU kernel (shapes have
      // no zero extents today, so the count is >= 1).
      if constexpr (kOp == ReduceCode::kMean) {
        if (divisor > 0) r /= divisor;
      }
      y[j] = To<T>(r);
    }
  }
}

template <ReduceCode kOp, typename T>
std::string LaunchReduce(const ReduceIndex& ri, int64_t out_n, int64_t red_n, double divisor,
                         const void* x, void* y) {
  ReduceKernel<kOp, T><<<GridFor(out_n, 1), kThreads, 0, Stream()>>>(
      ri, out_n, red_n, divisor, static_cast<const T*>(x), static_cast<T*>(y));
  return LaunchError("reduce");
}

// The combiner as a template argument, so each op's loop is its own
// kernel (no per-element switch).
template <typename T>
std::string LaunchReduceOp(ReduceCode op, const ReduceIndex& ri, int64_t out_n, int64_t red_n,
                           double divisor, const void* x, void* y) {
  switch (op) {
    case ReduceCode::kSum: return LaunchReduce<ReduceCode::kSum, T>(ri, out_n, red_n, divisor, x, y);
    case ReduceCode::kMean:
      if constexpr (std::is_integral<T>::value) return "reduce: mean of an integer dtype";
      else return LaunchReduce<ReduceCode::kMean, T>(ri, out_n, red_n, divisor, x, y);
    case ReduceCode::kMax: return LaunchReduce<ReduceCode::kMax, T>(ri, out_n, red_n, divisor, x, y);
    case ReduceCode::kMin: return LaunchReduce<ReduceCode::kMin, T>(ri, out_n, red_n, divisor, x, y);
    case ReduceCode::kProd:
      return LaunchReduce<ReduceCode::kProd, T>(ri, out_n, red_n, divisor, x, y);
    case ReduceCode::kNanSum:
      if constexpr (std::is_integral<T>::value) return "reduce: nansum of an integer dtype";
      else return LaunchReduce<ReduceCode::kNanSum, T>(ri, out_n, red_n, divisor, x, y);
  }
  return "reduce: unknown op";
}

// Rows grid-stride over the blocks (the grid is capped at GridFor's
// 65536). As the CPU kernel (softmax_kernels.cc): the row max and sum in
// double, each element in double, softmax as exp(x - max) times the
// reciprocal of the sum, log_softmax as x - (max + log(sum)).
template <typename T>
__global__ void SoftmaxKernel(bool log_out, int64_t rows, int64_t cols, const T* x, T* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * cols;
    T* out = y + r * cols;
    double m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = max(m, To<double>(row[c]));
    m = BlockMax(m);
    double s = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += exp(To<double>(row[c]) - m);
    s = BlockSum(s);
    const double inv = 1.0 / s, shift = m + log(s);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double v = To<double>(row[c]);
      out[c] = To<T>(log_out ? v - shift : exp(v - m) * inv);
    }
  }
}

// In double as the CPU kernel, with the products rounded on their own
// (__dmul_rn: nvcc would contract dot += g * p and g - e * dot into FMAs,
// which the x86-64 CPU build never does).
template <typename T>
__global__ void SoftmaxGradKernel(bool log_in, int64_t rows, int64_t cols, const T* saved,
                                  const T* dy, T* dx) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * cols;
    double s = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double g = To<double>(dy[off + c]);
      s += log_in ? g : __dmul_rn(g, To<double>(saved[off + c]));
    }
    s = BlockSum(s);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double p = To<double>(saved[off + c]);
      const double g = To<double>(dy[off + c]);
      dx[off + c] = To<T>(log_in ? __dsub_rn(g, __dmul_rn(exp(p), s)) : p * (g - s));
    }
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
  switch (dtype) {
    case DtypeCode::kI32: return LaunchReduceOp<int32_t>(op, ri, out_n, red_n, divisor, x, y);
    case DtypeCode::kI64: return LaunchReduceOp<int64_t>(op, ri, out_n, red_n, divisor, x, y);
    default:
      return DispatchFloating("reduce", dtype, [&](auto tag) -> std::string {
        return LaunchReduceOp<decltype(tag)>(op, ri, out_n, red_n, divisor, x, y);
      });
  }
}

std::string Softmax(int dtype, bool log, int64_t rows, int64_t cols, const void* x, void* y) {
  if (rows == 0 || cols == 0) return "";
  return DispatchFloating("softmax", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    SoftmaxKernel<T><<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        log, rows, cols, static_cast<const T*>(x), static_cast<T*>(y));
    return LaunchError("softmax");
  });
}

std::string SoftmaxGrad(int dtype, bool log, int64_t rows, int64_t cols, const void* saved,
                        const void* dy, void* dx) {
  if (rows == 0 || cols == 0) return "";
  return DispatchFloating("softmax_grad", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    SoftmaxGradKernel<T><<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        log, rows, cols, static_cast<const T*>(saved), static_cast<const T*>(dy), static_cast<T*>(dx));
    return LaunchError("softmax_grad");
  });
}

}  // namespace oneflow_sbp::kernels::cuda
