// The nn launchers of kernels/cuda/nn.cu (layer_norm, rms_norm, adam,
// rotary, attention), embedding.cu and cross_entropy.cu (fwd and grads)
// against plain loops written here (GPU only; part of cuda_kernels_test,
// whose main() prints "SKIPPED: no CUDA device" without one), at the
// launcher level. All but Rotary are also registered as kernels;
// cuda_kernels_test.cc and cuda_index_kernels_test.cc compare those with
// the CPU kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp {
namespace {

namespace k = kernels::cuda;
using Vec = std::vector<float>;

#define REQUIRE_DEVICE() \
  if (cuda::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device"

// A device copy of a host vector, freed at scope exit.
template <typename T>
class Dev {
 public:
  explicit Dev(const std::vector<T>& host) : n_(host.size()) {
    EXPECT_EQ(cuda::Malloc(&p_, std::max<size_t>(n_, 1) * sizeof(T)), "");
    if (n_ > 0) {
      EXPECT_EQ(cuda::Copy(p_, host.data(), n_ * sizeof(T), 1), "");
    }
  }
  explicit Dev(size_t n) : Dev(std::vector<T>(n, T{})) {}
  ~Dev() { cuda::Free(p_); }
  T* get() { return static_cast<T*>(p_); }
  std::vector<T> Host() const {
    std::vector<T> h(n_);
    if (n_ > 0) {
      EXPECT_EQ(cuda::Copy(h.data(), p_, n_ * sizeof(T), 2), "");
    }
    return h;
  }

 private:
  void* p_ = nullptr;
  size_t n_;
};

// Deterministic values in [-1, 1).
Vec Values(size_t n, int salt) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 37 + salt * 11) % 101) / 50.5 - 1);
  return v;
}

void ExpectNear(const Vec& got, const std::vector<double>& want, const std::string& what,
                double tol = 2e-4) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
}

TEST(CudaNnKernelsTest, LayerNormAndRmsNormWithGrads) {
  REQUIRE_DEVICE();
  const int64_t rows = 5, cols = 300;
  const Vec x = Values(rows * cols, 1), gamma = Values(cols, 2), beta = Values(cols, 3),
            dy = Values(rows * cols, 4);
  for (bool rms : {false, true}) {
    const std::string what = rms ? "rms_norm" : "layer_norm";
    Dev<float> dx_(x), dg(gamma), db(beta), ddy(dy), y(rows * cols), mean(rows), inv(rows),
        dxo(rows * cols), dgo(cols), dbo(cols);
    ASSERT_EQ(k::NormForward(cuda::kF32, rms, rows, cols, 1e-5, dx_.get(), dg.get(), db.get(),
                             y.get(), mean.get(), inv.get()),
              "");
    ASSERT_EQ(k::NormBackward(cuda::kF32, rms, rows, cols, dx_.get(), dg.get(),
                              rms ? nullptr : mean.get(), inv.get(), ddy.get(), dxo.get(),
                              dgo.get(), rms ? nullptr : dbo.get()),
              "");
    std::vector<double> wy(rows * cols), wdx(rows * cols), wdg(cols, 0), wdb(cols, 0);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = &x[r * cols];
      double mu = 0, var = 0;
      if (!rms) {
        for (int64_t c = 0; c < cols; ++c) mu += xr[c];
        mu /= cols;
      }
      for (int64_t c = 0; c < cols; ++c) var += (xr[c] - mu) * (xr[c] - mu);
      const double iv = 1 / std::sqrt(var / cols + 1e-5);
      double sg = 0, sgh = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double h = (xr[c] - mu) * iv, g = dy[r * cols + c] * gamma[c];
        wy[r * cols + c] = h * gamma[c] + (rms ? 0 : beta[c]);
        sg += g;
        sgh += g * h;
        wdg[c] += dy[r * cols + c] * h;
        wdb[c] += dy[r * cols + c];
      }
      for (int64_t c = 0; c < cols; ++c) {
        const double h = (xr[c] - mu) * iv, g = dy[r * cols + c] * gamma[c];
        wdx[r * cols + c] = iv * (g - (rms ? 0 : sg / cols) - h * sgh / cols);
      }
    }
    ExpectNear(y.Host(), wy, what + " y");
    ExpectNear(dxo.Host(), wdx, what + " dx", 1e-3);
    ExpectNear(dgo.Host(), wdg, what + " dgamma", 1e-3);
    if (!rms) ExpectNear(dbo.Host(), wdb, what + " dbeta", 1e-3);
  }
}

