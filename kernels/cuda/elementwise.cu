// Elementwise CUDA kernels: unary math, broadcasting binary ops, bias_add
// and dropout. Memory-bound, so the same-shape paths move 16 bytes per
// load and store (Pack) and make one pass over memory. i32 and i64 take
// the CPU's integer ops with int_arith.h's functions (one definition of the
// wrapping results for both devices).
#include <cmath>
#include <type_traits>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/common/int_arith.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_flag.cuh"
#include "kernels/cuda/elementwise_access.cuh"
#include "kernels/philox.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

// Products rounded on their own: nvcc would fuse a * b + c into one fma,
// which the CPU build (x86-64, no FMA) never does.
__device__ __forceinline__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

template <typename C>
__device__ __forceinline__ C Sigmoid(C x) { return C(1) / (C(1) + exp(-x)); }
template <typename C>
__device__ __forceinline__ C Softplus(C x) { return max(x, C(0)) + log1p(exp(-fabs(x))); }

// The unary ops the CPU takes on integers (elementwise_kernels.cc); the
// launcher refuses the others for i32 and i64.
constexpr bool IntegerUnary(UnaryCode op) {
  return op == UnaryCode::kAbs || op == UnaryCode::kNegative || op == UnaryCode::kRelu ||
         op == UnaryCode::kSign || op == UnaryCode::kSquare;
}

template <typename C>
__device__ __forceinline__ C ApplyUnaryInteger(UnaryCode op, C x) {
  switch (op) {
    case UnaryCode::kAbs: return x < C(0) ? WrapNeg(x) : x;  // abs(INT_MIN) == INT_MIN
    case UnaryCode::kNegative: return WrapNeg(x);
    case UnaryCode::kRelu: return x < C(0) ? C(0) : x;
    case UnaryCode::kSign: return C((C(0) < x) - (x < C(0)));
    case UnaryCode::kSquare: return WrapMul(x, x);
    default: return x;  // not reached: the launcher refuses the op
  }
}

template <typename C>
__device__ __forceinline__ C ApplyUnaryFloating(UnaryCode op, C x) {
  switch (op) {
    // 0 - x, as the CPU's WrapNeg: abs(-0) and negative(+0) are +0 there
    // (fabs and unary minus would give -0 for negative(+0) and flip NaN signs).
    case UnaryCode::kAbs: return x < C(0) ? C(0) - x : x;
    case UnaryCode::kCeil: return ceil(x);
    case UnaryCode::kCos: return cos(x);
    case UnaryCode::kErf: return erf(x);
    case UnaryCode::kExp: return exp(x);
    case UnaryCode::kFastGelu: {
      const C k = C(0.7978845608028654);
      return C(0.5) * x * (C(1) + tanh(k * (x + MulRn(C(0.044715) * x * x, x))));
    }
    case UnaryCode::kFloor: return floor(x);
    case UnaryCode::kGelu: return C(0.5) * x * (C(1) + erf(x * C(M_SQRT1_2)));
    case UnaryCode::kLog: return log(x);
    case UnaryCode::kMish: return x * tanh(Softplus(x));
    case UnaryCode::kNegative: return C(0) - x;
    case UnaryCode::kReciprocal: return C(1) / x;
    case UnaryCode::kRelu: return x < C(0) ? C(0) : x;
    case UnaryCode::kRound: return rint(x);  // half to even
    case UnaryCode::kRsqrt: return C(1) / sqrt(x);
    case UnaryCode::kSigmoid: return Sigmoid(x);
    case UnaryCode::kSign: return isnan(x) ? x : C((C(0) < x) - (x < C(0)));
    case UnaryCode::kSilu: return x * Sigmoid(x);
    case UnaryCode::kSin: return sin(x);
    case UnaryCode::kSoftplus: return Softplus(x);
    case UnaryCode::kSqrt: return sqrt(x);
    case UnaryCode::kSquare: return x * x;
    case UnaryCode::kTanh: return tanh(x);
  }
  return x;
}

