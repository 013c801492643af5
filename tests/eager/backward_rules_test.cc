// The unary elementwise backward rules against their derivatives written
// out in double: loss = sum(w * f(x)) on 2 rank threads with x split, so
// d loss / dx = w * f'(x), computed here independently of the rules.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eager/apply.h"
#include "eager/autograd.h"
#include "eager/tensor_layout.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/status_macros.h"
#include "comm/inprocess_world.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::eager {
namespace {

using testing::Nd;
using testing::P;

struct UnaryCase {
  std::string op;
  double lo, hi;                          // x's range (the op's domain)
  std::function<double(double)> slope;    // f'(x)
  AttrMap attrs = AttrMap();
};

std::vector<UnaryCase> Cases() {
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  return {
      {"exp", -2, 2, [](double x) { return std::exp(x); }},
      {"log", 0.5, 3, [](double x) { return 1 / x; }},
      {"sigmoid", -3, 3, [sig](double x) { return sig(x) * (1 - sig(x)); }},
      {"tanh", -2, 2, [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
      {"sin", -3, 3, [](double x) { return std::cos(x); }},
      {"cos", -3, 3, [](double x) { return -std::sin(x); }},
      {"sqrt", 0.5, 4, [](double x) { return 0.5 / std::sqrt(x); }},
      {"rsqrt", 0.5, 4, [](double x) { return -0.5 * std::pow(x, -1.5); }},
      {"square", -2, 2, [](double x) { return 2 * x; }},
      {"reciprocal", 0.5, 3, [](double x) { return -1 / (x * x); }},
      {"abs", -2, 2, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }},
      {"softplus", -3, 3, sig},
      {"erf", -2, 2, [](double x) { return 2 / std::sqrt(M_PI) * std::exp(-x * x); }},
      {"scalar_pow", 0.5, 2, [](double x) { return 2.5 * std::pow(x, 1.5); },
       Attrs({{"float_operand", AttrValue(2.5)}})},
      {"scalar_pow", -2, 2, [](double x) { return 3 * x * x; },
       Attrs({{"has_int_operand", AttrValue(true)}, {"has_float_operand", AttrValue(false)},
              {"int_operand", AttrValue(int64_t{3})}})},
  };
}

// x spread over [lo, hi] (never exactly 0 for abs), w a fixed weight pattern.
LocalTensor Spread(int64_t n, double lo, double hi) {
  LocalTensor t = *LocalTensor::Empty(DataType::kFloat64, {n});
  for (int64_t i = 0; i < n; ++i) t.SetDouble(i, lo + (hi - lo) * (i + 0.37) / n);
  return t;
}

absl::Status Gradient(EagerContext& ctx, const UnaryCase& c, const LocalTensor& xs,
                      const LocalTensor& ws, LocalTensor* grad) {
  const Placement p = P("cpu:0-1");
  OFS_ASSIGN_OR_RETURN(GlobalTensor x, FromFull(ctx, xs, p, Nd("S(0)")));
  OFS_ASSIGN_OR_RETURN(GlobalTensor w, FromFull(ctx, ws, p, Nd("B")));
  x.set_requires_grad(true);
  OFS_ASSIGN_OR_RETURN(GlobalTensor y, Apply1(ctx, c.op, {x}, c.attrs));
  OFS_ASSIGN_OR_RETURN(GlobalTensor wy, Apply1(ctx, "broadcast_mul", {y, w}));
  OFS_ASSIGN_OR_RETURN(
      GlobalTensor loss,
      Apply1(ctx, "reduce_sum", {wy}, Attrs({{"axis", AttrValue(std::vector<int64_t>{0})}})));
  OFS_RETURN_IF_ERROR(Backward(ctx, loss));
  if (!x.grad().defined()) return absl::InternalError(c.op + ": no gradient reached x");
  OFS_ASSIGN_OR_RETURN(*grad, ToFull(ctx, x.grad()));
  return absl::OkStatus();
}

TEST(BackwardRules, UnaryElementwiseGradientsAreTheDerivatives) {
  static engine::Engine* engine = engine::Engine::Create()->release();
  for (const UnaryCase& c : Cases()) {
    SCOPED_TRACE(c.op);
    const int64_t n = 11;  // uneven over 2 ranks
    const LocalTensor xs = Spread(n, c.lo, c.hi);
    const LocalTensor ws = Spread(n, -1, 1.5);
    std::vector<LocalTensor> grads(2);
    absl::StatusOr<std::vector<absl::Status>> ran =
        comm::RunRanks(2, [&](comm::Communicator& world) {
          EagerContext ctx(*engine, world);
          return Gradient(ctx, c, xs, ws, &grads[world.rank()]);
        });
    ASSERT_TRUE(ran.ok()) << ran.status();
    for (const absl::Status& s : *ran) ASSERT_TRUE(s.ok()) << s;
    for (int64_t i = 0; i < n; ++i) {
      const double x = xs.GetDouble(i);
      const double want = ws.GetDouble(i) * c.slope(x);
      EXPECT_NEAR(grads[0].GetDouble(i), want, 1e-12 * std::max(1.0, std::abs(want)))
          << "x = " << x;
    }
  }
}

// Binary ops: loss = sum(w * f(a, b)) with a [5,3] split over rows and b [3]
// replicated (broadcast along the rows), so b's gradient sums over rows.
struct BinaryGrads {
  LocalTensor da, db;
};

absl::Status BinaryGradients(EagerContext& ctx, const std::string& op, const LocalTensor& as,
                             const LocalTensor& bs, const LocalTensor& ws, BinaryGrads* out) {
  const Placement p = P("cpu:0-1");
  OFS_ASSIGN_OR_RETURN(GlobalTensor a, FromFull(ctx, as, p, Nd("S(0)")));
  OFS_ASSIGN_OR_RETURN(GlobalTensor b, FromFull(ctx, bs, p, Nd("B")));
  OFS_ASSIGN_OR_RETURN(GlobalTensor w, FromFull(ctx, ws, p, Nd("S(0)")));
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  OFS_ASSIGN_OR_RETURN(GlobalTensor z, Apply1(ctx, op, {a, b}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor wz, Apply1(ctx, "broadcast_mul", {z, w}));
  OFS_ASSIGN_OR_RETURN(
      GlobalTensor loss,
      Apply1(ctx, "reduce_sum", {wz}, Attrs({{"axis", AttrValue(std::vector<int64_t>{0, 1})}})));
  OFS_RETURN_IF_ERROR(Backward(ctx, loss));
  OFS_ASSIGN_OR_RETURN(out->da, ToFull(ctx, a.grad()));
  OFS_ASSIGN_OR_RETURN(out->db, ToFull(ctx, b.grad()));
  return absl::OkStatus();
}

// f64 `dims` filled like Spread over [lo, hi].
LocalTensor Filled(const std::vector<int64_t>& dims, double lo, double hi) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return *LocalTensor::FromDoubles(DataType::kFloat64, dims, Spread(n, lo, hi).ToDoubles());
}

LocalTensor Matrix(int64_t rows, int64_t cols, double lo, double hi) {
  return Filled({rows, cols}, lo, hi);
}

TEST(BackwardRules, BiasAddAndBroadcastDivGradients) {
  static engine::Engine* engine = engine::Engine::Create()->release();
  const LocalTensor as = Matrix(5, 3, -2, 2);
  const LocalTensor bs = Spread(3, 0.5, 2);
  const LocalTensor ws = Matrix(5, 3, -1, 1.5);
  // d/da, d/db of w * f(a, b), per element; b's are summed over rows.
  struct Case {
    std::string op;
    std::function<double(double, double)> dfa, dfb;
  };
  const std::vector<Case> cases = {
      {"bias_add", [](double, double) { return 1.0; }, [](double, double) { return 1.0; }},
      {"broadcast_div", [](double, double b) { return 1 / b; },
       [](double a, double b) { return -a / (b * b); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<BinaryGrads> grads(2);
    absl::StatusOr<std::vector<absl::Status>> ran =
        comm::RunRanks(2, [&](comm::Communicator& world) {
          EagerContext ctx(*engine, world);
          return BinaryGradients(ctx, c.op, as, bs, ws, &grads[world.rank()]);
        });
    ASSERT_TRUE(ran.ok()) << ran.status();
    for (const absl::Status& s : *ran) ASSERT_TRUE(s.ok()) << s;
    std::vector<double> want_db(3, 0.0);
    for (int64_t i = 0; i < 15; ++i) {
      const double a = as.GetDouble(i), b = bs.GetDouble(i % 3), w = ws.GetDouble(i);
      EXPECT_NEAR(grads[0].da.GetDouble(i), w * c.dfa(a, b), 1e-12) << "a " << i;
      want_db[i % 3] += w * c.dfb(a, b);
    }
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(grads[0].db.GetDouble(j), want_db[j], 1e-12) << j;
  }
}

// loss = sum(w * op(inputs)), w replicated: the full gradient of every
// input marked in `wants`, on 2 rank threads.
struct Input {
  LocalTensor value;
  std::string nd_sbp;
  bool wants_grad;
};

std::vector<LocalTensor> GradientsOf(const std::string& op, const AttrMap& attrs,
                                     const std::vector<Input>& inputs, const LocalTensor& w) {
  static engine::Engine* engine = engine::Engine::Create()->release();
  std::vector<LocalTensor> grads(inputs.size());
  absl::StatusOr<std::vector<absl::Status>> ran =
      comm::RunRanks(2, [&](comm::Communicator& world) -> absl::Status {
        EagerContext ctx(*engine, world);
        const Placement p = P("cpu:0-1");
        std::vector<GlobalTensor> ins;
        for (const Input& in : inputs) {
          OFS_ASSIGN_OR_RETURN(GlobalTensor t, FromFull(ctx, in.value, p, Nd(in.nd_sbp)));
          t.set_requires_grad(in.wants_grad);
          ins.push_back(t);
        }
        OFS_ASSIGN_OR_RETURN(GlobalTensor weights, FromFull(ctx, w, p, Nd("B")));
        OFS_ASSIGN_OR_RETURN(GlobalTensor out, Apply1(ctx, op, ins, attrs));
        OFS_ASSIGN_OR_RETURN(GlobalTensor weighted, Apply1(ctx, "broadcast_mul", {out, weights}));
        std::vector<int64_t> all(out.shape().rank());
        for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
        OFS_ASSIGN_OR_RETURN(GlobalTensor loss, Apply1(ctx, "reduce_sum", {weighted},
                                                       Attrs({{"axis", AttrValue(all)}})));
        OFS_RETURN_IF_ERROR(Backward(ctx, loss));
        for (size_t i = 0; i < inputs.size(); ++i) {
          if (!inputs[i].wants_grad) continue;
          if (!ins[i].grad().defined()) return absl::InternalError(absl::StrCat("no grad ", i));
          OFS_ASSIGN_OR_RETURN(LocalTensor g, ToFull(ctx, ins[i].grad()));
          if (world.rank() == 0) grads[i] = g;
        }
        return absl::OkStatus();
      });
  EXPECT_TRUE(ran.ok()) << ran.status();
  if (ran.ok()) {
    for (const absl::Status& st : *ran) EXPECT_TRUE(st.ok()) << st;
  }
  return grads;
}

void ExpectValues(const LocalTensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.elem_cnt(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.GetDouble(static_cast<int64_t>(i)), want[i], 1e-12) << what << " at " << i;
  }
}

TEST(BackwardRules, NarrowSliceExpandCatAndWhereGradients) {
  const LocalTensor w33 = Matrix(3, 3, -1, 2);
  const LocalTensor w53 = Matrix(5, 3, -1, 2);
  auto w = [](const LocalTensor& t, int64_t r, int64_t c) { return t.GetDouble(r * 3 + c); };
  {  // narrow rows [1, 4) of [6,3]: the rows it kept get w, the others 0.
    const std::vector<LocalTensor> g = GradientsOf(
        "narrow",
        Attrs({{"dim", AttrValue(int64_t{0})}, {"start", AttrValue(int64_t{1})},
               {"length", AttrValue(int64_t{3})}}),
        {{Matrix(6, 3, -2, 2), "S(0)", true}}, w33);
    std::vector<double> want(18, 0.0);
    for (int64_t r = 1; r < 4; ++r)
      for (int64_t c = 0; c < 3; ++c) want[r * 3 + c] = w(w33, r - 1, c);
    ExpectValues(g[0], want, "narrow");
  }
  {  // slice rows 1, 3, 5 of [7,3].
    const std::vector<LocalTensor> g = GradientsOf(
        "slice",
        Attrs({{"start", AttrValue(std::vector<int64_t>{1, 0})},
               {"stop", AttrValue(std::vector<int64_t>{7, 3})},
               {"step", AttrValue(std::vector<int64_t>{2, 1})}}),
        {{Matrix(7, 3, -2, 2), "S(0)", true}}, w33);
    std::vector<double> want(21, 0.0);
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t c = 0; c < 3; ++c) want[(1 + 2 * k) * 3 + c] = w(w33, k, c);
    ExpectValues(g[0], want, "slice");
  }
  {  // expand [1,3] to [5,3]: the column sums of w.
    const std::vector<LocalTensor> g =
        GradientsOf("expand", Attrs({{"expand_shape", AttrValue(std::vector<int64_t>{5, 3})}}),
                    {{Matrix(1, 3, -2, 2), "B", true}}, w53);
    std::vector<double> want(3, 0.0);
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t c = 0; c < 3; ++c) want[c] += w(w53, r, c);
    ExpectValues(g[0], want, "expand");
  }
  {  // cat [2,3] and [3,3] along rows: each gets its rows of w.
    const std::vector<LocalTensor> g = GradientsOf(
        "cat", Attrs({{"axis", AttrValue(int64_t{0})}}),
        {{Matrix(2, 3, -2, 2), "S(0)", true}, {Matrix(3, 3, -1, 1), "S(0)", true}}, w53);
    std::vector<double> top, bottom;
    for (int64_t i = 0; i < 15; ++i) (i < 6 ? top : bottom).push_back(w53.GetDouble(i));
    ExpectValues(g[0], top, "cat input 0");
    ExpectValues(g[1], bottom, "cat input 1");
  }
  {  // where(c, x [5,3], y [3]): w where c holds to x, elsewhere summed into y.
    std::vector<double> cond(15);
    for (int64_t i = 0; i < 15; ++i) cond[i] = (i % 4 == 1 || i % 3 == 0) ? 1 : 0;
    const LocalTensor c = *LocalTensor::FromDoubles(DataType::kBool, {5, 3}, cond);
    const std::vector<LocalTensor> g = GradientsOf(
        "where", AttrMap(),
        {{c, "B", false}, {Matrix(5, 3, -2, 2), "S(0)", true}, {Spread(3, -1, 1), "B", true}},
        w53);
    std::vector<double> want_x(15), want_y(3, 0.0);
    for (int64_t i = 0; i < 15; ++i) {
      want_x[i] = cond[i] != 0 ? w53.GetDouble(i) : 0.0;
      if (cond[i] == 0) want_y[i % 3] += w53.GetDouble(i);
    }
    ExpectValues(g[1], want_x, "where x");
    ExpectValues(g[2], want_y, "where y");
  }
}

// ------------------------------------------------ the encoder head's ops

// Row-major [b, h, s, d] values in double, for the references below.
double At(const LocalTensor& t, int64_t i) { return t.GetDouble(i); }

// Non-causal attention with a key padding mask [B, Sk], in double: the
// reference the masked attention's gradients are differenced from.
std::vector<double> MaskedAttention(const LocalTensor& q, const LocalTensor& k,
                                    const LocalTensor& v, const LocalTensor& mask) {
  const int64_t b = q.dim(0), h = q.dim(1), sq = q.dim(2), sk = k.dim(2), d = q.dim(3);
  std::vector<double> out(b * h * sq * d, 0.0);
  for (int64_t bh = 0; bh < b * h; ++bh) {
    for (int64_t i = 0; i < sq; ++i) {
      std::vector<double> e(sk, 0.0);
      double sum = 0;
      for (int64_t j = 0; j < sk; ++j) {
        if (mask.GetDouble(bh / h * sk + j) == 0) continue;
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) {
          dot += At(q, (bh * sq + i) * d + c) * At(k, (bh * sk + j) * d + c);
        }
        sum += e[j] = std::exp(dot / std::sqrt(static_cast<double>(d)));
      }
      for (int64_t j = 0; j < sk && sum > 0; ++j) {
        for (int64_t c = 0; c < d; ++c) {
          out[(bh * sq + i) * d + c] += e[j] / sum * At(v, (bh * sk + j) * d + c);
        }
      }
    }
  }
  return out;
}

