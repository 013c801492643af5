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
  OFS_ASSIGN_OR_RETURN(GlobalTensor y, Apply1(ctx, c.op, {x}));
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

}  // namespace
}  // namespace oneflow_sbp::eager
