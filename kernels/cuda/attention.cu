// Scaled dot-product attention and its gradient on CUDA, templated on the
// storage type T (f32 f64 f16 bf16, DispatchFloating) with the CPU
// kernel's arithmetic (attention_kernels.cc): every dot product, softmax
// and sum in double, each output rounded once. Registered as kernels in
// cuda_kernels.cc. Deterministic: no atomics; every row's loop over keys
// runs in a fixed order.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kMaxHead = 256;  // head dim limit (per-thread accumulator arrays)

// --------------------------------------------------------- attention --
//
// T is the storage type; every dot product, softmax and sum is in double,
// as the CPU kernels (attention_kernels.cc) compute, and each output is
// rounded to T once. Not bit for bit the CPU's: the softmax is online (the
// CPU's has two passes), p comes from lse, nvcc fuses a * b + c into fma,
// and CUDA's exp and log differ from glibc's in the last bit; the tests
// compare within the dtype's tolerance.
//
// Tiled: a block of kTileRows threads takes kTileRows consecutive rows of
// one batch-head, one thread a row (query rows for the forward and dq, key
// rows for dk and dv), and streams the other side's rows through shared
// memory a tile at a time: the tile's rows are contiguous in global memory,
// so the block loads them as one coalesced run, and each staged row then
// serves all the block's threads (global traffic for K and V, or Q and
// dout, drops by a factor of kTileRows against a thread that reads every
// row itself). Each thread still runs its own loop over the other side's
// rows in ascending order with the same double arithmetic, so a row's
// result does not depend on the tiling: only where the operands are read
// from changed (and the staged values are the stored T values).

constexpr int kTileRows = 64;           // rows a block owns, one per thread
constexpr int kStageBytes = 48 * 1024;  // dynamic shared memory without opt-in

// Causal: query row i sees keys j <= i + shift. Written as j - i > shift:
// both rows are in range, so the difference cannot overflow for any shift.
__device__ __forceinline__ bool Masked(bool causal, int64_t i, int64_t j, int64_t shift) {
  return causal && j - i > shift;
}

// How many keys (a prefix) causal query row i sees: clamp(i + shift + 1,
// 0, sk), without overflow at extreme shifts.
__device__ __forceinline__ int64_t KeysSeen(int64_t i, int64_t sk, int64_t shift) {
  if (shift >= sk - 1 - i) return sk;
  if (shift < -i) return 0;
  return i + shift + 1;
}

// The first query row that causal key j is seen by: clamp(j - shift, 0,
// sq), without overflow.
__device__ __forceinline__ int64_t FirstQuery(int64_t j, int64_t sq, int64_t shift) {
  if (shift >= j) return 0;
  if (shift <= j - sq) return sq;
  return j - shift;
}

// Whether batch-head b attends to key j under the key_padding_mask (always
// without one).
__device__ __forceinline__ bool KeyKept(const KeyMask& mask, int64_t b, int64_t j, int64_t sk) {
  return mask.data == nullptr ||
         MaskNonzero(mask.data, mask.dtype, (b / mask.heads + mask.row0) * sk + j);
}

template <typename A, typename B>
__device__ __forceinline__ double Dot(const A* a, const B* b, int64_t d) {
  double s = 0;
  for (int64_t e = 0; e < d; ++e) s += To<double>(a[e]) * To<double>(b[e]);
  return s;
}

// Streams rows [first, end) of a [.., wa] and b [.., wb] (one batch-head's
// rows, row 0 at a and b) through the shared buffers as / bs, `tile` rows
// at a time, and calls f(r, a_r, b_r) for each row r in ascending order on
// every live thread; f returning false skips the rest of that tile (the
// caller's later rows are then past its mask too). Every thread of the
// block must call this with the same first, end and tile (it syncs).
template <typename T, typename F>
__device__ __forceinline__ void StreamRows(const T* a, int64_t wa, const T* b, int64_t wb,
                                           int64_t first, int64_t end, int64_t tile, T* as,
                                           T* bs, bool live, F f) {
  for (int64_t r0 = first; r0 < end; r0 += tile) {
    const int64_t n = min(tile, end - r0);
    __syncthreads();  // every thread is done with the previous tile
    for (int64_t x = threadIdx.x; x < n * wa; x += blockDim.x) as[x] = a[r0 * wa + x];
    for (int64_t x = threadIdx.x; x < n * wb; x += blockDim.x) bs[x] = b[r0 * wb + x];
    __syncthreads();
    for (int64_t r = 0; live && r < n; ++r) {
      if (!f(r0 + r, as + r * wa, bs + r * wb)) break;
    }
  }
}

