// The SIMD float GEMM (kernels/cpu/sgemm_simd.h), on every instruction
// set this CPU runs (AVX2+FMA, and AVX-512 where present), against the
// header's exact arithmetic written out in scalar std::fma: every
// transpose, tile remainders in m and n, more columns than one packed
// block, alpha, accumulate and k == 0, compared bit for bit. Bits equal to
// the scalar chain also mean the two instruction sets agree with each
// other, and a row or column slice of a product equals the same slice of
// the whole product (checked directly too). Skipped where the CPU has
// neither (the kernel then declines, and gemm.h uses Eigen).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/sgemm_simd.h"

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

// The instruction sets this CPU runs, narrowest first.
std::vector<SgemmIsa> Runnable() {
  std::vector<SgemmIsa> isas;
  if (BestSgemmIsa() != SgemmIsa::kNone) isas.push_back(SgemmIsa::kAvx2);
  if (BestSgemmIsa() == SgemmIsa::kAvx512) isas.push_back(SgemmIsa::kAvx512);
  return isas;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class SgemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Runnable().empty()) GTEST_SKIP() << "neither AVX2+FMA nor AVX-512 on this CPU";
  }
};

TEST_F(SgemmTest, EqualsTheScalarFmaChainForEveryLayoutAndIsa) {
  const int64_t shapes[][3] = {{1, 1, 1},  {8, 32, 16},  {7, 31, 5},    {9, 33, 64},
                               {6, 16, 7}, {13, 17, 9},  {17, 65, 3},   {3, 600, 40},
                               {40, 7, 300}, {16, 4100, 33}};
  for (SgemmIsa isa : Runnable()) {
    for (const auto& s : shapes) {
      const int64_t m = s[0], n = s[1], k = s[2];
      for (int t = 0; t < 8; ++t) {
        const bool ta = t & 1, tb = t & 2, acc = t & 4;
        const float alpha = acc ? 0.75f : (t & 1 ? 1.0f : -1.5f);
        const std::vector<float> a = Values(m * k, 1), b = Values(k * n, 2),
                                 c0 = Values(m * n, 3);
        std::vector<float> out = c0;
        ASSERT_TRUE(SgemmWith(isa, ta, tb, m, n, k, alpha, a.data(), b.data(), acc, out.data()));
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            float chain = 0.0f;
            double exact = 0;
            for (int64_t p = 0; p < k; ++p) {
              chain = std::fma(At(a, ta, m, k, i, p), At(b, tb, k, n, p, j), chain);
              exact += double{At(a, ta, m, k, i, p)} * At(b, tb, k, n, p, j);
            }
            const float want = acc ? std::fma(chain, alpha, c0[i * n + j]) : chain * alpha;
            ASSERT_TRUE(SameBits(out[i * n + j], want))
                << SgemmIsaName(isa) << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta
                << " tb=" << tb << " accumulate=" << acc << " at (" << i << ", " << j
                << "): " << out[i * n + j] << " vs " << want;
            // And the chain is a good product, not merely a reproducible one.
            ASSERT_NEAR(out[i * n + j], alpha * exact + (acc ? c0[i * n + j] : 0.0),
                        1e-5 * (k + 1));
          }
        }
      }
    }
  }
}

TEST_F(SgemmTest, EmptyContractionZeroesOrKeeps) {
  for (SgemmIsa isa : Runnable()) {
    std::vector<float> out(6, 2.0f);
    ASSERT_TRUE(SgemmWith(isa, false, false, 2, 3, 0, 1.0f, nullptr, nullptr, true, out.data()));
    EXPECT_EQ(out, std::vector<float>(6, 2.0f));
    ASSERT_TRUE(SgemmWith(isa, false, false, 2, 3, 0, 1.0f, nullptr, nullptr, false, out.data()));
    EXPECT_EQ(out, std::vector<float>(6, 0.0f));
  }
}

TEST_F(SgemmTest, SlicesReproduceTheWholeProductBitForBit) {
  // A Linear layer's shapes: x [m, k] times w [n, k]^T.
  const int64_t m = 37, n = 70, k = 384;
  const std::vector<float> x = Values(m * k, 4), w = Values(n * k, 5);
  for (SgemmIsa isa : Runnable()) {
    std::vector<float> whole(m * n);
    ASSERT_TRUE(SgemmWith(isa, false, true, m, n, k, 1.0f, x.data(), w.data(), false,
                          whole.data()));
    // Rows [13, 37) alone (data parallel).
    std::vector<float> rows((m - 13) * n);
    ASSERT_TRUE(SgemmWith(isa, false, true, m - 13, n, k, 1.0f, x.data() + 13 * k, w.data(),
                          false, rows.data()));
    for (int64_t i = 0; i < (m - 13) * n; ++i) ASSERT_EQ(rows[i], whole[13 * n + i]) << i;
    // Columns [35, 70) alone (tensor parallel: w's rows split).
    std::vector<float> cols(m * 35);
    ASSERT_TRUE(SgemmWith(isa, false, true, m, 35, k, 1.0f, x.data(), w.data() + 35 * k, false,
                          cols.data()));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < 35; ++j) ASSERT_EQ(cols[i * 35 + j], whole[i * n + 35 + j]);
    }
  }
}

TEST(SgemmDecline, UnrunnableIsaOrHugeKTouchesNothing) {
  std::vector<float> out(4, 3.0f);
  const std::vector<float> a(2 * 16385, 1.0f), b(16385 * 2, 1.0f);
  EXPECT_FALSE(SgemmWith(SgemmIsa::kNone, false, false, 2, 2, 1, 1.0f, a.data(), b.data(), false,
                         out.data()));
  EXPECT_FALSE(SgemmWith(BestSgemmIsa(), false, false, 2, 2, 16385, 1.0f, a.data(), b.data(),
                         false, out.data()));
  if (BestSgemmIsa() != SgemmIsa::kAvx512) {
    EXPECT_FALSE(SgemmWith(SgemmIsa::kAvx512, false, false, 2, 2, 1, 1.0f, a.data(), b.data(),
                           false, out.data()));
  }
  EXPECT_EQ(out, std::vector<float>(4, 3.0f));
  EXPECT_STRNE(SgemmIsaName(BestSgemmIsa()), "");
}

}  // namespace
}  // namespace oneflow_sbp::kernels
