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
#include "oneflow_sbp/status_macros.h"
#include "gtest/gtest.h"
#include "runtime/comm/inprocess_world.h"
#include "tests/value_test_util.h"

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
  static Engine* engine = Engine::Create()->release();
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

LocalTensor Matrix(int64_t rows, int64_t cols, double lo, double hi) {
  const LocalTensor flat = Spread(rows * cols, lo, hi);
  return *LocalTensor::FromDoubles(DataType::kFloat64, {rows, cols}, flat.ToDoubles());
}

TEST(BackwardRules, BiasAddAndBroadcastDivGradients) {
  static Engine* engine = Engine::Create()->release();
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

}  // namespace
}  // namespace oneflow_sbp::eager
