// CPU kernels of rotary_embedding, scaled_dot_product_attention (with and
// without its key_padding_mask), their gradients and tril: the forwards
// against plain loops in double, the gradients against central differences
// of those loops, layouts the kernels cannot compute refused, bad masks
// refused by the shape function, and every candidate signature of the
// rules (on [2], [3], [2,2], [2,3], with uneven extents) against the
// single-rank run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

std::vector<int64_t> DimsOf(const LocalTensor& t) {
  return std::vector<int64_t>(t.dims().begin(), t.dims().end());
}

LocalTensor First(const absl::StatusOr<std::vector<LocalTensor>>& r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0] : LocalTensor();
}

// ---------------------------------------------------------------- rotary

// y = x*cos + rotate_half(x)*sin with rotate_half(x) = (-x2, x1).
LocalTensor RotaryRef(const LocalTensor& x, const LocalTensor& cos, const LocalTensor& sin) {
  const int64_t s = x.dim(2), d = x.dim(3), h = d / 2;
  std::vector<double> y(x.elem_cnt());
  for (int64_t i = 0; i < x.elem_cnt(); ++i) {
    const int64_t c = i % d, row = (i / d) % s;
    const double rot = c < h ? -x.GetDouble(i + h) : x.GetDouble(i - h);
    y[i] = x.GetDouble(i) * cos.GetDouble(row * d + c) + rot * sin.GetDouble(row * d + c);
  }
  return Tensor(x.dtype(), DimsOf(x), y);
}

TEST(RotaryKernels, ForwardMatchesPlainLoops) {
  for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                      DataType::kBFloat16}) {
    const LocalTensor x = GridTensor(dt, {2, 3, 5, 4}, 1);
    const LocalTensor cos = GridTensor(dt, {5, 4}, 2, -1, 1);
    const LocalTensor sin = GridTensor(dt, {5, 4}, 3, -1, 1);
    const LocalTensor got = First(RunOnce("rotary_embedding", {x, cos, sin}));
    EXPECT_EQ(kernels::CompareTensors(got, RotaryRef(x, cos, sin), kernels::DefaultTolerance(dt)),
              "")
        << DataTypeName(dt);
  }
}

TEST(RotaryKernels, GradIsTheTranspose) {
  const LocalTensor x = GridTensor(DataType::kFloat64, {2, 2, 3, 6}, 4);
  const LocalTensor cos = GridTensor(DataType::kFloat64, {3, 6}, 5, -1, 1);
  const LocalTensor sin = GridTensor(DataType::kFloat64, {3, 6}, 6, -1, 1);
  const LocalTensor dy = GridTensor(DataType::kFloat64, {2, 2, 3, 6}, 7);
  const LocalTensor got = First(RunOnce("rotary_embedding_grad", {dy, cos, sin}));
  const LocalTensor want = CentralDifference(
      x, dy, [&](const LocalTensor& v) { return RotaryRef(v, cos, sin); });
  EXPECT_EQ(kernels::CompareTensors(got, want, {1e-7, 1e-7}), "");
}

TEST(RotaryKernels, SplitHeadDimIsRefused) {
  const LocalTensor x = GridTensor(DataType::kFloat32, {1, 1, 2, 4}, 1);
  const LocalTensor cs = GridTensor(DataType::kFloat32, {2, 4}, 2);
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("rotary_embedding", {x, cs, cs}, {}, "cpu:0-1",
                {"S(3)", "S(1)", "S(1)", "S(3)"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("mixes the two halves of D"));
  // x split on the sequence with cos whole is fine (global rows); cos
  // split without x is not.
  got = RunOnRank("rotary_embedding", {x, cs, cs}, {}, "cpu:0-1", {"B", "S(0)", "S(0)", "B"}, 1);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("do not cover the sequence rows"));
}

