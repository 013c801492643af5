// Reductions and the softmax family on CUDA. Accumulation is in double for
// floating reduce (int64 for integers) and for softmax, as the CPU kernels.
//
// Reduce has two paths, chosen by the layout (never by the values):
//   * rows (the input's last dim reduced, or the kept trailing extent 1):
//     one block per output element, grid-striding, each thread combining
//     a strided slice and the block a tree. The tree order of summation
//     differs from the CPU's: f64 sums may differ in the last bits.
//   * columns (the input's trailing dims kept, `inner` > 1: a bias or
//     param grad summing [B*S, H] over the batch): the input is viewed as
//     [outer, reduce, inner] and consecutive threads take consecutive
//     inner positions, so a warp reads contiguous memory at every step of
//     the reduced index. Each output is combined SEQUENTIALLY in the CPU's
//     order (row-major over the reduced dims, reduce_kernels.cc) within
//     chunks of kColumnChunk reduced positions, and the chunks' results
//     are combined sequentially in chunk order. Up to kColumnChunk
//     reduced positions that is exactly the CPU's order; beyond, sums and
//     floating products are associated in two levels (last bits of f64).
//     Max, min and the integer combiners give the CPU's result bit for bit
//     (the first NaN; of equal extrema the first for max, the last for
//     min; wrapping arithmetic).
//     The chunks are the unit of parallelism: one thread a (chunk, output)
//     writing its result to a stream-ordered scratch, then one thread an
//     output combining the chunks; without scratch one thread an output
//     does both levels itself, with the same arithmetic. The order depends
//     on the reduced extent only, never on the number of outputs, so a
//     shard of a kept dim gives the bits of the whole (unless the shard's
//     kept innermost extent is 1, which takes the row path). The second
//     level is one thread an output over red_n / kColumnChunk results:
//     latency-bound where few columns reduce very long ones (a [N, 2]
//     over N: two threads merge N / 128 results each).
#include <cmath>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

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
    // values the accumulator for max, v for min (so max(-0, +0) is -0 and
    // min(-0, +0) is +0; fmax and fmin may give either).
    if constexpr (kOp == ReduceCode::kMax || kOp == ReduceCode::kMin) {
      if (isnan(acc) || isnan(v)) return isnan(acc) ? acc : v;
      return (kOp == ReduceCode::kMax) == (acc < v) ? v : acc;
    }
    if constexpr (kOp == ReduceCode::kProd) return acc * v;
    if constexpr (kOp == ReduceCode::kNanSum) return isnan(v) ? acc : acc + v;
    return acc + v;
  }
}

// Two partial results of the same output combined: as Combine, except
// that nansum adds its partials as they are (a NaN partial came from
// inf + -inf, which the CPU's sequential sum keeps as NaN).
template <ReduceCode kOp, typename A>
__device__ __forceinline__ A Merge(A acc, A part) {
  if constexpr (kOp == ReduceCode::kNanSum) return acc + part;
  return Combine<kOp>(acc, part);
}

// The output element of an accumulator. Divides only by a positive count,
// as the CPU kernel (shapes have no zero extents today, so the count is
// >= 1).
template <ReduceCode kOp, typename T, typename A>
__device__ __forceinline__ T Finish(A acc, double divisor) {
  if constexpr (kOp == ReduceCode::kMean) {
    if (divisor > 0) acc /= divisor;
  }
  return To<T>(acc);
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
        partial[threadIdx.x] = Merge<kOp>(partial[threadIdx.x], partial[threadIdx.x + s]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[j] = Finish<kOp, T>(partial[0], divisor);
  }
}

// ---------------------------------------------------------------- columns --

// Reduced positions combined sequentially before their result is merged:
// part of the definition of the result (its order of summation), so a
// constant, never a function of the launch.
constexpr int64_t kColumnChunk = 128;
// Loads issued before they are combined (memory-level parallelism of the
// sequential chain; the combining order is unchanged): per chunk of x, and
// per merge of chunk results (few threads, long chains: more in flight).
constexpr int kColumnUnroll = 8;
constexpr int kMergeUnroll = 32;
// Scratch bytes the column path's pool keeps across synchronisations.
constexpr uint64_t kPoolKeep = uint64_t{64} << 20;
constexpr int kMaxPoolDevices = 64;