// The staging buffers: `tile` rows of widths wa and wb, stored as T.
template <typename T>
struct Stage {
  T* a;
  T* b;
  __device__ Stage(int64_t tile, int64_t wa) {
    extern __shared__ __align__(16) unsigned char stage_bytes[];
    a = reinterpret_cast<T*>(stage_bytes);
    b = a + tile * wa;
  }
};

// Work item w, of tiles items per batch-head, of a kernel with a thread per
// row of `rows` rows per head: batch-head b, the tile's first row r0, this
// thread's row r (past the end, live false: the thread only helps stage)
// and its flat index t = b * rows + r.
struct RowTile {
  int64_t b, r0, r, t;
  bool live;
  __device__ RowTile(int64_t w, int64_t tiles, int64_t rows)
      : b(w / tiles), r0(w % tiles * kTileRows), r(r0 + threadIdx.x), t(b * rows + r),
        live(r < rows) {}
};

// Runs f(rt) for every work item, (batch-head, tile of kTileRows rows)
// pairs over bh heads of `rows` rows, grid-stride (the grid is capped at
// 65536 blocks). Block-uniform, so f may sync.
template <typename F>
__device__ __forceinline__ void ForRowTiles(int64_t bh, int64_t rows, F f) {
  const int64_t tiles = (rows + kTileRows - 1) / kTileRows;
  for (int64_t w = blockIdx.x; w < bh * tiles; w += gridDim.x) f(RowTile(w, tiles, rows));
}

// The keys a tile of causal query rows from i0 needs: those its last row
// sees (later keys are masked for every row of the tile).
__device__ __forceinline__ int64_t TileKeys(bool causal, int64_t i0, int64_t sq, int64_t sk,
                                            int64_t shift) {
  return causal ? KeysSeen(min(sq, i0 + kTileRows) - 1, sk, shift) : sk;
}

// A thread per query row (ForRowTiles), K and V staged; online softmax
// over keys. Writes the row's lse (if lse is not null) and either out
// (kDelta false) or, for the grad, delta = dout . out (kDelta true; out
// itself is not kept).
template <typename T, bool kDelta>
__global__ void __launch_bounds__(kTileRows)
    AttentionForward(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv, int64_t tile,
                     double scale, bool causal, int64_t shift, KeyMask mask, const T* q,
                     const T* k, const T* v, const T* dout, T* out, double* lse,
                     double* delta) {
  const Stage<T> st(tile, d);
  ForRowTiles(bh, sq, [&](const RowTile& rt) {
    const int64_t b = rt.b, i = rt.r, t = rt.t;
    const int64_t end = TileKeys(causal, rt.r0, sq, sk, shift);
    double acc[kMaxHead];
    for (int64_t e = 0; e < dv; ++e) acc[e] = 0;
    double m = -INFINITY, l = 0;
    bool attended = false;  // some key passed both masks
    StreamRows(k + b * sk * d, d, v + b * sk * dv, dv, 0, end, tile, st.a, st.b, rt.live,
               [&](int64_t j, const T* kj, const T* vj) {
                 if (Masked(causal, i, j, shift)) return false;
                 if (!KeyKept(mask, b, j, sk)) return true;  // a padded key: p = 0
                 attended = true;
                 const double s = scale * Dot(q + t * d, kj, d);
                 const double m2 = fmax(m, s);
                 const double c = exp(m - m2), p = exp(s - m2);
                 // The CPU skips a key whose p is 0 (0 * an infinite v is
                 // NaN). p == 0 here means s < m2 == m, so c == 1 and the
                 // skip leaves l, m and acc as the update would.
                 if (p == 0) return true;
                 l = l * c + p;
                 for (int64_t e = 0; e < dv; ++e) acc[e] = acc[e] * c + p * To<double>(vj[e]);
                 m = m2;
                 return true;
               });
    if (!rt.live) return;
    // A row without keys (the CPU's SoftmaxRow false) gets 0 and lse -inf.
    // Decided by the masks, not by l > 0: a NaN score makes l NaN, and the
    // CPU's output is then NaN, not 0.
    const bool any = (causal ? KeysSeen(i, sk, shift) > 0 : sk > 0) &&
                     (mask.data == nullptr || attended);
    for (int64_t e = 0; e < dv; ++e) acc[e] = any ? acc[e] / l : 0.0;
    if constexpr (kDelta) {
      delta[t] = Dot(dout + t * dv, acc, dv);
    } else {
      for (int64_t e = 0; e < dv; ++e) out[t * dv + e] = To<T>(acc[e]);
    }
    if (lse != nullptr) lse[t] = any ? m + log(l) : -INFINITY;
   });
}

