#include "kernels/cpu/gelu_simd.h"

#include <immintrin.h>

#include <algorithm>

namespace oneflow_sbp::kernels {
namespace {

bool Detect() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// x/2 * (1 + erf(x / sqrt 2)) on 8 lanes. The polynomial's coefficients are
// those of Eigen 3.4's generic_fast_erf_float (SpecialFunctionsImpl.h).
__attribute__((target("avx2,fma"))) __m256 Gelu8(__m256 v) {
  const __m256 y = _mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f));
  const __m256 x = _mm256_max_ps(_mm256_min_ps(y, _mm256_set1_ps(4.0f)), _mm256_set1_ps(-4.0f));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_fmadd_ps(x2, _mm256_set1_ps(-2.72614225801306e-10f),
                             _mm256_set1_ps(2.77068142495902e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.10102402082508e-06f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-5.69250639462346e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-7.34990630326855e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.95459980854025e-03f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-1.60960333262415e-02f));
  p = _mm256_mul_ps(x, p);
  __m256 q = _mm256_fmadd_ps(x2, _mm256_set1_ps(-1.45660718464996e-05f),
                             _mm256_set1_ps(-2.13374055278905e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.68282697438203e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-7.37332916720468e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.42647390514189e-02f));
  const __m256 erf = _mm256_div_ps(p, q);
  const __m256 half_x = _mm256_mul_ps(v, _mm256_set1_ps(0.5f));
  return _mm256_mul_ps(half_x, _mm256_add_ps(_mm256_set1_ps(1.0f), erf));
}

__attribute__((target("avx2,fma"))) void Run(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, Gelu8(_mm256_loadu_ps(in + i)));
  if (i < n) {
    float tail[8] = {};
    std::copy(in + i, in + n, tail);
    _mm256_storeu_ps(tail, Gelu8(_mm256_loadu_ps(tail)));
    std::copy(tail, tail + (n - i), out + i);
  }
}

}  // namespace

bool GeluF32Simd(const float* in, float* out, int64_t n) {
  static const bool has = Detect();
  if (!has) return false;
  Run(in, out, n);
  return true;
}

}  // namespace oneflow_sbp::kernels
