// Comparisons, broadcast_fmod, where, cast, logical_not and tril on CUDA,
// with the CPU kernels' semantics (kernels/cpu/binary_kernels.cc,
// elementwise_kernels.cc, attention_kernels.cc): halves compute in float,
// integer fmod is int_arith.h's Fmod (shared host/device code), casts
// follow ConvertElement. One grid-stride pass each; the broadcasting
// kernels index operands through StridedIndex (elementwise_access.cuh, as
// cuda::Binary), with a direct path when every operand is contiguous.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/common/int_arith.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_flag.cuh"
#include "kernels/cuda/elementwise_access.cuh"
#include "kernels/cuda/select.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

#define GRID_STRIDE(i, n)                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// ------------------------------------------------------------ broadcasting --
//
// Each op is a functor F over K operands with
//   kN: elements per vector step (16 bytes of its widest element type),
//   Aligned(): every pointer aligned for vectors of kN elements,
//   At(i, off): output element i from operand offsets off,
//   Packed(p): output elements [p * kN, (p + 1) * kN) of contiguous operands.

// Broadcast operands, or contiguous ones whose pointers are not aligned.
template <int K, typename F>
__global__ void BroadcastKernel(StridedIndex<K> si, bool same, int64_t n, F f) {
  GRID_STRIDE(i, n) {
    int64_t off[K];
    if (same) {
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] = i;
    } else {
      si.Offsets(i, off);
    }
    f.At(i, off);
  }
}

// Same-shape, aligned operands: vectors of F::kN elements, then the tail.
template <int K, typename F>
__global__ void VectorKernel(int64_t n, F f) {
  const int64_t packs = n / F::kN, tail = packs * F::kN;
  GRID_STRIDE(p, packs) { f.Packed(p); }
  GRID_STRIDE(i, n - tail) {
    int64_t off[K];
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = tail + i;
    f.At(tail + i, off);
  }
}

template <int K, typename F>
std::string LaunchBroadcast(const char* kernel, int rank, const int64_t* out_dims,
                            const int64_t* const (&strides)[K], F f) {
  if (rank > kMaxRank) return std::string(kernel) + ": rank above 8";
  int64_t n = 0;
  bool same = false;
  const StridedIndex<K> si = MakeStridedIndex(rank, out_dims, strides, &n, &same);
  if (n == 0) return "";
  if (same && f.Aligned()) {
    const int64_t packs = n / F::kN;
    VectorKernel<K><<<GridFor(packs > 0 ? packs : n, kThreads), kThreads, 0, Stream()>>>(n, f);
  } else {
    BroadcastKernel<<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(si, same, n, f);
  }
  return LaunchError(kernel);
}

// An elementwise op of one contiguous operand (cast, logical_not).
template <typename F>
std::string LaunchMap(const char* kernel, int64_t n, F f) {
  const int64_t one = 1;
  const int64_t* const strides[1] = {&one};
  return LaunchBroadcast(kernel, 1, &n, strides, f);
}

template <typename T>
struct CompareFn {
  static constexpr int kN = 16 / sizeof(T);
  CompareCode op;
  const T* a;
  const T* b;
  bool* out;

  __device__ __forceinline__ bool Op(T u, T v) const {
    using C = std::conditional_t<kIsHalf<T>, float, T>;
    const C x = To<C>(u), y = To<C>(v);
    switch (op) {
      case CompareCode::kEqual: return x == y;
      case CompareCode::kNotEqual: return x != y;
      case CompareCode::kGreater: return x > y;
      case CompareCode::kGreaterEqual: return x >= y;
      case CompareCode::kLess: return x < y;
      case CompareCode::kLessEqual: return x <= y;
    }
    return false;
  }
  bool Aligned() const { return AlignedVec<kN>(a) && AlignedVec<kN>(b) && AlignedVec<kN>(out); }
  __device__ void At(int64_t i, const int64_t (&off)[2]) const {
    out[i] = Op(a[off[0]], b[off[1]]);
  }
  __device__ void Packed(int64_t p) const {
    const Vec<T, kN> x = Load<kN>(a, p), y = Load<kN>(b, p);
    Vec<bool, kN> r;
#pragma unroll
    for (int j = 0; j < kN; ++j) r.v[j] = Op(x.v[j], y.v[j]);
    Store<kN>(out, p, r);
  }
};

template <typename T>
struct FmodFn {
  static constexpr int kN = 16 / sizeof(T);
  const T* a;
  const T* b;
  T* out;
  int* int_by_zero;

