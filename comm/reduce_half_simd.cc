#include "comm/reduce_half_simd.h"

#include <immintrin.h>

#include <atomic>
#include <cstring>

namespace oneflow_sbp::comm {
namespace {

bool Detect() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}

#define OFS_HALF_TARGET __attribute__((target("avx2,f16c")))

// 8 halves in, 8 floats out.
OFS_HALF_TARGET __m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
OFS_HALF_TARGET __m256 LoadBF16(const uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

// Every NaN lane as the quiet NaN 0x7fc00000 with its own sign: rounding
// that to a half gives the portable Store's canonical NaN.
OFS_HALF_TARGET __m256 CanonicalNaN(__m256 r) {
  const __m256 nan = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);
  const __m256 sign = _mm256_and_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
  const __m256 quiet = _mm256_or_ps(sign, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
  return _mm256_blendv_ps(r, quiet, nan);
}

OFS_HALF_TARGET void StoreF16(uint16_t* p, __m256 r) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(CanonicalNaN(r), _MM_FROUND_TO_NEAREST_INT));
}

// Round to nearest even on the 16 dropped bits; NaN -> sign | 0x7fc0.
OFS_HALF_TARGET void StoreBF16(uint16_t* p, __m256 r) {
  const __m256i u = _mm256_castps_si256(CanonicalNaN(r));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i rounded = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  // A canonical NaN must not round (0x7fc0ffff would carry): keep its top.
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(r, r, _CMP_UNORD_Q));
  rounded = _mm256_blendv_epi8(rounded, u, nan);
  const __m256i top = _mm256_srli_epi32(rounded, 16);
  // Pack 8 x 32 -> 8 x 16 (values fit): per 128-bit lane, then gather.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(top, top), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}

template <ReduceOp kOp>
OFS_HALF_TARGET __m256 Apply(__m256 a, __m256 b) {
  if constexpr (kOp == ReduceOp::kSum) {
    return _mm256_add_ps(a, b);
  } else {
    // reduce_op.cc's ExtremumOp: (max ? a < b : b < a) ? b : a, then a NaN
    // b wins, then a NaN a wins.
    const __m256 take_b = kOp == ReduceOp::kMax ? _mm256_cmp_ps(a, b, _CMP_LT_OQ)
                                                : _mm256_cmp_ps(b, a, _CMP_LT_OQ);
    __m256 r = _mm256_blendv_ps(a, b, take_b);
    r = _mm256_blendv_ps(r, b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
    return _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
}

template <bool kF16, ReduceOp kOp>
OFS_HALF_TARGET void Block(const uint16_t* x, const uint16_t* y, uint16_t* o) {
  const __m256 vx = kF16 ? LoadF16(x) : LoadBF16(x);
  const __m256 vy = kF16 ? LoadF16(y) : LoadBF16(y);
  const __m256 r = Apply<kOp>(vx, vy);
  if constexpr (kF16) {
    StoreF16(o, r);
  } else {
    StoreBF16(o, r);
  }
}

template <bool kF16, ReduceOp kOp>
OFS_HALF_TARGET void Run(const uint16_t* a, const uint16_t* b, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) Block<kF16, kOp>(a + i, b + i, out + i);
  if (i < n) {
    // The tail through whole vectors too, so its results are the same bits.
    uint16_t x[8] = {}, y[8] = {}, o[8];
    std::memcpy(x, a + i, (n - i) * sizeof(uint16_t));
    std::memcpy(y, b + i, (n - i) * sizeof(uint16_t));
    Block<kF16, kOp>(x, y, o);
    std::memcpy(out + i, o, (n - i) * sizeof(uint16_t));
  }
}

template <bool kF16>
void Dispatch(ReduceOp op, const uint16_t* a, const uint16_t* b, uint16_t* out, int64_t n) {
  switch (op) {
    case ReduceOp::kSum:
      return Run<kF16, ReduceOp::kSum>(a, b, out, n);
    case ReduceOp::kMax:
      return Run<kF16, ReduceOp::kMax>(a, b, out, n);
    case ReduceOp::kMin:
      return Run<kF16, ReduceOp::kMin>(a, b, out, n);
  }
}

std::atomic<bool> g_enabled{true};

}  // namespace

bool HasReduceHalfSimd() {
  static const bool has = Detect();
  return has;
}

void SetReduceHalfSimdEnabledForTesting(bool enabled) { g_enabled.store(enabled); }

bool ReduceHalfSimd(ReduceOp op, DataType dtype, const void* a, const void* b, void* out,
                    int64_t count) {
  if ((dtype != DataType::kFloat16 && dtype != DataType::kBFloat16) || !HasReduceHalfSimd() ||
      !g_enabled.load(std::memory_order_relaxed)) {
    return false;
  }
  // Each vector is loaded whole before it is stored, so out may be a or b.
  const auto* x = static_cast<const uint16_t*>(a);
  const auto* y = static_cast<const uint16_t*>(b);
  auto* o = static_cast<uint16_t*>(out);
  if (dtype == DataType::kFloat16) {
    Dispatch<true>(op, x, y, o, count);
  } else {
    Dispatch<false>(op, x, y, o, count);
  }
  return true;
}

}  // namespace oneflow_sbp::comm