TEST(RotaryKernels, EveryCandidateAgreesWithOneRank) {
  // Uneven batch, heads and sequence over 2 and 3 parts.
  const LocalTensor x = GridTensor(DataType::kFloat32, {3, 5, 7, 4}, 8);
  const LocalTensor cos = GridTensor(DataType::kFloat32, {7, 4}, 9, -1, 1);
  const LocalTensor sin = GridTensor(DataType::kFloat32, {7, 4}, 10, -1, 1);
  for (const char* op : {"rotary_embedding", "rotary_embedding_grad"}) {
    SweepResult r = SweepSignatures(op, {x, cos, sin});
    EXPECT_GE(r.checked, 10) << op;
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

// ------------------------------------------------------------- attention

struct Attn {
  bool causal = false;
  double scale = 0;
  std::vector<std::string> Attrs() const {
    return {std::string("causal=") + (causal ? "true" : "false"),
            "scale=" + std::to_string(scale)};
  }
};

// softmax(q k^T * scale, masked) v, one (b, h) at a time; fully masked
// rows give 0. `mask` [B, Sk] (optional) hides the keys where it is 0.
LocalTensor AttentionRef(const LocalTensor& q, const LocalTensor& k, const LocalTensor& v,
                         const Attn& a, const LocalTensor* mask = nullptr) {
  const int64_t bh = q.dim(0) * q.dim(1), sq = q.dim(2), sk = k.dim(2), d = q.dim(3),
                dv = v.dim(3), heads = q.dim(1);
  const double scale = a.scale == 0 ? 1 / std::sqrt(static_cast<double>(d)) : a.scale;
  std::vector<double> out(bh * sq * dv, 0.0);
  for (int64_t b = 0; b < bh; ++b) {
    for (int64_t i = 0; i < sq; ++i) {
      std::vector<double> s(sk, -std::numeric_limits<double>::infinity());
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < sk; ++j) {
        if (a.causal && j > i + sk - sq) continue;
        if (mask != nullptr && mask->GetDouble(b / heads * sk + j) == 0) continue;
        s[j] = 0;
        for (int64_t c = 0; c < d; ++c) {
          s[j] += q.GetDouble((b * sq + i) * d + c) * k.GetDouble((b * sk + j) * d + c);
        }
        s[j] *= scale;
        mx = std::max(mx, s[j]);
      }
      if (std::isinf(mx)) continue;
      double sum = 0;
      for (double& e : s) sum += e = std::exp(e - mx);
      for (int64_t j = 0; j < sk; ++j) {
        for (int64_t c = 0; c < dv; ++c) {
          out[(b * sq + i) * dv + c] += s[j] / sum * v.GetDouble((b * sk + j) * dv + c);
        }
      }
    }
  }
  return Tensor(q.dtype(), {q.dim(0), q.dim(1), sq, dv}, out);
}

struct AttnShape {
  int64_t b, h, sq, sk, d, dv;
};
const std::vector<AttnShape>& AttnShapes() {
  // Square, fewer queries than keys (decoding), more queries than keys
  // (causal rows with no key), uneven extents everywhere.
  static const auto* shapes = new std::vector<AttnShape>{
      {2, 2, 4, 4, 4, 4}, {3, 2, 5, 5, 4, 6}, {1, 3, 2, 5, 2, 3}, {2, 1, 5, 3, 4, 2}};
  return *shapes;
}

std::vector<Attn> AttnCases() { return {{false, 0}, {true, 0}, {true, 0.7}}; }

// A BERT-style right-padded mask [B, Sk] of dtype dt: batch row r keeps
// its first Sk - r % Sk keys (row 0 keeps them all); with `last_all_padded`
// the last row keeps none (a batch entry that is all padding).
LocalTensor PaddedMask(DataType dt, int64_t b, int64_t sk, bool last_all_padded) {
  std::vector<double> keep(b * sk);
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < sk; ++j) {
      keep[r * sk + j] = (last_all_padded && r == b - 1) ? 0 : j < sk - r % sk ? 1 : 0;
    }
  }
  return Tensor(dt, {b, sk}, keep);
}