// dq_i = scale * sum_j p_ij (dout_i . v_j - delta_i) k_j; a thread per
// query row, K and V staged, tiles as in AttentionForward.
template <typename T>
__global__ void __launch_bounds__(kTileRows)
    AttentionBackwardQ(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv, int64_t tile,
                       double scale, bool causal, int64_t shift, KeyMask mask, const T* q,
                       const T* k, const T* v, const T* dout, const double* lse,
                       const double* delta, T* dq) {
  const Stage<T> st(tile, d);
  ForRowTiles(bh, sq, [&](const RowTile& rt) {
    const int64_t b = rt.b, i = rt.r, t = rt.t;
    const int64_t end = TileKeys(causal, rt.r0, sq, sk, shift);
    double acc[kMaxHead];
    for (int64_t e = 0; e < d; ++e) acc[e] = 0;
    StreamRows(k + b * sk * d, d, v + b * sk * dv, dv, 0, end, tile, st.a, st.b, rt.live,
               [&](int64_t j, const T* kj, const T* vj) {
                 if (Masked(causal, i, j, shift)) return false;
                 if (!KeyKept(mask, b, j, sk)) return true;
                 const double p = exp(scale * Dot(q + t * d, kj, d) - lse[t]);
                 if (p == 0) return true;  // skipped, as on the CPU (0 * inf)
                 const double ds = p * (Dot(dout + t * dv, vj, dv) - delta[t]);
                 for (int64_t e = 0; e < d; ++e) acc[e] += ds * To<double>(kj[e]);
                 return true;
               });
    if (!rt.live) return;
    for (int64_t e = 0; e < d; ++e) dq[t * d + e] = To<T>(scale * acc[e]);
   });
}

// dk_j = scale * sum_i ds_ij q_i, dv_j = sum_i p_ij dout_i; a thread per
// key row, Q and dout staged (from the first query row that sees the
// block's first key); lse and delta are read where every thread reads the
// same element (a broadcast). A padded key's thread only helps stage: its
// dk and dv are 0.
template <typename T>
__global__ void __launch_bounds__(kTileRows)
    AttentionBackwardKV(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv, int64_t tile,
                        double scale, bool causal, int64_t shift, KeyMask mask, const T* q,
                        const T* k, const T* v, const T* dout, const double* lse,
                        const double* delta, T* dk, T* dvv) {
  const Stage<T> st(tile, d);
  ForRowTiles(bh, sk, [&](const RowTile& rt) {
    const int64_t b = rt.b, j = rt.r, t = rt.t;
    const int64_t first = causal ? FirstQuery(rt.r0, sq, shift) : 0;
    double ak[kMaxHead], av[kMaxHead];
    for (int64_t e = 0; e < d; ++e) ak[e] = 0;
    for (int64_t e = 0; e < dv; ++e) av[e] = 0;
    const bool kept = rt.live && KeyKept(mask, b, j, sk);
    StreamRows(q + b * sq * d, d, dout + b * sq * dv, dv, first, sq, tile, st.a, st.b, kept,
               [&](int64_t i, const T* qi, const T* gi) {
                 if (Masked(causal, i, j, shift)) return true;  // later rows may see j
                 const int64_t row = b * sq + i;
                 const double p = exp(scale * Dot(qi, k + t * d, d) - lse[row]);
                 if (p == 0) return true;  // skipped, as on the CPU (0 * inf)
                 const double ds = p * (Dot(gi, v + t * dv, dv) - delta[row]);
                 for (int64_t e = 0; e < d; ++e) ak[e] += ds * To<double>(qi[e]);
                 for (int64_t e = 0; e < dv; ++e) av[e] += p * To<double>(gi[e]);
                 return true;
               });
    if (!rt.live) return;
    for (int64_t e = 0; e < d; ++e) dk[t * d + e] = To<T>(scale * ak[e]);
    for (int64_t e = 0; e < dv; ++e) dvv[t * dv + e] = To<T>(av[e]);
   });
}