TEST(CudaNnKernelsTest, EmbeddingAndGradAndBadRow) {
  REQUIRE_DEVICE();
  // Local rows (host): -1 is another rank's id (a zero row, skipped in the
  // grad); scales as scale_grad_by_freq gives them.
  const int64_t rows = 7, dim = 33;
  const std::vector<int64_t> ids = {3, 0, -1, 3, 6, 3, 1};
  const int64_t n = ids.size();
  const std::vector<double> scale = {1.0 / 3, 1, 1, 1.0 / 3, 1, 1.0 / 3, 0.5};
  const Vec table = Values(rows * dim, 5), dout = Values(n * dim, 6);
  Dev<float> d_table(table), d_dout(dout), out(n * dim), dtable(rows * dim);
  ASSERT_EQ(k::Embedding(4, rows, dim, n, ids.data(), d_table.get(), out.get()), "");
  ASSERT_EQ(k::EmbeddingGrad(cuda::kF32, rows, dim, n, ids.data(), scale.data(), d_dout.get(),
                             dtable.get()),
            "");
  std::vector<double> wout(n * dim, 0), wgrad(rows * dim, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0) continue;
    for (int64_t d = 0; d < dim; ++d) {
      wout[i * dim + d] = table[ids[i] * dim + d];
      wgrad[ids[i] * dim + d] += static_cast<double>(dout[i * dim + d]) * scale[i];
    }
  }
  ExpectNear(out.Host(), wout, "embedding", 0);
  ExpectNear(dtable.Host(), wgrad, "embedding_grad");
  const std::vector<int64_t> bad = {1, 7};
  const std::string err = k::Embedding(4, rows, dim, 2, bad.data(), d_table.get(), out.get());
  EXPECT_NE(err.find("row 7 at position 1"), std::string::npos) << err;
}

TEST(CudaNnKernelsTest, SparseCrossEntropyAndGrad) {
  REQUIRE_DEVICE();
  const int64_t rows = 4, classes = 1000;
  const std::vector<int64_t> labels = {0, 999, 17, -1};  // -1: another rank's class
  Vec logits = Values(rows * classes, 7);
  for (float& v : logits) v *= 8;
  const Vec dloss = {1.0f, -0.5f, 0.25f, 2.0f};
  Dev<float> d_logits(logits), d_dloss(dloss), prob(rows * classes), loss(rows),
      dlogits(rows * classes);
  Dev<double> mx(rows), sum(rows);
  ASSERT_EQ(k::RowMax(cuda::kF32, rows, classes, d_logits.get(), mx.get()), "");
  ASSERT_EQ(k::RowSumExp(cuda::kF32, rows, classes, d_logits.get(), mx.get(), sum.get()), "");
  ASSERT_EQ(k::SparseCrossEntropy(cuda::kF32, rows, classes, d_logits.get(), mx.get(), sum.get(),
                                  labels.data(), prob.get(), loss.get()),
            "");
  ASSERT_EQ(k::SparseCrossEntropyGrad(cuda::kF32, rows, classes, labels.data(), prob.get(),
                                      d_dloss.get(), dlogits.get()),
            "");
  std::vector<double> wprob(rows * classes), wloss(rows), wgrad(rows * classes);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < classes; ++c) m = std::max<double>(m, logits[r * classes + c]);
    for (int64_t c = 0; c < classes; ++c) s += std::exp(logits[r * classes + c] - m);
    wloss[r] = labels[r] < 0 ? 0 : m + std::log(s) - logits[r * classes + labels[r]];
    for (int64_t c = 0; c < classes; ++c) {
      wprob[r * classes + c] = std::exp(logits[r * classes + c] - m) / s;
      wgrad[r * classes + c] = dloss[r] * (wprob[r * classes + c] - (c == labels[r] ? 1 : 0));
    }
  }
  ExpectNear(prob.Host(), wprob, "prob");
  ExpectNear(loss.Host(), wloss, "loss");
  ExpectNear(dlogits.Host(), wgrad, "dlogits", 1e-3);
  const std::vector<int64_t> bad = {0, -2, 0, 0};
  EXPECT_NE(k::SparseCrossEntropy(cuda::kF32, rows, classes, d_logits.get(), mx.get(), sum.get(),
                                  bad.data(), prob.get(), loss.get()),
            "");
}