TEST(AttentionKernels, ForwardMatchesPlainLoops) {
  for (const AttnShape& s : AttnShapes()) {
    for (const Attn& a : AttnCases()) {
      for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kBFloat16}) {
        const LocalTensor q = GridTensor(dt, {s.b, s.h, s.sq, s.d}, 1);
        const LocalTensor k = GridTensor(dt, {s.b, s.h, s.sk, s.d}, 2);
        const LocalTensor v = GridTensor(dt, {s.b, s.h, s.sk, s.dv}, 3);
        const LocalTensor got =
            First(RunOnce("scaled_dot_product_attention", {q, k, v}, a.Attrs()));
        EXPECT_EQ(kernels::CompareTensors(got, AttentionRef(q, k, v, a),
                                          kernels::DefaultTolerance(dt)),
                  "")
            << DataTypeName(dt) << " causal " << a.causal << " sq " << s.sq << " sk " << s.sk;
      }
    }
  }
}

TEST(AttentionKernels, CausalMaskHidesLaterKeys) {
  // One query row per key; with causal, row 0 sees only key 0, so its
  // output is value row 0 whatever the scores.
  const LocalTensor q = GridTensor(DataType::kFloat64, {1, 1, 3, 2}, 1);
  const LocalTensor k = GridTensor(DataType::kFloat64, {1, 1, 3, 2}, 2);
  const LocalTensor v = Tensor(DataType::kFloat64, {1, 1, 3, 1}, {10, 20, 30});
  const LocalTensor got =
      First(RunOnce("scaled_dot_product_attention", {q, k, v}, {"causal=true"}));
  EXPECT_DOUBLE_EQ(got.GetDouble(0), 10);
  EXPECT_GT(got.GetDouble(2), 10);  // the last row mixes all three
  const LocalTensor open = First(RunOnce("scaled_dot_product_attention", {q, k, v}));
  EXPECT_NE(open.GetDouble(0), 10);
}

// The grads of (q, k, v[, mask]) against central differences of
// AttentionRef, in f64.
void ExpectGradsMatchCentralDifferences(const AttnShape& s, const Attn& a,
                                        const LocalTensor* mask) {
  const DataType dt = DataType::kFloat64;
  const LocalTensor q = GridTensor(dt, {s.b, s.h, s.sq, s.d}, 4);
  const LocalTensor k = GridTensor(dt, {s.b, s.h, s.sk, s.d}, 5);
  const LocalTensor v = GridTensor(dt, {s.b, s.h, s.sk, s.dv}, 6);
  const LocalTensor dout = GridTensor(dt, {s.b, s.h, s.sq, s.dv}, 7);
  std::vector<LocalTensor> in = {dout, q, k, v};
  if (mask != nullptr) in.push_back(*mask);
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnce("scaled_dot_product_attention_grad", in, a.Attrs());
  ASSERT_TRUE(got.ok()) << got.status();
  const LocalTensor dq = CentralDifference(
      q, dout, [&](const LocalTensor& t) { return AttentionRef(t, k, v, a, mask); });
  const LocalTensor dk = CentralDifference(
      k, dout, [&](const LocalTensor& t) { return AttentionRef(q, t, v, a, mask); });
  const LocalTensor dv = CentralDifference(
      v, dout, [&](const LocalTensor& t) { return AttentionRef(q, k, t, a, mask); });
  const std::string where = "causal " + std::to_string(a.causal) + " sq " +
                            std::to_string(s.sq) + " sk " + std::to_string(s.sk) +
                            (mask != nullptr ? " with mask" : "");
  EXPECT_EQ(kernels::CompareTensors((*got)[0], dq, {1e-6, 1e-6}), "") << "dq " << where;
  EXPECT_EQ(kernels::CompareTensors((*got)[1], dk, {1e-6, 1e-6}), "") << "dk " << where;
  EXPECT_EQ(kernels::CompareTensors((*got)[2], dv, {1e-6, 1e-6}), "") << "dv " << where;
}

TEST(AttentionKernels, GradMatchesCentralDifferences) {
  for (const AttnShape& s : AttnShapes()) {
    for (const Attn& a : AttnCases()) ExpectGradsMatchCentralDifferences(s, a, nullptr);
  }
}

