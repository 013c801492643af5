#include "kernels/cpu/sgemm_simd.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace oneflow_sbp::kernels {
namespace {

// Register tiles: MR rows of out by NR columns (two vector registers a
// row), 2 * MR accumulators: 8 x 32 on AVX-512 (16 of 32 zmm), 6 x 16 on
// AVX2 (12 of 16 ymm, leaving two for b and one for the broadcast a). B is
// packed into panels of NR columns by k rows (zero-padded past n), so a
// tile reads one contiguous stream of b and broadcasts one element of a
// per row and k.
//
// A block of packed B (k x nc) is sized for the L2 cache; every m tile
// sweeps its panels. The whole k is summed in registers (no k blocking):
// each element of out is one chain of fused multiply-adds in k order (see
// the header for why that matters).
constexpr int64_t kPackFloats = int64_t{1} << 17;  // 512 KiB
constexpr int64_t kMaxK = 16384;

// Where the CPU has the instructions and the OS saves their registers
// (libgcc's cpu check reads XCR0).
SgemmIsa Detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return SgemmIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SgemmIsa::kAvx2;
  return SgemmIsa::kNone;
}

// out rows [0, MR) x columns [0, cols) of one tile (cols <= 32):
// out = alpha * sum_p a(r, p) * panel(p, :), or fma(that sum, alpha, out).
template <int MR>
__attribute__((target("avx512f"))) void TileAvx512(int64_t k, const float* a, int64_t rs,
                                                   int64_t cs, const float* panel, float* out,
                                                   int64_t ldo, int cols, float alpha,
                                                   bool accumulate) {
  constexpr int kNr = 32;
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
    __m512 v0, v1;
    if (accumulate) {
      v0 = _mm512_fmadd_ps(lo[r], va, _mm512_maskz_loadu_ps(m0, o));
      v1 = _mm512_fmadd_ps(hi[r], va, _mm512_maskz_loadu_ps(m1, o + 16));
    } else {
      v0 = _mm512_mul_ps(lo[r], va);
      v1 = _mm512_mul_ps(hi[r], va);
    }
    _mm512_mask_storeu_ps(o, m0, v0);
    _mm512_mask_storeu_ps(o + 16, m1, v1);
  }
}

// Lanes [0, count) of a ymm mask (count clamped to [0, 8]).
__attribute__((target("avx2"))) __m256i LaneMask(int count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// As TileAvx512 with 16 columns (cols <= 16).
template <int MR>
__attribute__((target("avx2,fma"))) void TileAvx2(int64_t k, const float* a, int64_t rs,
                                                  int64_t cs, const float* panel, float* out,
                                                  int64_t ldo, int cols, float alpha,
                                                  bool accumulate) {
  constexpr int kNr = 16;
  __m256 lo[MR], hi[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const __m256 b0 = _mm256_loadu_ps(panel + p * kNr);
    const __m256 b1 = _mm256_loadu_ps(panel + p * kNr + 8);
    const float* ap = a + p * cs;
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(ap + r * rs);
      lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (cols == kNr) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float* o = out + r * ldo;
      if (accumulate) {
        _mm256_storeu_ps(o, _mm256_fmadd_ps(lo[r], va, _mm256_loadu_ps(o)));
        _mm256_storeu_ps(o + 8, _mm256_fmadd_ps(hi[r], va, _mm256_loadu_ps(o + 8)));
      } else {
        _mm256_storeu_ps(o, _mm256_mul_ps(lo[r], va));
        _mm256_storeu_ps(o + 8, _mm256_mul_ps(hi[r], va));
      }
    }
    return;
  }
  const __m256i m0 = LaneMask(cols), m1 = LaneMask(cols - 8);
  // Fully unrolled like every loop over the accumulators: a loop GCC
  // leaves rolled indexes lo/hi by a variable, which keeps them in memory
  // and stores all twelve on every k step (half the speed).
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    float* o = out + r * ldo;
    __m256 v0, v1;
    if (accumulate) {
      v0 = _mm256_fmadd_ps(lo[r], va, _mm256_maskload_ps(o, m0));
      v1 = _mm256_fmadd_ps(hi[r], va, _mm256_maskload_ps(o + 8, m1));
    } else {
      v0 = _mm256_mul_ps(lo[r], va);
      v1 = _mm256_mul_ps(hi[r], va);
    }
    _mm256_maskstore_ps(o, m0, v0);
    _mm256_maskstore_ps(o + 8, m1, v1);
  }
}

using TileFn = void (*)(int64_t, const float*, int64_t, int64_t, const float*, float*, int64_t,
                        int, float, bool);

struct Kernel {
  int mr;              // rows of a full tile
  int nr;              // columns of a panel and a tile
  const TileFn* tiles;  // tiles[rows] for rows in [1, mr]
};