// d/dt of sum(w * f(t)) by central differences.
std::vector<double> Numeric(const LocalTensor& t, const std::vector<double>& w,
                            const std::function<std::vector<double>(const LocalTensor&)>& f) {
  std::vector<double> g(t.elem_cnt());
  for (int64_t i = 0; i < t.elem_cnt(); ++i) {
    LocalTensor p = t.Clone(), m = t.Clone();
    p.SetDouble(i, t.GetDouble(i) + 1e-6);
    m.SetDouble(i, t.GetDouble(i) - 1e-6);
    const std::vector<double> fp = f(p), fm = f(m);
    for (size_t j = 0; j < w.size(); ++j) g[i] += w[j] * (fp[j] - fm[j]) / 2e-6;
  }
  return g;
}

void ExpectNear(const LocalTensor& got, const std::vector<double>& want, double tol,
                const std::string& what) {
  ASSERT_EQ(got.elem_cnt(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.GetDouble(static_cast<int64_t>(i)), want[i], tol) << what << " at " << i;
  }
}

// The rule passes the mask to the grad op (a rule that dropped it would
// give the unmasked gradients, which differ here) and asks no gradient of
// it (an i64 tensor). Batch 1 is all padding: its grads are 0, not NaN.
TEST(BackwardRules, MaskedAttentionPassesTheMaskToItsGradOp) {
  const LocalTensor q = Matrix(1, 24, -1, 1);
  const LocalTensor k = Matrix(1, 24, -1.5, 1);
  const LocalTensor v = Matrix(1, 24, -2, 2);
  auto shaped = [](const LocalTensor& t) {
    return *LocalTensor::FromDoubles(DataType::kFloat64, {2, 2, 3, 2}, t.ToDoubles());
  };
  const LocalTensor qs = shaped(q), ks = shaped(k), vs = shaped(v);
  const LocalTensor mask =
      *LocalTensor::FromDoubles(DataType::kInt64, {2, 3}, {1, 0, 1, 0, 0, 0});
  const LocalTensor w = shaped(Matrix(1, 24, -1, 2));
  const std::vector<LocalTensor> g = GradientsOf(
      "scaled_dot_product_attention", AttrMap(),
      {{qs, "S(0)", true}, {ks, "S(0)", true}, {vs, "S(0)", true}, {mask, "B", false}}, w);
  const std::vector<double> wv = w.ToDoubles();
  auto attention = [&](int which) {
    return [&, which](const LocalTensor& t) {
      return MaskedAttention(which == 0 ? t : qs, which == 1 ? t : ks, which == 2 ? t : vs, mask);
    };
  };
  ExpectNear(g[0], Numeric(qs, wv, attention(0)), 1e-7, "dquery");
  ExpectNear(g[1], Numeric(ks, wv, attention(1)), 1e-7, "dkey");
  ExpectNear(g[2], Numeric(vs, wv, attention(2)), 1e-7, "dvalue");
}