// Reduced positions [begin, end) of the column at `col`, combined in order
// from the identity. Where the reduced dims merged into one (the usual
// case: the batch of [B*S, H]) one strided loop, its loads issued
// kColumnUnroll at a time; else the offset steps along the last reduced
// dim and is recomputed where that dim wraps. The branch is uniform (one
// per chunk), outside the loops.
template <ReduceCode kOp, typename T>
__device__ __forceinline__ typename Accum<T>::type ColumnChunk(const ReduceIndex& ri,
                                                                const T* __restrict__ col,
                                                                int64_t begin, int64_t end) {
  using A = typename Accum<T>::type;
  A part = Identity<kOp, A>();
  if (ri.red_rank <= 1) {
    const int64_t s = ri.red_rank == 1 ? ri.red_stride[0] : 0;  // rank 0: one position
    int64_t r = begin;
    for (; r + kColumnUnroll <= end; r += kColumnUnroll) {
      T v[kColumnUnroll];
#pragma unroll
      for (int u = 0; u < kColumnUnroll; ++u) v[u] = col[(r + u) * s];
#pragma unroll
      for (int u = 0; u < kColumnUnroll; ++u) part = Combine<kOp>(part, To<A>(v[u]));
    }
    for (; r < end; ++r) part = Combine<kOp>(part, To<A>(col[r * s]));
    return part;
  }
  const int last = ri.red_rank - 1;
  const int64_t len = ri.red_dims[last], s = ri.red_stride[last];
  int64_t m = begin % len;
  int64_t off = Offset(last, ri.red_dims, ri.red_stride, begin / len) + m * s;
  for (int64_t r = begin; r < end; ++r) {
    part = Combine<kOp>(part, To<A>(col[off]));
    if (++m < len) {
      off += s;
    } else {
      m = 0;
      off = Offset(last, ri.red_dims, ri.red_stride, (r + 1) / len);
    }
  }
  return part;
}

// Thread t = g * out_n + j takes output j (consecutive threads, consecutive
// kept positions: the innermost kept dim has stride 1) and chunks
// [g * per_group, (g + 1) * per_group). With `partial`, per_group is 1 and
// the chunk's own result goes to partial[t] for ColumnMergeKernel; without
// (groups == 1), the thread merges all its chunks from the identity, in
// order, and writes y[j]. Both give the same bits by construction.
template <ReduceCode kOp, typename T>
__global__ void ColumnKernel(ReduceIndex ri, int64_t out_n, int64_t red_n, int64_t per_group,
                             int64_t groups, double divisor, const T* __restrict__ x,
                             T* __restrict__ y, typename Accum<T>::type* __restrict__ partial) {
  using A = typename Accum<T>::type;
  const int64_t total = groups * out_n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += step) {
    const int64_t g = t / out_n, j = t - g * out_n;
    const T* col = x + Offset(ri.out_rank, ri.out_dims, ri.out_stride, j);
    const int64_t begin = g * per_group * kColumnChunk;
    const int64_t end = min(red_n, begin + per_group * kColumnChunk);
    A acc = Identity<kOp, A>();
    A part = acc;  // an empty reduced extent: the identity
    for (int64_t c = begin; c < end; c += kColumnChunk) {
      part = ColumnChunk<kOp>(ri, col, c, min(end, c + kColumnChunk));
      acc = Merge<kOp>(acc, part);
    }
    if (partial != nullptr) {
      partial[t] = part;
    } else {
      y[j] = Finish<kOp, T>(acc, divisor);
    }
  }
}

