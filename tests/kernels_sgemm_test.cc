// The AVX-512 float GEMM (ops/kernels/cpu/sgemm_avx512.h) against a plain
// double-accumulated product: every transpose, tile remainders in m and n
// (8-row and 32-column tiles), more columns than one packed block, alpha,
// accumulate and k == 0; and the bit-for-bit promise: a row or column
// slice of the product equals the same slice of the whole product.
// Skipped on a CPU without AVX-512 (the kernel then declines).
#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "ops/kernels/cpu/sgemm_avx512.h"

namespace oneflow_sbp::kernels {
namespace {

// Deterministic values in [-1, 1) with a varied mantissa.
std::vector<float> Values(int64_t count, uint32_t seed) {
  std::vector<float> v(count);
  uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

float At(const std::vector<float>& x, bool t, int64_t rows, int64_t cols, int64_t i, int64_t j) {
  // x holds op(x) [rows, cols] as [cols, rows] when t.
  return t ? x[j * rows + i] : x[i * cols + j];
}

class SgemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasSgemmAvx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  }
};

TEST_F(SgemmTest, MatchesReferenceForEveryLayout) {
  const int64_t shapes[][3] = {{1, 1, 1},   {8, 32, 16},  {7, 31, 5},   {9, 33, 64},
                               {17, 65, 3}, {3, 600, 40}, {40, 7, 300}, {16, 4100, 33}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    for (int t = 0; t < 8; ++t) {
      const bool ta = t & 1, tb = t & 2, acc = t & 4;
      const float alpha = acc ? 0.5f : 1.0f;
      const std::vector<float> a = Values(m * k, 1), b = Values(k * n, 2), c0 = Values(m * n, 3);
      std::vector<float> out = c0;
      ASSERT_TRUE(SgemmAvx512(ta, tb, m, n, k, alpha, a.data(), b.data(), acc, out.data()));
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < k; ++p) {
            want += double{At(a, ta, m, k, i, p)} * At(b, tb, k, n, p, j);
          }
          want = alpha * want + (acc ? c0[i * n + j] : 0.0);
          ASSERT_NEAR(out[i * n + j], want, 1e-5 * (k + 1))
              << "m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb
              << " accumulate=" << acc << " at (" << i << ", " << j << ")";
        }
      }
    }
  }
}

TEST_F(SgemmTest, EmptyContractionZeroesOrKeeps) {
  std::vector<float> out(6, 2.0f);
  ASSERT_TRUE(SgemmAvx512(false, false, 2, 3, 0, 1.0f, nullptr, nullptr, true, out.data()));
  EXPECT_EQ(out, std::vector<float>(6, 2.0f));
  ASSERT_TRUE(SgemmAvx512(false, false, 2, 3, 0, 1.0f, nullptr, nullptr, false, out.data()));
  EXPECT_EQ(out, std::vector<float>(6, 0.0f));
}

TEST_F(SgemmTest, SlicesReproduceTheWholeProductBitForBit) {
  // A Linear layer's shapes: x [m, k] times w [n, k]^T.
  const int64_t m = 37, n = 70, k = 384;
  const std::vector<float> x = Values(m * k, 4), w = Values(n * k, 5);
  std::vector<float> whole(m * n);
  ASSERT_TRUE(SgemmAvx512(false, true, m, n, k, 1.0f, x.data(), w.data(), false, whole.data()));
  // Rows [13, 37) alone (data parallel).
  std::vector<float> rows((m - 13) * n);
  ASSERT_TRUE(SgemmAvx512(false, true, m - 13, n, k, 1.0f, x.data() + 13 * k, w.data(), false,
                          rows.data()));
  for (int64_t i = 0; i < (m - 13) * n; ++i) ASSERT_EQ(rows[i], whole[13 * n + i]) << i;
  // Columns [35, 70) alone (tensor parallel: w's rows split).
  std::vector<float> cols(m * 35);
  ASSERT_TRUE(SgemmAvx512(false, true, m, 35, k, 1.0f, x.data(), w.data() + 35 * k, false,
                          cols.data()));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < 35; ++j) ASSERT_EQ(cols[i * 35 + j], whole[i * n + 35 + j]);
  }
}

}  // namespace
}  // namespace oneflow_sbp::kernels