// Every candidate of the forward's and the grad's rules (with the mask if
// given) against the single-rank run, in f64.
void ExpectEveryCandidateAgrees(const AttnShape& s, const Attn& a, const LocalTensor* mask) {
  const DataType dt = DataType::kFloat64;
  const LocalTensor q = GridTensor(dt, {s.b, s.h, s.sq, s.d}, 8);
  const LocalTensor k = GridTensor(dt, {s.b, s.h, s.sk, s.d}, 9);
  const LocalTensor v = GridTensor(dt, {s.b, s.h, s.sk, s.dv}, 10);
  const LocalTensor dout = GridTensor(dt, {s.b, s.h, s.sq, s.dv}, 11);
  std::vector<LocalTensor> fwd = {q, k, v}, grad = {dout, q, k, v};
  if (mask != nullptr) {
    fwd.push_back(*mask);
    grad.push_back(*mask);
  }
  SweepResult r = SweepSignatures("scaled_dot_product_attention", fwd, a.Attrs());
  EXPECT_GE(r.checked, 10);
  EXPECT_TRUE(r.failures.empty()) << r.Report();
  r = SweepSignatures("scaled_dot_product_attention_grad", grad, a.Attrs());
  EXPECT_GE(r.checked, 10);
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

TEST(AttentionKernels, SplitKeysAreRefused) {
  const LocalTensor t = GridTensor(DataType::kFloat32, {1, 1, 4, 2}, 1);
  absl::StatusOr<std::vector<LocalTensor>> got = RunOnRank(
      "scaled_dot_product_attention", {t, t, t}, {}, "cpu:0-1", {"B", "S(2)", "S(2)", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("needs every key"));
  got = RunOnRank("scaled_dot_product_attention", {t, t, t}, {}, "cpu:0-1",
                  {"S(3)", "S(3)", "B", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
}

TEST(AttentionKernels, EveryCandidateAgreesWithOneRank) {
  for (const AttnShape& s : AttnShapes()) {
    for (const Attn& a : AttnCases()) ExpectEveryCandidateAgrees(s, a, nullptr);
  }
}

// ------------------------------------------------- attention, padded keys

TEST(AttentionKernels, KeyPaddingMaskMatchesPlainLoops) {
  for (const AttnShape& s : AttnShapes()) {
    for (const Attn& a : AttnCases()) {
      for (DataType mt : {DataType::kBool, DataType::kInt32, DataType::kInt64}) {
        const LocalTensor mask = PaddedMask(mt, s.b, s.sk, /*last_all_padded=*/s.b > 1);
        for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kBFloat16}) {
          const LocalTensor q = GridTensor(dt, {s.b, s.h, s.sq, s.d}, 1);
          const LocalTensor k = GridTensor(dt, {s.b, s.h, s.sk, s.d}, 2);
          const LocalTensor v = GridTensor(dt, {s.b, s.h, s.sk, s.dv}, 3);
          const LocalTensor got =
              First(RunOnce("scaled_dot_product_attention", {q, k, v, mask}, a.Attrs()));
          EXPECT_EQ(kernels::CompareTensors(got, AttentionRef(q, k, v, a, &mask),
                                            kernels::DefaultTolerance(dt)),
                    "")
              << DataTypeName(dt) << " mask " << DataTypeName(mt) << " causal " << a.causal
              << " sq " << s.sq << " sk " << s.sk;
        }
      }
    }
  }
}

// A padded key gets weight exactly 0: NaN in its key and value changes
// nothing, and the result is bit for bit attention over the kept keys
// alone. A batch entry with every key padded gives 0, not NaN, and
// gradients of 0.
TEST(AttentionKernels, PaddedKeysGetZeroWeightAndAllPaddedRowsGiveZero) {
  const DataType dt = DataType::kFloat64;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const LocalTensor q = GridTensor(dt, {2, 2, 3, 2}, 1);
  std::vector<double> kv = GridTensor(dt, {2, 2, 4, 2}, 2).ToDoubles();
  std::vector<double> kept_kv;  // keys 0..1 of batch 0
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t c = 0; c < 2; ++c) {
        if (j < 2) kept_kv.push_back(kv[(h * 4 + j) * 2 + c]);
        if (j >= 2) kv[(h * 4 + j) * 2 + c] = nan;  // padded in batch 0
      }
    }
  }
  const LocalTensor k = Tensor(dt, {2, 2, 4, 2}, kv);
  const LocalTensor mask = Tensor(DataType::kInt64, {2, 4}, {1, 1, 0, 0, 0, 0, 0, 0});
  const LocalTensor got = First(RunOnce("scaled_dot_product_attention", {q, k, k, mask}));
  const std::vector<double> all_q = q.ToDoubles();
  const LocalTensor q0 = Tensor(dt, {1, 2, 3, 2}, {all_q.begin(), all_q.begin() + 12});
  const LocalTensor k0 = Tensor(dt, {1, 2, 2, 2}, kept_kv);
  const LocalTensor want0 = First(RunOnce("scaled_dot_product_attention", {q0, k0, k0}));
  const std::vector<double> out = got.ToDoubles();
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(out[i], want0.GetDouble(i)) << i;  // bit for bit
  for (int64_t i = 12; i < 24; ++i) EXPECT_EQ(out[i], 0.0) << i;               // all padded
  const LocalTensor dout = GridTensor(dt, {2, 2, 3, 2}, 3);
  absl::StatusOr<std::vector<LocalTensor>> g =
      RunOnce("scaled_dot_product_attention_grad", {dout, q, k, k, mask});
  ASSERT_TRUE(g.ok()) << g.status();
  for (int o = 0; o < 3; ++o) {
    const std::vector<double> grad = (*g)[o].ToDoubles();
    const int64_t per_batch = static_cast<int64_t>(grad.size()) / 2;
    for (int64_t i = 0; i < static_cast<int64_t>(grad.size()); ++i) {
      const int64_t j = i / 2 % (o == 0 ? 3 : 4);  // the query or key row
      if (i >= per_batch || (o > 0 && j >= 2)) {
        EXPECT_EQ(grad[i], 0.0) << "output " << o << " at " << i;  // padded key or batch
      } else {
        EXPECT_FALSE(std::isnan(grad[i])) << "output " << o << " at " << i;
      }
    }
  }
}