template <typename C>
__device__ __forceinline__ C ApplyUnary(UnaryCode op, C x) {
  if constexpr (std::is_integral_v<C>) {
    return ApplyUnaryInteger(op, x);
  } else {
    return ApplyUnaryFloating(op, x);
  }
}

template <typename T>
__global__ void UnaryVecKernel(UnaryCode op, const Pack<T>* x, Pack<T>* y, int64_t packs,
                               const T* xt, T* yt, int64_t tail_begin, int64_t n) {
  using C = ComputeT<T>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs;
       i += stride) {
    Pack<T> p = x[i];
#pragma unroll
    for (int j = 0; j < Pack<T>::kN; ++j) p.v[j] = To<T>(ApplyUnary<C>(op, To<C>(p.v[j])));
    y[i] = p;
  }
  for (int64_t i = tail_begin + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    yt[i] = To<T>(ApplyUnary<C>(op, To<C>(xt[i])));
  }
}

template <typename T>
__global__ void UnaryScalarKernel(UnaryCode op, const T* x, T* y, int64_t n) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = To<T>(ApplyUnary<C>(op, To<C>(x[i])));
  }
}

// The binary ops the CPU takes on integers (binary_kernels.cc: all but
// div, which would truncate); the launcher refuses div for i32 and i64.
constexpr bool IntegerBinary(BinaryCode op) { return op != BinaryCode::kDiv; }

// `bad` (device flag, null for floating types) is raised by an integer pow
// with a negative exponent, which gives 0 as on the CPU.
template <typename C>
__device__ __forceinline__ C ApplyBinaryInteger(BinaryCode op, C a, C b, int* bad) {
  switch (op) {
    case BinaryCode::kAdd: return WrapAdd(a, b);
    case BinaryCode::kSub: return WrapSub(a, b);
    case BinaryCode::kMul: return WrapMul(a, b);
    case BinaryCode::kMaximum: return a < b ? b : a;
    case BinaryCode::kMinimum: return a < b ? a : b;
    case BinaryCode::kPow:
      if (b < C(0)) {
        *bad = 1;
        return C(0);
      }
      return IntPow(a, b);
    default: return a;  // not reached: the launcher refuses div
  }
}

template <typename C>
__device__ __forceinline__ C ApplyBinaryFloating(BinaryCode op, C a, C b) {
  switch (op) {
    case BinaryCode::kAdd: return a + b;
    case BinaryCode::kSub: return a - b;
    case BinaryCode::kMul: return a * b;
    case BinaryCode::kDiv: return a / b;
    // The CPU's selection: the NaN operand itself, else (a < b) picks
    // without fmax/fmin's sign-of-zero rules (maximum(-0, +0) is -0 there).
    case BinaryCode::kMaximum:
      if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
      return a < b ? b : a;
    case BinaryCode::kMinimum:
      if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
      return a < b ? a : b;
    case BinaryCode::kPow: return pow(a, b);
  }
  return a;
}

template <typename C>
__device__ __forceinline__ C ApplyBinary(BinaryCode op, C a, C b, int* bad) {
  if constexpr (std::is_integral_v<C>) {
    return ApplyBinaryInteger(op, a, b, bad);
  } else {
    return ApplyBinaryFloating(op, a, b);
  }
}

template <typename T>
__global__ void BinaryBroadcastKernel(BinaryCode op, StridedIndex<2> bi, int64_t n, const T* a,
                                      const T* b, T* out, int* bad) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    bi.Offsets(i, off);
    out[i] = To<T>(ApplyBinary<C>(op, To<C>(a[off[0]]), To<C>(b[off[1]]), bad));
  }
}

