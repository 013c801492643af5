// The eager interpreter on real in-process ranks: global tensors, Apply
// (infer, box, compute, wrap), Redistribute, autograd and the trace.
#include "eager/apply.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "comm/inprocess_world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "eager/autograd.h"
#include "eager/tensor_layout.h"
#include "engine/engine.h"
#include "ops/builtin_ops.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::eager {
namespace {

using testing::Nd;
using testing::P;
using ::testing::HasSubstr;

engine::Engine& TheEngine() {
  static engine::Engine* engine = [] {
    engine::Engine::Options options;
    options.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
    return engine::Engine::Create(std::move(options))->release();
  }();
  return *engine;
}

LocalTensor Values(const std::vector<int64_t>& dims, double scale = 1, double offset = 0) {
  LocalTensor t = *LocalTensor::Empty(DataType::kFloat32, dims);
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, offset + scale * static_cast<double>(i % 13));
  return t;
}

// Runs fn on n ranks; fails the test with every rank's error.
void OnRanks(int n, const std::function<absl::Status(EagerContext&)>& fn,
             EagerOptions options = {}) {
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(n, [&](comm::Communicator& w) {
    EagerContext ctx(TheEngine(), w, options);
    return fn(ctx);
  });
  ASSERT_TRUE(ran.ok()) << ran.status();
  for (size_t r = 0; r < ran->size(); ++r) EXPECT_TRUE((*ran)[r].ok()) << "rank " << r << ": " << (*ran)[r];
}

#define RETURN_IF_ERROR(expr)            \
  do {                                   \
    absl::Status s_ = (expr);            \
    if (!s_.ok()) return s_;             \
  } while (0)

absl::Status Expect(bool ok, const std::string& what) {
  return ok ? absl::OkStatus() : absl::InternalError(what);
}

TEST(Eager, FromFullToFullRoundTripsEveryLayout) {
  const Placement p = P("cpu:0-3 [2,2]");
  const LocalTensor full = Values({5, 3});
  for (const char* nd : {"(S(0),S(1))", "(B,S(0))", "(P,S(1))", "(P,P)", "(S(1),B)"}) {
    OnRanks(4, [&](EagerContext& ctx) -> absl::Status {
      absl::StatusOr<GlobalTensor> x = FromFull(ctx, full, p, Nd(nd));
      if (!x.ok()) return x.status();
      absl::StatusOr<LocalTensor> back = ToFull(ctx, *x);
      if (!back.ok()) return back.status();
      return Expect(ExactlyEqual(*back, full), std::string(nd) + ": " + DescribeMismatch(*back, full));
    });
  }
}

TEST(Eager, ApplyBoxesInputsToTheInferredSignature) {
  const Placement p = P("cpu:0-3 [2,2]");
  const LocalTensor a = Values({6, 4});
  const LocalTensor b = Values({6, 4}, 2, 1);
  OnRanks(4, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<GlobalTensor> x = FromFull(ctx, a, p, Nd("(S(0),B)"));
    absl::StatusOr<GlobalTensor> y = FromFull(ctx, b, p, Nd("(B,S(1))"));
    if (!x.ok() || !y.ok()) return absl::InternalError("inputs");
    absl::StatusOr<GlobalTensor> z = Apply1(ctx, "broadcast_add", {*x, *y});
    if (!z.ok()) return z.status();
    absl::StatusOr<LocalTensor> got = ToFull(ctx, *z);
    if (!got.ok()) return got.status();
    for (int64_t i = 0; i < got->elem_cnt(); ++i) {
      RETURN_IF_ERROR(Expect(got->GetDouble(i) == a.GetDouble(i) + b.GetDouble(i), "sum"));
    }
    return absl::OkStatus();
  });
}

TEST(Eager, PartialInputsStayPartialThroughLinearOps) {
  const Placement p = P("cpu:0-1");
  const LocalTensor a = Values({4, 4});
  OnRanks(2, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<GlobalTensor> x = FromFull(ctx, a, p, Nd("P"));
    if (!x.ok()) return x.status();
    absl::StatusOr<GlobalTensor> y =
        Apply1(ctx, "scalar_mul", {*x}, Attrs({{"float_operand", AttrValue(3.0)}}));
    if (!y.ok()) return y.status();
    RETURN_IF_ERROR(Expect(y->nd_sbp() == Nd("P"), "scalar_mul keeps P: " + y->ToString()));
    absl::StatusOr<LocalTensor> got = ToFull(ctx, *y);
    if (!got.ok()) return got.status();
    return Expect(got->GetDouble(5) == 3 * a.GetDouble(5), "3x");
  });
}