TEST(CudaNnKernelsTest, AdamUpdateVectorAndScalarPaths) {
  REQUIRE_DEVICE();
  for (int64_t n : {int64_t{1027}, int64_t{3}}) {
    const Vec p0 = Values(n, 8), m0 = Values(n, 9), g = Values(n, 10);
    Vec v0 = Values(n, 11);
    for (float& x : v0) x = x * x;
    Dev<float> p(p0), m(m0), v(v0), dg(g);
    for (int64_t step = 1; step <= 3; ++step) {
      ASSERT_EQ(k::AdamUpdate(cuda::kF32, n, step, 1e-2, 0.9, 0.999, 1e-8, 0.01, p.get(), m.get(),
                              v.get(), dg.get()),
                "");
    }
    std::vector<double> wp(p0.begin(), p0.end()), wm(m0.begin(), m0.end()),
        wv(v0.begin(), v0.end());
    for (int64_t step = 1; step <= 3; ++step) {
      for (int64_t i = 0; i < n; ++i) {
        wm[i] = 0.9 * wm[i] + 0.1 * g[i];
        wv[i] = 0.999 * wv[i] + 0.001 * g[i] * g[i];
        const double u = (wm[i] / (1 - std::pow(0.9, step))) /
                         (std::sqrt(wv[i] / (1 - std::pow(0.999, step))) + 1e-8);
        wp[i] -= 1e-2 * (u + 0.01 * wp[i]);
      }
    }
    ExpectNear(p.Host(), wp, "adam param", 1e-4);
    ExpectNear(m.Host(), wm, "adam m");
    ExpectNear(v.Host(), wv, "adam v");
  }
  Dev<float> one(1);
  EXPECT_NE(k::AdamUpdate(cuda::kF32, 1, 0, 1, 0.9, 0.9, 1e-8, 0, one.get(), one.get(), one.get(),
                          one.get()),
            "");
}

TEST(CudaNnKernelsTest, RotaryForwardAndInverse) {
  REQUIRE_DEVICE();
  const int64_t rows = 3, seq = 5, dim = 16, offset = 2;
  const Vec x = Values(rows * seq * dim, 12);
  Dev<float> dx(x), y(x.size()), back(x.size());
  ASSERT_EQ(k::Rotary(false, rows, seq, dim, offset, 10000, dx.get(), y.get()), "");
  ASSERT_EQ(k::Rotary(true, rows, seq, dim, offset, 10000, y.get(), back.get()), "");
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < rows * seq; ++r) {
    const int64_t s = r % seq;
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double a = (offset + s) * std::pow(10000.0, -2.0 * i / dim);
      const double x1 = x[r * dim + i], x2 = x[r * dim + i + dim / 2];
      want[r * dim + i] = x1 * std::cos(a) - x2 * std::sin(a);
      want[r * dim + i + dim / 2] = x2 * std::cos(a) + x1 * std::sin(a);
    }
  }
  ExpectNear(y.Host(), want, "rotary");
  ExpectNear(back.Host(), std::vector<double>(x.begin(), x.end()), "rotary inverse");
  EXPECT_NE(k::Rotary(false, 1, 1, 3, 0, 10000, dx.get(), y.get()), "");
}

// Attention's shapes and mask: query rows i < sq see keys j <= i + shift
// when causal (shift = sk - sq unless a rank's row offset moves it).
struct AttnCase {
  int64_t bh, sq, sk, d, dv;
  bool causal;
  int64_t shift;
};

std::string Describe(const AttnCase& c) {
  return "bh " + std::to_string(c.bh) + " sq " + std::to_string(c.sq) + " sk " +
         std::to_string(c.sk) + " d " + std::to_string(c.d) + " dv " + std::to_string(c.dv) +
         (c.causal ? " causal shift " + std::to_string(c.shift) : "");
}