template <typename T>
__global__ void BinarySameVecKernel(BinaryCode op, const Pack<T>* a, const Pack<T>* b,
                                    Pack<T>* out, int64_t packs, const T* at, const T* bt, T* ot,
                                    int64_t tail_begin, int64_t n, int* bad) {
  using C = ComputeT<T>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs;
       i += stride) {
    Pack<T> p = a[i];
    const Pack<T> q = b[i];
#pragma unroll
    for (int j = 0; j < Pack<T>::kN; ++j) {
      p.v[j] = To<T>(ApplyBinary<C>(op, To<C>(p.v[j]), To<C>(q.v[j]), bad));
    }
    out[i] = p;
  }
  for (int64_t i = tail_begin + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    ot[i] = To<T>(ApplyBinary<C>(op, To<C>(at[i]), To<C>(bt[i]), bad));
  }
}

template <typename T>
__global__ void BiasAddKernel(int64_t n, int64_t channels, int64_t inner, const T* x,
                              const T* bias, T* y) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / inner) % channels;
    y[i] = To<T>(To<C>(x[i]) + To<C>(bias[c]));
  }
}

struct GlobalIndex {
  int rank;
  int64_t local[kMaxRank];
  int64_t global_stride[kMaxRank];
};

template <typename T>
__global__ void DropoutKernel(GlobalIndex gi, int64_t n, int64_t offset, uint64_t seed,
                              uint32_t threshold, ComputeT<T> scale, const T* x, const T* add,
                              T* y, bool* mask) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, g = offset;
    for (int d = gi.rank - 1; d >= 0; --d) {
      g += (rest % gi.local[d]) * gi.global_stride[d];
      rest /= gi.local[d];
    }
    const bool keep = DropoutKeeps(PhiloxElementBits(seed, static_cast<uint64_t>(g)), threshold);
    mask[i] = keep;
    // The product rounded before the add, as on the CPU (no fma).
    C v = MulRn(To<C>(x[i]), keep ? scale : C(0));
    if (add != nullptr) v += To<C>(add[i]);
    y[i] = To<T>(v);
  }
}

template <typename T>
__global__ void DropoutGradKernel(int64_t n, ComputeT<T> scale, const T* dy, const bool* mask,
                                  T* dx) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dx[i] = To<T>(To<C>(dy[i]) * (mask[i] ? scale : C(0)));
  }
}

constexpr int kThreads = 256;

// Calls f(T{}) for the unary and binary ops' dtypes: the floating ones, i32
// and i64 (the CPU's Signed list); an error string for the others.
template <typename F>
std::string DispatchArith(const char* kernel, int dtype, F&& f) {
  return DispatchAll(kernel, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    if constexpr (sizeof(T) == 1) {  // i8 u8 bool
      return std::string(kernel) + ": unsupported dtype " + std::to_string(dtype);
    } else {
      return f(tag);
    }
  });
}

}  // namespace

std::string Unary(UnaryCode op, int dtype, const void* x, void* y, int64_t n) {
  if (n == 0) return "";
  return DispatchArith("unary", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    if (std::is_integral_v<T> && !IntegerUnary(op)) {
      return "unary: op " + std::to_string(static_cast<int>(op)) +
             " takes floating dtypes only, not dtype " + std::to_string(dtype);
    }
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    if (Aligned16(x) && Aligned16(y)) {
      const int64_t packs = n / Pack<T>::kN;
      UnaryVecKernel<T><<<GridFor(packs > 0 ? packs : n, kThreads), kThreads, 0, Stream()>>>(
          op, reinterpret_cast<const Pack<T>*>(x), reinterpret_cast<Pack<T>*>(y), packs, xt, yt,
          packs * Pack<T>::kN, n);
    } else {
      UnaryScalarKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(op, xt, yt, n);
    }
    return LaunchError("unary");
  });
}