TEST(Eager, InputsOnDifferentPlacementsAreRejected) {
  OnRanks(4, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<GlobalTensor> x = FromFull(ctx, Values({4}), P("cpu:0-1"), Nd("S(0)"));
    absl::StatusOr<GlobalTensor> y = FromFull(ctx, Values({4}), P("cpu:2-3"), Nd("S(0)"));
    absl::StatusOr<GlobalTensor> z = Apply1(ctx, "broadcast_add", {*x, *y});
    RETURN_IF_ERROR(Expect(!z.ok(), "accepted"));
    return Expect(absl::StrContains(z.status().message(), "same placement"),
                  std::string(z.status().message()));
  });
}

TEST(Eager, OpWithoutAKernelIsAClearError) {
  OnRanks(2, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<GlobalTensor> x = FromFull(ctx, Values({4, 4}), P("cpu:0-1"), Nd("S(0)"));
    absl::StatusOr<GlobalTensor> y = Apply1(ctx, "argwhere", {*x});
    if (y.ok() || y.status().code() != absl::StatusCode::kUnimplemented) {
      // argwhere may gain a kernel; then any op without one is fine to test.
      return absl::OkStatus();
    }
    return Expect(absl::StrContains(y.status().message(), "no cpu kernel"),
                  std::string(y.status().message()));
  });
}

// loss = sum(w * x) over a [2,2] mesh with w column-split and x row-split;
// dloss/dw = x, delivered in w's own layout.
TEST(Eager, BackwardDeliversGradientsInTheLeafLayout) {
  const Placement p = P("cpu:0-3 [2,2]");
  const LocalTensor xs = Values({4, 6});
  const LocalTensor ws = Values({4, 6}, 1, 2);
  OnRanks(4, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<GlobalTensor> x = FromFull(ctx, xs, p, Nd("(S(0),B)"));
    absl::StatusOr<GlobalTensor> w = FromFull(ctx, ws, p, Nd("(B,S(1))"));
    if (!x.ok() || !w.ok()) return absl::InternalError("inputs");
    w->set_requires_grad(true);
    absl::StatusOr<GlobalTensor> prod = Apply1(ctx, "broadcast_mul", {*w, *x});
    if (!prod.ok()) return prod.status();
    absl::StatusOr<GlobalTensor> loss = Apply1(
        ctx, "reduce_sum", {*prod}, Attrs({{"axis", AttrValue(std::vector<int64_t>{0, 1})}}));
    if (!loss.ok()) return loss.status();
    // Seed with an explicit gradient of ones (a scalar laid out as the loss).
    LocalTensor one = *LocalTensor::Full(DataType::kFloat32, {}, 1.0);
    absl::StatusOr<GlobalTensor> seed = FromFull(ctx, one, p, Nd("(B,B)"));
    if (!seed.ok()) return seed.status();
    RETURN_IF_ERROR(Backward(ctx, *loss, *seed));
    const GlobalTensor g = w->grad();
    RETURN_IF_ERROR(Expect(g.defined() && g.nd_sbp() == w->nd_sbp(), "grad layout " + g.ToString()));
    absl::StatusOr<LocalTensor> full = ToFull(ctx, g);
    if (!full.ok()) return full.status();
    return Expect(ExactlyEqual(*full, xs), DescribeMismatch(*full, xs));
  });
}

TEST(Eager, TraceRecordsSignaturesAndBoxingBytes) {
  const Placement p = P("cpu:0-1");
  EagerOptions options;
  options.trace = true;
  OnRanks(
      2,
      [&](EagerContext& ctx) -> absl::Status {
        absl::StatusOr<GlobalTensor> x = FromFull(ctx, Values({4, 4}), p, Nd("S(0)"));
        absl::StatusOr<GlobalTensor> y = FromFull(ctx, Values({4, 4}), p, Nd("S(1)"));
        absl::StatusOr<GlobalTensor> z = Apply1(ctx, "broadcast_add", {*x, *y});
        if (!z.ok()) return z.status();
        const std::vector<OpEvent>& events = ctx.trace().events();
        RETURN_IF_ERROR(Expect(!events.empty() && events.back().op == "broadcast_add", "event"));
        const OpEvent& e = events.back();
        RETURN_IF_ERROR(Expect(e.boxing_steps.size() == 1, "one boxing step"));
        const BoxingEvent& b = e.boxing_steps[0];
        RETURN_IF_ERROR(Expect(b.sent == b.planned_sent && b.received == b.planned_received &&
                                   b.received > 0,
                               "bytes"));
        const std::string json = ChromeTraceJson({&ctx.trace()});
        return Expect(absl::StrContains(json, "\"traceEvents\"") &&
                          absl::StrContains(json, "broadcast_add"),
                      json);
      },
      options);
}

}  // namespace
}  // namespace oneflow_sbp::eager