// Runs the f32 launchers on outputs poisoned with NaN (an element no
// thread writes fails) and compares with a two-pass softmax in double
// written here. A row with every key masked has out 0, lse -inf, dq 0.
// Both sides compute in double from the same f32 inputs (products of
// two floats cast to double first: a float product rounds to 24 bits), so the outputs
// differ by the final f32 rounding (~6e-8 relative) and lse by double
// rounding: 1e-5 and 1e-10 leave a wide margin yet catch a key missed
// or counted twice at a mask or tile edge.
void ExpectAttentionMatches(const AttnCase& c) {
  const std::string what = Describe(c);
  const double scale = 1 / std::sqrt(static_cast<double>(std::max<int64_t>(c.d, 1)));
  const Vec q = Values(c.bh * c.sq * c.d, 13), kk = Values(c.bh * c.sk * c.d, 14),
            v = Values(c.bh * c.sk * c.dv, 15), dout = Values(c.bh * c.sq * c.dv, 16);
  const float nan = std::nanf("");
  Dev<float> dq_(q), dk_(kk), dv_(v), ddo(dout), out(Vec(dout.size(), nan)),
      gq(Vec(q.size(), nan)), gk(Vec(kk.size(), nan)), gv(Vec(v.size(), nan));
  Dev<double> lse(std::vector<double>(c.bh * c.sq, std::nan("")));
  ASSERT_EQ(k::Attention(cuda::kF32, c.bh, c.sq, c.sk, c.d, c.dv, scale, c.causal, dq_.get(),
                         dk_.get(), dv_.get(), out.get(), lse.get(), c.shift),
            "")
      << what;
  ASSERT_EQ(k::AttentionGrad(cuda::kF32, c.bh, c.sq, c.sk, c.d, c.dv, scale, c.causal, dq_.get(),
                             dk_.get(), dv_.get(), ddo.get(), gq.get(), gk.get(), gv.get(),
                             c.shift),
            "")
      << what;
  std::vector<double> wo(dout.size(), 0), wq(q.size(), 0), wk(kk.size(), 0), wv(v.size(), 0),
      wlse(c.bh * c.sq, -INFINITY);
  const int64_t sq = c.sq, sk = c.sk, d = c.d, dv = c.dv;
  for (int64_t b = 0; b < c.bh; ++b) {
    for (int64_t i = 0; i < sq; ++i) {
      // Keys seen: clamp(i + shift + 1, 0, sk), without overflow.
      int64_t seen = sk;
      if (c.causal && c.shift < sk - 1 - i) seen = c.shift < -i ? 0 : i + c.shift + 1;
      if (seen == 0) continue;
      std::vector<double> p(seen, 0), dp(seen, 0);
      double m = -INFINITY, s = 0, delta = 0;
      for (int64_t j = 0; j < seen; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) {
          dot += static_cast<double>(q[(b * sq + i) * d + e]) * kk[(b * sk + j) * d + e];
        }
        p[j] = dot * scale;
        m = std::max(m, p[j]);
      }
      for (int64_t j = 0; j < seen; ++j) s += p[j] = std::exp(p[j] - m);
      wlse[b * sq + i] = m + std::log(s);
      for (int64_t j = 0; j < seen; ++j) {
        p[j] /= s;
        for (int64_t e = 0; e < dv; ++e) {
          wo[(b * sq + i) * dv + e] += p[j] * v[(b * sk + j) * dv + e];
          dp[j] += static_cast<double>(dout[(b * sq + i) * dv + e]) * v[(b * sk + j) * dv + e];
        }
        delta += p[j] * dp[j];
      }
      for (int64_t j = 0; j < seen; ++j) {
        const double ds = p[j] * (dp[j] - delta) * scale;
        for (int64_t e = 0; e < d; ++e) {
          wq[(b * sq + i) * d + e] += ds * kk[(b * sk + j) * d + e];
          wk[(b * sk + j) * d + e] += ds * q[(b * sq + i) * d + e];
        }
        for (int64_t e = 0; e < dv; ++e) {
          wv[(b * sk + j) * dv + e] += p[j] * dout[(b * sq + i) * dv + e];
        }
      }
    }
  }
  ExpectNear(out.Host(), wo, what + " out", 1e-5);
  const std::vector<double> got_lse = lse.Host();
  for (size_t r = 0; r < got_lse.size(); ++r) {
    if (std::isinf(wlse[r])) {
      ASSERT_EQ(got_lse[r], wlse[r]) << what << " lse of fully masked row " << r;
    } else {
      ASSERT_NEAR(got_lse[r], wlse[r], 1e-10 * (1 + std::fabs(wlse[r]))) << what << " lse " << r;
    }
  }
  ExpectNear(gq.Host(), wq, what + " dq", 1e-5);
  ExpectNear(gk.Host(), wk, what + " dk", 1e-5);
  ExpectNear(gv.Host(), wv, what + " dv", 1e-5);
}