  // int_arith.h's Fmod (the sign of u); an integer 0 divisor gives 0 and
  // raises the flag.
  __device__ __forceinline__ T Op(T u, T v) const {
    using C = ComputeT<T>;
    const C x = To<C>(u), y = To<C>(v);
    if constexpr (std::is_integral_v<C>) {
      if (y == 0) {
        *int_by_zero = 1;
        return T(0);
      }
    }
    return To<T>(Fmod(x, y));
  }
  bool Aligned() const { return AlignedVec<kN>(a) && AlignedVec<kN>(b) && AlignedVec<kN>(out); }
  __device__ void At(int64_t i, const int64_t (&off)[2]) const {
    out[i] = Op(a[off[0]], b[off[1]]);
  }
  __device__ void Packed(int64_t p) const {
    Vec<T, kN> x = Load<kN>(a, p);
    const Vec<T, kN> y = Load<kN>(b, p);
#pragma unroll
    for (int j = 0; j < kN; ++j) x.v[j] = Op(x.v[j], y.v[j]);
    Store<kN>(out, p, x);
  }
};

template <typename U>
struct WhereFn {
  static constexpr int kN = 16 / sizeof(U);
  const bool* cond;
  const U* x;
  const U* y;
  U* out;

  bool Aligned() const {
    return AlignedVec<kN>(cond) && AlignedVec<kN>(x) && AlignedVec<kN>(y) && AlignedVec<kN>(out);
  }
  __device__ void At(int64_t i, const int64_t (&off)[3]) const {
    out[i] = cond[off[0]] ? x[off[1]] : y[off[2]];
  }
  __device__ void Packed(int64_t p) const {
    const Vec<bool, kN> c = Load<kN>(cond, p);
    Vec<U, kN> r = Load<kN>(x, p);
    const Vec<U, kN> other = Load<kN>(y, p);
#pragma unroll
    for (int j = 0; j < kN; ++j) r.v[j] = c.v[j] ? r.v[j] : other.v[j];
    Store<kN>(out, p, r);
  }
};

// y = op(x) for one contiguous operand, In and Out of any sizes.
template <typename In, typename Out, typename Op>
struct MapFn {
  static constexpr int kN = 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
  const In* x;
  Out* y;
  Op op;

  bool Aligned() const { return AlignedVec<kN>(x) && AlignedVec<kN>(y); }
  __device__ void At(int64_t i, const int64_t (&off)[1]) const { y[i] = op(x[off[0]]); }
  __device__ void Packed(int64_t p) const {
    const Vec<In, kN> v = Load<kN>(x, p);
    Vec<Out, kN> r;
#pragma unroll
    for (int j = 0; j < kN; ++j) r.v[j] = op(v.v[j]);
    Store<kN>(y, p, r);
  }
};

// ------------------------------------------------------ cast, logical_not --

// ConvertElement (oneflow_sbp/storage/element_type.h) on the device: the same
// cases in the same order, with the CUDA half types.
template <typename Out, typename In>
__device__ __forceinline__ Out Convert(In v) {
  if constexpr (std::is_same_v<Out, In>) {
    return v;
  } else if constexpr (kIsHalf<In>) {
    return Convert<Out>(To<float>(v));
  } else if constexpr (std::is_same_v<Out, bool>) {
    return v != In(0);
  } else if constexpr (kIsHalf<Out>) {
    return To<Out>(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<In>) {
    if (!(v == v)) return Out(0);
    constexpr In lo = static_cast<In>(std::numeric_limits<Out>::lowest());
    constexpr In hi = static_cast<In>(std::numeric_limits<Out>::max());
    if (v <= lo) return std::numeric_limits<Out>::lowest();
    if (v >= hi) return std::numeric_limits<Out>::max();
    return static_cast<Out>(v);
  } else {
    return static_cast<Out>(v);
  }
}

template <typename Out, typename In>
struct ConvertOp {
  __device__ __forceinline__ Out operator()(In v) const { return Convert<Out>(v); }
};

template <typename T>
struct NotOp {  // the CPU's C(x == C(0)) in x's dtype
  __device__ __forceinline__ T operator()(T v) const {
    using C = ComputeT<T>;
    return To<T>(C(To<C>(v) == C(0)));
  }
};

// ------------------------------------------------------------------ tril --

// N consecutive elements of a row per step (N divides cols; N = 1: one).
template <typename U, int N>
__global__ void TrilKernel(int64_t n, int64_t rows, int64_t cols, int64_t lead, const U* x,
                           U* y) {
  GRID_STRIDE(p, n / N) {
    const int64_t e = p * N, j = e % cols, i = (e / cols) % rows;
    Vec<U, N> v = Load<N>(x, p);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (j + k > i + lead) v.v[k] = U(0);  // all-zero bytes: 0 in every dtype
    }
    Store<N>(y, p, v);
  }
}

}  // namespace