// Blocks for `rows` rows of each of bh batch-heads in tiles of kTileRows
// (capped; the kernels grid-stride).
unsigned TileBlocks(int64_t bh, int64_t rows) {
  return GridFor(bh * ((rows + kTileRows - 1) / kTileRows), 1);
}

// Rows a staged tile holds: as many rows of width d + dv (elements of
// `elem` bytes) as fit in kStageBytes, at most kTileRows. With head dims
// up to kMaxHead in doubles that is 12 rows, never 0.
int64_t StageRows(int64_t d, int64_t dv, size_t elem) {
  const int64_t row = (d + dv) * static_cast<int64_t>(elem);
  return row == 0 ? kTileRows : std::min<int64_t>(kTileRows, kStageBytes / row);
}

// "" if the head dims fit the kernels' per-thread arrays.
std::string CheckHeadDims(const char* name, int64_t d, int64_t dv) {
  if (d <= kMaxHead && dv <= kMaxHead) return "";
  return std::string(name) + ": head dims " + std::to_string(d) + ", " + std::to_string(dv) +
         " above " + std::to_string(kMaxHead);
}

}  // namespace

std::string Attention(int dtype, int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                      double scale, bool causal, const void* q, const void* k, const void* v,
                      void* out, double* lse, int64_t shift, KeyMask mask) {
  const char* name = "scaled_dot_product_attention";
  if (shift == kShiftSkMinusSq) shift = sk - sq;
  std::string e = CheckHeadDims(name, d, dv);
  if (!e.empty() || bh * sq == 0) return e;
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const int64_t tile = StageRows(d, dv, sizeof(T));
    AttentionForward<T, false><<<TileBlocks(bh, sq), kTileRows, tile * (d + dv) * sizeof(T),
                                 Stream()>>>(
        bh, sq, sk, d, dv, tile, scale, causal, shift, mask, static_cast<const T*>(q),
        static_cast<const T*>(k), static_cast<const T*>(v), /*dout=*/nullptr,
        static_cast<T*>(out), lse, /*delta=*/nullptr);
    return LaunchError(name);
  });
}

std::string AttentionGrad(int dtype, int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                          double scale, bool causal, const void* q, const void* k, const void* v,
                          const void* dout, void* dq, void* dk, void* dvv, int64_t shift,
                          KeyMask mask) {
  const char* name = "scaled_dot_product_attention_grad";
  if (shift == kShiftSkMinusSq) shift = sk - sq;
  std::string e = CheckHeadDims(name, d, dv);
  if (!e.empty() || bh == 0) return e;
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const T* qt = static_cast<const T*>(q);
    const T* kt = static_cast<const T*>(k);
    const T* vt = static_cast<const T*>(v);
    const T* gt = static_cast<const T*>(dout);
    // lse [bh * sq] then delta [bh * sq], recomputed (freed after the
    // stream drains).
    Upload stats;
    std::string err = stats.Allocate(2 * bh * sq * static_cast<int64_t>(sizeof(double)));
    if (!err.empty()) return std::string(name) + ": " + err;
    double* lse = stats.at<double>(0);
    double* delta = lse + bh * sq;
    // One staged tile size for the three kernels: each stages rows of
    // width d + dv (K and V, or Q and dout).
    const int64_t tile = StageRows(d, dv, sizeof(T));
    const size_t bytes = tile * (d + dv) * sizeof(T);
    if (sq > 0) {
      AttentionForward<T, true><<<TileBlocks(bh, sq), kTileRows, bytes, Stream()>>>(
          bh, sq, sk, d, dv, tile, scale, causal, shift, mask, qt, kt, vt, gt, /*out=*/nullptr, lse,
          delta);
      AttentionBackwardQ<T><<<TileBlocks(bh, sq), kTileRows, bytes, Stream()>>>(
          bh, sq, sk, d, dv, tile, scale, causal, shift, mask, qt, kt, vt, gt, lse, delta,
          static_cast<T*>(dq));
    }
    if (sk > 0) {
      AttentionBackwardKV<T><<<TileBlocks(bh, sk), kTileRows, bytes, Stream()>>>(
          bh, sq, sk, d, dv, tile, scale, causal, shift, mask, qt, kt, vt, gt, lse, delta,
          static_cast<T*>(dk), static_cast<T*>(dvv));
    }
    return LaunchError(name);
  });
}

}  // namespace oneflow_sbp::kernels::cuda