// y[j]: the `chunks` results of output j (partial[k * out_n + j]) merged
// from the identity in chunk order, as ColumnKernel's one-pass threads do.
template <ReduceCode kOp, typename T>
__global__ void ColumnMergeKernel(int64_t out_n, int64_t chunks, double divisor,
                                  const typename Accum<T>::type* __restrict__ partial,
                                  T* __restrict__ y) {
  using A = typename Accum<T>::type;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < out_n;
       j += step) {
    A acc = Identity<kOp, A>();
    int64_t k = 0;
    for (; k + kMergeUnroll <= chunks; k += kMergeUnroll) {
      A v[kMergeUnroll];
#pragma unroll
      for (int u = 0; u < kMergeUnroll; ++u) v[u] = partial[(k + u) * out_n + j];
#pragma unroll
      for (int u = 0; u < kMergeUnroll; ++u) acc = Merge<kOp>(acc, v[u]);
    }
    for (; k < chunks; ++k) acc = Merge<kOp>(acc, partial[k * out_n + j]);
    y[j] = Finish<kOp, T>(acc, divisor);
  }
}

// One reduction's arguments, as Reduce() prepared them.
struct ReduceArgs {
  ReduceIndex ri;
  int64_t out_n;
  int64_t red_n;
  double divisor;
  bool columns;  // the column path (see the top of the file)
  const void* x;
  void* y;
};

// The column path's scratch pool for the calling thread's device (whose
// stream Stream() is), created on first use; nullptr where the device has
// no memory pools or the creation failed (the caller takes one pass). A
// pool of its own, not the device's default one: that one returns its
// memory at every synchronisation (release threshold 0), so each reduce
// would map its scratch anew, and changing its threshold would change it
// for every other user. Never destroyed (the process's lifetime).
cudaMemPool_t ScratchPool() {
  static std::mutex mu;
  static cudaMemPool_t pools[kMaxPoolDevices] = {};
  static bool tried[kMaxPoolDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxPoolDevices) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (!tried[dev]) {
    tried[dev] = true;
    int supported = 0;
    cudaMemPool_t pool = nullptr;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev) ==
            cudaSuccess &&
        supported != 0 && cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
      uint64_t keep = kPoolKeep;
      if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess) {
        pools[dev] = pool;
      } else {
        (void)cudaMemPoolDestroy(pool);
      }
    }
    (void)cudaGetLastError();  // a failed query or creation is not sticky
  }
  return pools[dev];
}

// The column path: chunks in parallel through a stream-ordered scratch of
// one accumulator a (chunk, output), merged by a second kernel; one pass
// when there is a single chunk or no scratch to be had.
template <ReduceCode kOp, typename T>
std::string LaunchColumns(const ReduceArgs& a) {
  using A = typename Accum<T>::type;
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const int64_t chunks = a.red_n > kColumnChunk ? (a.red_n + kColumnChunk - 1) / kColumnChunk : 1;
  if (chunks > 1) {
    void* scratch = nullptr;
    const size_t bytes = static_cast<size_t>(chunks * a.out_n) * sizeof(A);
    const cudaMemPool_t pool = ScratchPool();
    if (pool != nullptr &&
        cudaMallocFromPoolAsync(&scratch, bytes, pool, Stream()) == cudaSuccess) {
      A* partial = static_cast<A*>(scratch);
      ColumnKernel<kOp, T><<<GridFor(chunks * a.out_n, kThreads), kThreads, 0, Stream()>>>(
          a.ri, a.out_n, a.red_n, 1, chunks, a.divisor, x, y, partial);
      std::string err = LaunchError("reduce (column chunks)");
      if (err.empty()) {
        ColumnMergeKernel<kOp, T><<<GridFor(a.out_n, kThreads), kThreads, 0, Stream()>>>(
            a.out_n, chunks, a.divisor, partial, y);
        err = LaunchError("reduce (column merge)");
      }
      const cudaError_t freed = cudaFreeAsync(scratch, Stream());
      if (err.empty() && freed != cudaSuccess) {
        err = std::string("reduce scratch: ") + cudaGetErrorString(freed);
      }
      return err;
    }
    // No scratch (no pool on this device, or out of memory): a failed
    // allocation's error is not sticky; clear it and take one pass.
    (void)cudaGetLastError();
  }
  ColumnKernel<kOp, T><<<GridFor(a.out_n, kThreads), kThreads, 0, Stream()>>>(
      a.ri, a.out_n, a.red_n, chunks, 1, a.divisor, x, y, nullptr);
  return LaunchError("reduce (columns)");
}