TEST(AttentionKernels, GradWithKeyPaddingMaskMatchesCentralDifferences) {
  for (const AttnShape& s : AttnShapes()) {
    const LocalTensor mask = PaddedMask(DataType::kBool, s.b, s.sk, s.b > 1);
    for (const Attn& a : AttnCases()) ExpectGradsMatchCentralDifferences(s, a, &mask);
  }
}

TEST(AttentionKernels, KeyPaddingMaskLayoutsThatLackKeysOrRowsAreRefused) {
  const LocalTensor t = GridTensor(DataType::kFloat32, {2, 1, 3, 2}, 1);
  const LocalTensor mask = PaddedMask(DataType::kInt64, 2, 3, false);
  // The mask split over keys: the rank lacks keys it must hide or weigh.
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("scaled_dot_product_attention", {t, t, t, mask}, {}, "cpu:0-1",
                {"B", "B", "B", "S(1)", "B"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("needs every key"));
  // The mask split over the batch while the query is whole: rows missing.
  got = RunOnRank("scaled_dot_product_attention", {t, t, t, mask}, {}, "cpu:0-1",
                  {"B", "B", "B", "S(0)", "B"}, 1);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("key_padding_mask_0 [1,2)x[0,3) does not cover the batch rows"));
}

TEST(AttentionKernels, KeyPaddingMaskCandidatesAgreeWithOneRank) {
  for (const AttnShape& s : AttnShapes()) {
    const LocalTensor mask = PaddedMask(DataType::kInt64, s.b, s.sk, s.b > 1);
    for (const Attn& a : AttnCases()) ExpectEveryCandidateAgrees(s, a, &mask);
  }
}

// ------------------------------------------------------------------ tril