constexpr TileFn kAvx512Tiles[] = {nullptr,           &TileAvx512<1>, &TileAvx512<2>,
                                   &TileAvx512<3>,    &TileAvx512<4>, &TileAvx512<5>,
                                   &TileAvx512<6>,    &TileAvx512<7>, &TileAvx512<8>};
constexpr TileFn kAvx2Tiles[] = {nullptr,      &TileAvx2<1>, &TileAvx2<2>, &TileAvx2<3>,
                                 &TileAvx2<4>, &TileAvx2<5>, &TileAvx2<6>};

// Packs columns [n0, n0 + nc) of op(b) (all k rows) into panels of nr
// columns, each k x nr row-major, zeros past n.
void PackB(bool tb, int64_t n, int64_t k, const float* b, int64_t n0, int64_t nc, int nr,
           float* dst) {
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    float* panel = dst + j0 * k;
    const int64_t cols = std::min<int64_t>(nr, nc - j0);
    if (tb) {  // b is [n, k]: column j of op(b) is row j of b
      for (int64_t j = 0; j < nr; ++j) {
        if (j < cols) {
          const float* src = b + (n0 + j0 + j) * k;
          for (int64_t p = 0; p < k; ++p) panel[p * nr + j] = src[p];
        } else {
          for (int64_t p = 0; p < k; ++p) panel[p * nr + j] = 0.0f;
        }
      }
    } else {  // b is [k, n]
      for (int64_t p = 0; p < k; ++p) {
        const float* src = b + p * n + n0 + j0;
        float* row = panel + p * nr;
        std::copy(src, src + cols, row);
        std::fill(row + cols, row + nr, 0.0f);
      }
    }
  }
}

void Run(const Kernel& kernel, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
         const float* a, const float* b, bool accumulate, float* out) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill(out, out + m * n, 0.0f);
    return;
  }
  const int64_t nr = kernel.nr;
  // a(i, p) = a[i * rs + p * cs].
  const int64_t rs = ta ? 1 : k, cs = ta ? m : 1;
  // Columns per packed block: a multiple of nr whose k x nc floats fit
  // kPackFloats (at least one panel).
  const int64_t nc_max = std::max<int64_t>(nr, kPackFloats / k / nr * nr);
  // Rank threads each keep their own buffer; it only grows.
  thread_local std::vector<float> packed;
  const int64_t need = std::min(nc_max, (n + nr - 1) / nr * nr) * k;
  if (static_cast<int64_t>(packed.size()) < need) packed.resize(need);
  for (int64_t n0 = 0; n0 < n; n0 += nc_max) {
    const int64_t nc = std::min(nc_max, n - n0);
    PackB(tb, n, k, b, n0, nc, kernel.nr, packed.data());
    for (int64_t i0 = 0; i0 < m; i0 += kernel.mr) {
      const int rows = static_cast<int>(std::min<int64_t>(kernel.mr, m - i0));
      const TileFn tile = kernel.tiles[rows];
      for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        const int cols = static_cast<int>(std::min<int64_t>(nr, nc - j0));
        tile(k, a + i0 * rs, rs, cs, packed.data() + j0 * k, out + i0 * n + n0 + j0, n, cols,
             alpha, accumulate);
      }
    }
  }
}

}  // namespace

SgemmIsa BestSgemmIsa() {
  static const SgemmIsa isa = Detect();
  return isa;
}

const char* SgemmIsaName(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      return "avx512";
    case SgemmIsa::kAvx2:
      return "avx2+fma";
    case SgemmIsa::kNone:
      break;
  }
  return "none";
}

bool SgemmWith(SgemmIsa isa, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, const float* b, bool accumulate, float* out) {
  if (k > kMaxK) return false;
  const SgemmIsa best = BestSgemmIsa();
  // AVX-512F machines all have AVX2 and FMA (every AVX-512 CPU shipped
  // does), so a narrower request than the best is runnable.
  if (isa == SgemmIsa::kAvx512 && best == SgemmIsa::kAvx512) {
    Run(Kernel{8, 32, kAvx512Tiles}, ta, tb, m, n, k, alpha, a, b, accumulate, out);
    return true;
  }
  if (isa == SgemmIsa::kAvx2 && best != SgemmIsa::kNone) {
    Run(Kernel{6, 16, kAvx2Tiles}, ta, tb, m, n, k, alpha, a, b, accumulate, out);
    return true;
  }
  return false;
}

bool Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           const float* b, bool accumulate, float* out) {
  return SgemmWith(BestSgemmIsa(), ta, tb, m, n, k, alpha, a, b, accumulate, out);
}

}  // namespace oneflow_sbp::kernels
