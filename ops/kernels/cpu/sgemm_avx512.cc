#include "ops/kernels/cpu/sgemm_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace oneflow_sbp::kernels {
namespace {

// Register tile: kMr rows of out by kNr = 32 columns (two zmm registers a
// row), 2 * kMr accumulators. B is packed into panels of 32 columns by k
// rows (zero-padded past n), so the tile reads one contiguous stream of b
// and broadcasts one element of a per row and k.
constexpr int kNr = 32;
constexpr int kMr = 8;
// A block of packed B (k x nc) is sized for the L2 cache; every m tile
// sweeps its panels. The whole k is summed in registers (no k blocking):
// each element of out is one chain of fused multiply-adds in k order, so
// the result does not depend on where the element sits (see the header).
constexpr int64_t kPackFloats = int64_t{1} << 17;  // 512 KiB
constexpr int64_t kMaxK = 16384;

// Where the CPU has AVX-512F and the OS saves its registers (libgcc's
// cpu check reads XCR0).
bool Detect() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

// out rows [0, MR) x columns [0, cols) of this tile (cols <= 32):
// out = alpha * sum_p a(r, p) * panel(p, :) (+ out when accumulate).
template <int MR>
__attribute__((target("avx512f"))) void Tile(int64_t k, const float* a, int64_t rs, int64_t cs,
                                             const float* panel, float* out, int64_t ldo,
                                             int cols, float alpha, bool accumulate) {
  __m512 lo[MR], hi[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const __m512 b0 = _mm512_loadu_ps(panel + p * kNr);
    const __m512 b1 = _mm512_loadu_ps(panel + p * kNr + 16);
    const float* ap = a + p * cs;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r * rs]);
      lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
    }
  }
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32   ? __mmask16(0xFFFF)
                       : cols > 16 ? __mmask16((1u << (cols - 16)) - 1)
                                   : __mmask16(0);
  const __m512 va = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* o = out + r * ldo;
    __m512 v0 = _mm512_mul_ps(lo[r], va);
    __m512 v1 = _mm512_mul_ps(hi[r], va);
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, o));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, o + 16));
    }
    _mm512_mask_storeu_ps(o, m0, v0);
    _mm512_mask_storeu_ps(o + 16, m1, v1);
  }
}

using TileFn = void (*)(int64_t, const float*, int64_t, int64_t, const float*, float*, int64_t,
                        int, float, bool);
constexpr TileFn kTiles[kMr + 1] = {nullptr,  &Tile<1>, &Tile<2>, &Tile<3>, &Tile<4>,
                                    &Tile<5>, &Tile<6>, &Tile<7>, &Tile<8>};

// Packs columns [n0, n0 + nc) of op(b) (all k rows) into panels of kNr
// columns, each k x kNr row-major, zeros past n.
void PackB(bool tb, int64_t n, int64_t k, const float* b, int64_t n0, int64_t nc, float* dst) {
  for (int64_t j0 = 0; j0 < nc; j0 += kNr) {
    float* panel = dst + j0 * k;
    const int64_t cols = std::min<int64_t>(kNr, nc - j0);
    if (tb) {  // b is [n, k]: column j of op(b) is row j of b
      for (int64_t j = 0; j < kNr; ++j) {
        if (j < cols) {
          const float* src = b + (n0 + j0 + j) * k;
          for (int64_t p = 0; p < k; ++p) panel[p * kNr + j] = src[p];
        } else {
          for (int64_t p = 0; p < k; ++p) panel[p * kNr + j] = 0.0f;
        }
      }
    } else {  // b is [k, n]
      for (int64_t p = 0; p < k; ++p) {
        const float* src = b + p * n + n0 + j0;
        float* row = panel + p * kNr;
        std::copy(src, src + cols, row);
        std::fill(row + cols, row + kNr, 0.0f);
      }
    }
  }
}

}  // namespace

bool HasSgemmAvx512() {
  static const bool has = Detect();
  return has;
}

bool SgemmAvx512(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 const float* b, bool accumulate, float* out) {
  if (!HasSgemmAvx512() || k > kMaxK) return false;
  if (m == 0 || n == 0) return true;
  if (k == 0) {
    if (!accumulate) std::fill(out, out + m * n, 0.0f);
    return true;
  }
  // a(i, p) = a[i * rs + p * cs].
  const int64_t rs = ta ? 1 : k, cs = ta ? m : 1;
  // Columns per packed block: a multiple of kNr whose k x nc floats fit
  // kPackFloats (at least one panel).
  const int64_t nc_max = std::max<int64_t>(kNr, kPackFloats / k / kNr * kNr);
  // Rank threads each keep their own buffer; it only grows.
  thread_local std::vector<float> packed;
  const int64_t need = std::min(nc_max, (n + kNr - 1) / kNr * kNr) * k;
  if (static_cast<int64_t>(packed.size()) < need) packed.resize(need);
  for (int64_t n0 = 0; n0 < n; n0 += nc_max) {
    const int64_t nc = std::min(nc_max, n - n0);
    PackB(tb, n, k, b, n0, nc, packed.data());
    for (int64_t i0 = 0; i0 < m; i0 += kMr) {
      const int rows = static_cast<int>(std::min<int64_t>(kMr, m - i0));
      const TileFn tile = kTiles[rows];
      for (int64_t j0 = 0; j0 < nc; j0 += kNr) {
        const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - j0));
        tile(k, a + i0 * rs, rs, cs, packed.data() + j0 * k, out + i0 * n + n0 + j0, n, cols,
             alpha, accumulate);
      }
    }
  }
  return true;
}

}  // namespace oneflow_sbp::kernels