LocalTensor TrilRef(const LocalTensor& in, int64_t diagonal) {
  const int r = in.rank();
  const int64_t rows = in.dim(r - 2), cols = in.dim(r - 1);
  std::vector<double> out(in.elem_cnt());
  for (int64_t i = 0; i < in.elem_cnt(); ++i) {
    const int64_t col = i % cols, row = (i / cols) % rows;
    out[i] = col <= row + diagonal ? in.GetDouble(i) : 0;
  }
  return Tensor(in.dtype(), DimsOf(in), out);
}

TEST(TrilKernels, MatchesPlainLoops) {
  for (int64_t diagonal : {-6, -1, 0, 2, 9}) {
    for (DataType dt : {DataType::kFloat32, DataType::kInt64, DataType::kBool}) {
      const LocalTensor in = dt == DataType::kBool ? BoolTensor({2, 4, 5}, 1)
                                                   : IntTensor(dt, {2, 4, 5}, 1, 1, 9);
      const LocalTensor got =
          First(RunOnce("tril", {in}, {"diagonal=" + std::to_string(diagonal)}));
      EXPECT_EQ(DescribeMismatch(got, TrilRef(in, diagonal)), "")
          << DataTypeName(dt) << " diagonal " << diagonal;
    }
  }
}

// A diagonal at the int64 limits keeps everything or nothing (no overflow
// of row + diagonal: UBSan would stop the asan build here).
TEST(TrilKernels, DiagonalsAtTheInt64LimitsKeepAllOrNothing) {
  const LocalTensor in = IntTensor(DataType::kInt64, {3, 4}, 1, 1, 9);
  const int64_t far[] = {std::numeric_limits<int64_t>::max(),
                         std::numeric_limits<int64_t>::min()};
  for (int64_t diagonal : far) {
    const LocalTensor want =
        diagonal > 0 ? in : Tensor(DataType::kInt64, {3, 4}, std::vector<double>(12, 0.0));
    const LocalTensor got =
        First(RunOnce("tril", {in}, {"diagonal=" + std::to_string(diagonal)}));
    EXPECT_EQ(DescribeMismatch(got, want), "") << "diagonal " << diagonal;
    // Rank 1 of S(1) holds columns 2..3.
    const LocalTensor split =
        First(RunOnRank("tril", {in}, {"diagonal=" + std::to_string(diagonal)}, "cpu:0-1",
                        {"S(1)", "S(1)"}, 1));
    std::vector<double> want_split;
    for (int64_t row = 0; row < 3; ++row) {
      for (int64_t col = 2; col < 4; ++col) {
        want_split.push_back(diagonal > 0 ? in.GetDouble(row * 4 + col) : 0.0);
      }
    }
    EXPECT_EQ(split.ToDoubles(), want_split) << "diagonal " << diagonal;
  }
}

TEST(TrilKernels, SplitRanksUseGlobalCoordinates) {
  // Rank 1 of S(1) holds columns 2..3 of a 2x4 matrix: with diagonal 0
  // row 0 keeps none of them and row 1 none (col 2 > 1).
  const LocalTensor in = IntTensor(DataType::kInt32, {2, 4}, 3, 1, 9);
  const LocalTensor got =
      First(RunOnRank("tril", {in}, {"diagonal=0"}, "cpu:0-1", {"S(1)", "S(1)"}, 1));
  EXPECT_EQ(got.ToDoubles(), std::vector<double>(4, 0.0));
  // Rank 1 of S(0) holds row 1: it keeps columns 0 and 1.
  const LocalTensor row =
      First(RunOnRank("tril", {in}, {"diagonal=0"}, "cpu:0-1", {"S(0)", "S(0)"}, 1));
  EXPECT_EQ(row.GetDouble(1), in.GetDouble(5));
  EXPECT_EQ(row.GetDouble(2), 0);
}

TEST(TrilKernels, EveryCandidateAgreesWithOneRank) {
  const LocalTensor in = GridTensor(DataType::kFloat32, {3, 5, 7}, 12);
  for (int64_t diagonal : {-1, 0, 3}) {
    SweepResult r = SweepSignatures("tril", {in}, {"diagonal=" + std::to_string(diagonal)});
    EXPECT_GE(r.checked, 8);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