template <ReduceCode kOp, typename T>
std::string LaunchReduce(const ReduceArgs& a) {
  if (a.columns) return LaunchColumns<kOp, T>(a);
  ReduceKernel<kOp, T><<<GridFor(a.out_n, 1), kThreads, 0, Stream()>>>(
      a.ri, a.out_n, a.red_n, a.divisor, static_cast<const T*>(a.x), static_cast<T*>(a.y));
  return LaunchError("reduce");
}

// The combiner as a template argument, so each op's loop is its own
// kernel (no per-element switch).
template <typename T>
std::string LaunchReduceOp(ReduceCode op, const ReduceArgs& a) {
  switch (op) {
    case ReduceCode::kSum: return LaunchReduce<ReduceCode::kSum, T>(a);
    case ReduceCode::kMean:
      if constexpr (std::is_integral<T>::value) return "reduce: mean of an integer dtype";
      else return LaunchReduce<ReduceCode::kMean, T>(a);
    case ReduceCode::kMax: return LaunchReduce<ReduceCode::kMax, T>(a);
    case ReduceCode::kMin: return LaunchReduce<ReduceCode::kMin, T>(a);
    case ReduceCode::kProd: return LaunchReduce<ReduceCode::kProd, T>(a);
    case ReduceCode::kNanSum:
      if constexpr (std::is_integral<T>::value) return "reduce: nansum of an integer dtype";
      else return LaunchReduce<ReduceCode::kNanSum, T>(a);
  }
  return "reduce: unknown op";
}

// Merges neighbouring dims of a list that are contiguous in x (the outer
// one's stride is the inner one's extent times its stride) and returns the
// new rank. The row-major order of the index space, hence which element
// each thread combines when, is unchanged; offsets take fewer divisions,
// and the column path sees [outer, reduce, inner].
int MergeContiguous(int rank, int64_t* dims, int64_t* stride) {
  int n = 0;
  for (int d = 0; d < rank; ++d) {
    if (n > 0 && stride[n - 1] == dims[d] * stride[d]) {
      dims[n - 1] *= dims[d];
      stride[n - 1] = stride[d];
    } else {
      dims[n] = dims[d];
      stride[n] = stride[d];
      ++n;
    }
  }
  return n;
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
  ReduceArgs a{};
  ReduceIndex& ri = a.ri;
  a.out_n = 1;
  a.red_n = 1;
  for (int d = 0; d < out_rank; ++d) {
    ri.out_dims[d] = out_dims[d];
    ri.out_stride[d] = out_stride[d];
    a.out_n *= out_dims[d];
  }
  for (int d = 0; d < red_rank; ++d) {
    ri.red_dims[d] = red_dims[d];
    ri.red_stride[d] = red_stride[d];
    a.red_n *= red_dims[d];
  }
  if (a.out_n == 0) return "";
  ri.out_rank = MergeContiguous(out_rank, ri.out_dims, ri.out_stride);
  ri.red_rank = MergeContiguous(red_rank, ri.red_dims, ri.red_stride);
  // Columns when x's innermost dim is kept and, merged with the kept dims
  // contiguous to it, longer than 1 (rows otherwise: the last dim reduced).
  a.columns = ri.out_rank > 0 && ri.out_stride[ri.out_rank - 1] == 1 &&
              ri.out_dims[ri.out_rank - 1] > 1;
  a.divisor = divisor;
  a.x = x;
  a.y = y;
  switch (dtype) {
    case DtypeCode::kI32: return LaunchReduceOp<int32_t>(op, a);
    case DtypeCode::kI64: return LaunchReduceOp<int64_t>(op, a);
    default:
      return DispatchFloating("reduce", dtype, [&](auto tag) -> std::string {
        return LaunchReduceOp<decltype(tag)>(op, a);
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