std::string Binary(BinaryCode op, int dtype, int rank, const int64_t* out_dims,
                   const int64_t* a_stride, const int64_t* b_stride, const void* a,
                   const void* b, void* out, bool* negative_exponent) {
  if (negative_exponent != nullptr) *negative_exponent = false;
  if (rank > kMaxRank) return "binary: rank above 8";
  int64_t n = 1;
  bool same = true;
  const int64_t* const strides[2] = {a_stride, b_stride};
  const StridedIndex<2> bi = MakeStridedIndex(rank, out_dims, strides, &n, &same);
  if (n == 0) return "";
  return DispatchArith("binary", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    constexpr bool kInt = std::is_integral_v<T>;
    if (kInt && !IntegerBinary(op)) {
      return "binary: op " + std::to_string(static_cast<int>(op)) +
             " takes floating dtypes only, not dtype " + std::to_string(dtype);
    }
    // Only an integer pow can meet an element the CPU rejects.
    const bool flagged = kInt && op == BinaryCode::kPow;
    DeviceFlag flag;
    if (flagged) {
      const std::string e = flag.Init();
      if (!e.empty()) return "binary: " + e;
    }
    int* bad = flagged ? flag.get() : nullptr;
    const T* at = static_cast<const T*>(a);
    const T* bt = static_cast<const T*>(b);
    T* ot = static_cast<T*>(out);
    if (same && Aligned16(a) && Aligned16(b) && Aligned16(out)) {
      const int64_t packs = n / Pack<T>::kN;
      BinarySameVecKernel<T><<<GridFor(packs > 0 ? packs : n, kThreads), kThreads, 0,
                               Stream()>>>(
          op, reinterpret_cast<const Pack<T>*>(a), reinterpret_cast<const Pack<T>*>(b),
          reinterpret_cast<Pack<T>*>(out), packs, at, bt, ot, packs * Pack<T>::kN, n, bad);
    } else {
      BinaryBroadcastKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(op, bi, n, at,
                                                                               bt, ot, bad);
    }
    std::string e = LaunchError("binary");
    if (!e.empty() || !flagged) return e;
    bool raised = false;
    e = flag.Read(&raised);
    if (!e.empty()) return "binary: " + e;
    if (raised && negative_exponent == nullptr) {
      return "binary: integer power with a negative exponent";
    }
    if (negative_exponent != nullptr) *negative_exponent = raised;
    return "";
  });
}

std::string BiasAdd(int dtype, int64_t outer, int64_t channels, int64_t inner, const void* x,
                    const void* bias, void* y) {
  const int64_t n = outer * channels * inner;
  if (n == 0) return "";
  return DispatchFloating("bias_add", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    BiasAddKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
        n, channels, inner, static_cast<const T*>(x), static_cast<const T*>(bias),
        static_cast<T*>(y));
    return LaunchError("bias_add");
  });
}

std::string Dropout(int dtype, int rank, const int64_t* local_dims,
                    const int64_t* global_stride, int64_t global_offset, uint64_t seed,
                    uint32_t threshold, double scale, const void* x, const void* add, void* y,
                    bool* mask) {
  if (rank > kMaxRank) return "dropout: rank above 8";
  GlobalIndex gi{};
  gi.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    gi.local[d] = local_dims[d];
    gi.global_stride[d] = global_stride[d];
    n *= local_dims[d];
  }
  if (n == 0) return "";
  return DispatchFloating("dropout", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    using C = ComputeT<T>;
    DropoutKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
        gi, n, global_offset, seed, threshold, static_cast<C>(scale), static_cast<const T*>(x),
        static_cast<const T*>(add), static_cast<T*>(y), mask);
    return LaunchError("dropout");
  });
}

std::string DropoutGrad(int dtype, int64_t n, double scale, const void* dy, const bool* mask,
                        void* dx) {
  if (n == 0) return "";
  return DispatchFloating("dropout_grad", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    using C = ComputeT<T>;
    DropoutGradKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
        n, static_cast<C>(scale), static_cast<const T*>(dy), mask, static_cast<T*>(dx));
    return LaunchError("dropout_grad");
  });
}

}  // namespace oneflow_sbp::kernels::cuda