TEST(BackwardRules, MaskedMeanPoolAndL2NormalizeGradients) {
  {  // masked_mean_pool of x [3,4,2] (batch split), a bool mask; row 2 is all padding.
    const LocalTensor x = *LocalTensor::FromDoubles(DataType::kFloat64, {3, 4, 2},
                                                    Spread(24, -2, 2).ToDoubles());
    const std::vector<double> keep = {1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};
    const LocalTensor mask = *LocalTensor::FromDoubles(DataType::kBool, {3, 4}, keep);
    const LocalTensor w = Matrix(3, 2, -1, 2);
    const std::vector<LocalTensor> g =
        GradientsOf("masked_mean_pool", AttrMap(), {{x, "S(0)", true}, {mask, "B", false}}, w);
    std::vector<double> want(24, 0.0);
    for (int64_t b = 0; b < 3; ++b) {
      double count = 0;
      for (int64_t s = 0; s < 4; ++s) count += keep[b * 4 + s];
      for (int64_t s = 0; s < 4; ++s) {
        for (int64_t h = 0; h < 2; ++h) {
          want[(b * 4 + s) * 2 + h] =
              keep[b * 4 + s] * w.GetDouble(b * 2 + h) / std::max(count, 1e-9);
        }
      }
    }
    ExpectValues(g[0], want, "masked_mean_pool");
  }
  // l2_normalize of rows of x [5,3] (rows split), epsilon 1e-12 and 2.5
  // (rows with |x| < 2.5 take the clamp branch: dx = w / 2.5).
  for (double eps : {1e-12, 2.5}) {
    const LocalTensor x = Matrix(5, 3, -2, 2.5);
    const LocalTensor w = Matrix(5, 3, -1, 2);
    const std::vector<LocalTensor> g = GradientsOf(
        "l2_normalize", Attrs({{"epsilon", AttrValue(eps)}}), {{x, "S(0)", true}}, w);
    std::vector<double> want(15);
    for (int64_t r = 0; r < 5; ++r) {
      double n = 0, dot = 0;
      for (int64_t c = 0; c < 3; ++c) n += x.GetDouble(r * 3 + c) * x.GetDouble(r * 3 + c);
      n = std::sqrt(n);
      for (int64_t c = 0; c < 3; ++c) dot += w.GetDouble(r * 3 + c) * x.GetDouble(r * 3 + c) / n;
      for (int64_t c = 0; c < 3; ++c) {
        const double wc = w.GetDouble(r * 3 + c), y = x.GetDouble(r * 3 + c) / n;
        want[r * 3 + c] = n >= eps ? (wc - y * dot) / n : wc / eps;
      }
    }
    ExpectNear(g[0], want, 1e-12, "l2_normalize eps " + std::to_string(eps));
  }
}

}  // namespace
}  // namespace oneflow_sbp::eager