TEST(CudaNnKernelsTest, AttentionForwardAndGrads) {
  REQUIRE_DEVICE();
  for (bool causal : {false, true}) {
    ExpectAttentionMatches({2, 4, 6, 8, 5, causal, 6 - 4});
    // Blocks own 64-row tiles and stage tiles of the other side: row
    // counts past one tile and not a multiple of it (the last tile's idle
    // threads only help stage), on both sides.
    ExpectAttentionMatches({3, 70, 130, 16, 12, causal, 130 - 70});
    ExpectAttentionMatches({2, 130, 67, 8, 8, causal, 67 - 130});
  }
  // Head dims at the limit: 24 staged f32 rows a tile (48 KB), so 30 keys
  // end in a partial staged tile.
  ExpectAttentionMatches({1, 20, 30, 256, 256, true, 10});
  ExpectAttentionMatches({1, 20, 30, 256, 3, false, 10});
}

TEST(CudaNnKernelsTest, AttentionCausalShiftsOfARowSlice) {
  REQUIRE_DEVICE();
  // A rank holding query rows [r0, r0 + 40) of 150 global rows over 100
  // keys passes shift r0 + (100 - 150): the mask's edge falls inside a
  // tile, and key tiles start where the block's first key is first seen.
  for (int64_t r0 : {0, 45, 110}) {
    ExpectAttentionMatches({2, 40, 100, 8, 4, true, r0 + 100 - 150});
  }
  // Extreme shifts: every key seen, or none (no overflow in the bounds).
  ExpectAttentionMatches({1, 70, 9, 4, 4, true, INT64_MAX - 1});
  ExpectAttentionMatches({1, 70, 9, 4, 4, true, INT64_MIN + 1});
}

TEST(CudaNnKernelsTest, AttentionEmptySequencesAndManyHeads) {
  REQUIRE_DEVICE();
  // No keys: out 0, lse -inf, dq 0. No query rows: dk, dv 0.
  ExpectAttentionMatches({2, 5, 0, 4, 3, false, 0});
  ExpectAttentionMatches({2, 0, 5, 4, 3, true, 5});
  // 70000 heads of one query row: more tiles than the 65536-block grid cap,
  // so blocks take several.
  ExpectAttentionMatches({70000, 1, 2, 1, 1, false, 1});
  ExpectAttentionMatches({70000, 1, 2, 1, 1, true, 0});
}

// A dtype the nn launchers lack is an error string naming the kernel and
// the dtype, returned before any device work (so this runs without a GPU).
TEST(CudaNnKernelsTest, NonFloatingDtypesAreRefusedByName) {
  const int i32 = cuda::kI32;
  const std::string want = "unsupported dtype " + std::to_string(i32);
  auto expect = [&](const std::string& got, const std::string& kernel) {
    EXPECT_NE(got.find(kernel), std::string::npos) << got;
    EXPECT_NE(got.find(want), std::string::npos) << got;
  };
  expect(k::NormForward(i32, false, 2, 3, 1e-5, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr),
         "norm_forward");
  expect(k::NormBackward(i32, true, 2, 3, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                         nullptr, nullptr),
         "norm_backward");
  expect(k::AdamUpdateCorrected(i32, 4, 0.1, 0.9, 0.99, 1e-8, 0, 1, 0.1, 0.01, nullptr, nullptr,
                                nullptr, nullptr),
         "adam_update");
  expect(k::RotaryTable(i32, true, 1, 2, 4, 0, nullptr, nullptr, nullptr, nullptr),
         "rotary_embedding_grad");
  expect(k::Attention(i32, 1, 2, 2, 4, 4, 0.5, false, nullptr, nullptr, nullptr, nullptr,
                      nullptr),
         "scaled_dot_product_attention");
  expect(k::AttentionGrad(i32, 1, 2, 2, 4, 4, 0.5, true, nullptr, nullptr, nullptr, nullptr,
                          nullptr, nullptr, nullptr),
         "scaled_dot_product_attention_grad");
}

}  // namespace
}  // namespace oneflow_sbp