std::string Compare(CompareCode op, int dtype, int rank, const int64_t* out_dims,
                    const int64_t* a_stride, const int64_t* b_stride, const void* a,
                    const void* b, bool* out) {
  return DispatchAll("compare", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    if constexpr (sizeof(T) == 1 && !std::is_same_v<T, bool>) {
      return "compare: unsupported dtype " + std::to_string(dtype);
    } else {
      const int64_t* const strides[2] = {a_stride, b_stride};
      return LaunchBroadcast("compare", rank, out_dims, strides,
                             CompareFn<T>{op, static_cast<const T*>(a),
                                          static_cast<const T*>(b), out});
    }
  });
}

std::string BroadcastFmod(int dtype, int rank, const int64_t* out_dims, const int64_t* a_stride,
                          const int64_t* b_stride, const void* a, const void* b, void* out,
                          bool* int_by_zero) {
  *int_by_zero = false;
  return DispatchAll("fmod", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    if constexpr (sizeof(T) == 1) {  // i8 u8 bool: not the CPU's dtypes
      return "fmod: unsupported dtype " + std::to_string(dtype);
    } else {
      DeviceFlag flag;  // raised where an integer divisor is 0
      std::string e = flag.Init();
      if (!e.empty()) return "fmod: " + e;
      const int64_t* const strides[2] = {a_stride, b_stride};
      e = LaunchBroadcast("fmod", rank, out_dims, strides,
                          FmodFn<T>{static_cast<const T*>(a), static_cast<const T*>(b),
                                    static_cast<T*>(out), flag.get()});
      if (!e.empty() || !std::is_integral_v<T>) return e;
      e = flag.Read(int_by_zero);
      return e.empty() ? "" : "fmod: " + e;
    }
  });
}

std::string Where(int elem_bytes, int rank, const int64_t* out_dims, const int64_t* c_stride,
                  const int64_t* x_stride, const int64_t* y_stride, const bool* cond,
                  const void* x, const void* y, void* out) {
  return DispatchBytes("where", elem_bytes, [&](auto tag) -> std::string {
    using U = decltype(tag);
    const int64_t* const strides[3] = {c_stride, x_stride, y_stride};
    return LaunchBroadcast("where", rank, out_dims, strides,
                           WhereFn<U>{cond, static_cast<const U*>(x), static_cast<const U*>(y),
                                      static_cast<U*>(out)});
  });
}

std::string Cast(int from, int to, const void* x, void* y, int64_t n) {
  if (n == 0) return "";
  return DispatchAll("cast", from, [&](auto in_tag) -> std::string {
    using In = decltype(in_tag);
    return DispatchAll("cast", to, [&](auto out_tag) -> std::string {
      using Out = decltype(out_tag);
      return LaunchMap("cast", n, MapFn<In, Out, ConvertOp<Out, In>>{
                                      static_cast<const In*>(x), static_cast<Out*>(y), {}});
    });
  });
}

std::string LogicalNot(int dtype, const void* x, void* y, int64_t n) {
  if (n == 0) return "";
  return DispatchAll("logical_not", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    if constexpr (sizeof(T) == 1 && !std::is_same_v<T, bool>) {
      return "logical_not: unsupported dtype " + std::to_string(dtype);
    } else {
      return LaunchMap("logical_not", n, MapFn<T, T, NotOp<T>>{static_cast<const T*>(x),
                                                               static_cast<T*>(y), {}});
    }
  });
}

std::string Tril(int elem_bytes, int64_t mats, int64_t rows, int64_t cols, int64_t lead,
                 const void* x, void* y) {
  const int64_t n = mats * rows * cols;
  if (n == 0) return "";
  return DispatchBytes("tril", elem_bytes, [&](auto tag) -> std::string {
    using U = decltype(tag);
    constexpr int kN = 16 / sizeof(U);
    if (cols % kN == 0 && AlignedVec<kN>(static_cast<const U*>(x)) &&
        AlignedVec<kN>(static_cast<U*>(y))) {
      TrilKernel<U, kN><<<GridFor(n / kN, kThreads), kThreads, 0, Stream()>>>(
          n, rows, cols, lead, static_cast<const U*>(x), static_cast<U*>(y));
    } else {
      TrilKernel<U, 1><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
          n, rows, cols, lead, static_cast<const U*>(x), static_cast<U*>(y));
    }
    return LaunchError("tril");
  });
}

}  // namespace oneflow_sbp::kernels::cuda