namespace oneflow_sbp::eager {
namespace {

// A naive einsum in double over "bmk,kn->bmn"-style specs of two operands.
std::vector<double> NaiveEinsum2(const std::string& a_letters, const LocalTensor& a,
                                 const std::string& b_letters, const LocalTensor& b,
                                 const std::string& out_letters) {
  std::string letters;
  std::vector<int64_t> extent;
  auto add = [&](const std::string& ls, const LocalTensor& t) {
    for (size_t d = 0; d < ls.size(); ++d) {
      if (letters.find(ls[d]) == std::string::npos) {
        letters += ls[d];
        extent.push_back(t.dim(static_cast<int>(d)));
      }
    }
  };
  add(a_letters, a);
  add(b_letters, b);
  auto offset = [&](const std::string& ls, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (char c : ls) off = off * extent[letters.find(c)] + idx[letters.find(c)];
    return off;
  };
  int64_t out_size = 1;
  for (char c : out_letters) out_size *= extent[letters.find(c)];
  std::vector<double> out(out_size, 0.0);
  std::vector<int64_t> idx(letters.size(), 0);
  int64_t total = 1;
  for (int64_t e : extent) total *= e;
  for (int64_t s = 0; s < total; ++s) {
    out[offset(out_letters, idx)] += a.GetDouble(offset(a_letters, idx)) * b.GetDouble(offset(b_letters, idx));
    for (int l = static_cast<int>(letters.size()) - 1; l >= 0; --l) {
      if (++idx[l] < extent[l]) break;
      idx[l] = 0;
    }
  }
  return out;
}

// Each operand's gradient is the einsum of dy with the other operand; the
// rule's equations are checked against the derivative of a naive einsum.
TEST(BackwardRules, EinsumGradientsAreEinsums) {
  const LocalTensor a = Filled({2, 3, 4}, -1, 1);
  const LocalTensor b = Filled({4, 5}, -2, 1);
  const LocalTensor w = Filled({2, 3, 5}, -1, 2);
  const std::vector<LocalTensor> g = GradientsOf(
      "einsum", Attrs({{"equation", AttrValue("bmk,kn->bmn")}}), {{a, "S(0)", true}, {b, "S(1)", true}}, w);
  const std::vector<double> wv = w.ToDoubles();
  ExpectNear(g[0], Numeric(a, wv, [&](const LocalTensor& t) { return NaiveEinsum2("bmk", t, "kn", b, "bmn"); }),
             1e-7, "d in_0");
  ExpectNear(g[1], Numeric(b, wv, [&](const LocalTensor& t) { return NaiveEinsum2("bmk", a, "kn", t, "bmn"); }),
             1e-7, "d in_1");
}

TEST(BackwardRules, EinsumLetterSummedInsideOneOperandIsUnimplemented) {
  static engine::Engine* engine = engine::Engine::Create()->release();
  absl::StatusOr<std::vector<absl::Status>> ran =
      comm::RunRanks(1, [&](comm::Communicator& world) -> absl::Status {
        EagerContext ctx(*engine, world);
        OFS_ASSIGN_OR_RETURN(GlobalTensor x, FromFull(ctx, Matrix(3, 4, -1, 1), testing::P("cpu:0"), testing::Nd("B")));
        x.set_requires_grad(true);
        OFS_ASSIGN_OR_RETURN(GlobalTensor y, Apply1(ctx, "einsum", {x}, Attrs({{"equation", AttrValue("ij->i")}})));
        OFS_ASSIGN_OR_RETURN(GlobalTensor loss, Apply1(ctx, "reduce_sum", {y}, Attrs({{"axis", AttrValue(std::vector<int64_t>{0})}})));
        return Backward(ctx, loss);
      });
  ASSERT_TRUE(ran.ok());
  EXPECT_THAT((*ran)[0], StatusIs(absl::StatusCode::kUnimplemented)) << (*ran)[0];
  EXPECT_NE((*ran)[0].message().find("letter 'j'"), std::string::npos) << (*ran)[0];
}

}  // namespace
}  // namespace oneflow_sbp::eager
