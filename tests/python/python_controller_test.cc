// The Python package's Controller (python/native/controller.h) without
// Python: steps on every rank, failures that abort and rebuild the world,
// interrupts that end a hung collective at once, and the launched mode's
// refusal outside a launcher.
#include "python/native/controller.h"

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "eager/apply.h"
#include "eager/tensor_layout.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "ops/builtin_ops.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::python {
namespace {

eager::EagerOptions ShortTimeout() {
  eager::EagerOptions o;
  o.timeout = absl::Seconds(5);
  return o;
}

TEST(ControllerTest, RunsTheStepOnEveryRank) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  std::unique_ptr<Controller> c = *Controller::Embedded(*engine, 4, ShortTimeout());
  EXPECT_FALSE(c->launched());
  EXPECT_EQ(c->local_ranks(), (std::vector<int>{0, 1, 2, 3}));
  std::vector<int> seen(4, -1);
  ASSERT_TRUE(c->Run(
                   [&](eager::EagerContext& ctx, int i) {
                     seen[i] = static_cast<int>(ctx.rank());
                     return ctx.world().Barrier();
                   },
                   nullptr)
                  .ok());
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3}));
}

TEST(ControllerTest, OpsAndGradModeReachTheRanks) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  std::unique_ptr<Controller> c = *Controller::Embedded(*engine, 2, ShortTimeout());
  const Placement p = *Placement::Parse("cpu:0-1");
  const LocalTensor full = *LocalTensor::FromDoubles(DataType::kFloat32, {4}, {-1, 2, -3, 4});
  std::vector<eager::GlobalTensor> x(2), y(2);
  c->set_grad_enabled(false);
  std::vector<int> grad(2, 1);  // not vector<bool>: ranks write it concurrently
  ASSERT_TRUE(c->Run(
                   [&](eager::EagerContext& ctx, int i) -> absl::Status {
                     grad[i] = ctx.grad_enabled();
                     absl::StatusOr<eager::GlobalTensor> t =
                         eager::FromFull(ctx, full, p, *NdSbp::Parse("S(0)"));
                     if (!t.ok()) return t.status();
                     x[i] = *t;
                     absl::StatusOr<eager::GlobalTensor> r = eager::Apply1(ctx, "relu", {x[i]});
                     if (!r.ok()) return r.status();
                     y[i] = *r;
                     return absl::OkStatus();
                   },
                   nullptr)
                  .ok());
  EXPECT_EQ(grad, (std::vector<int>{0, 0}));
  EXPECT_EQ(y[1].local().ToDoubles(), (std::vector<double>{0, 4}));
  EXPECT_TRUE(c->set_cost_policy("planned").ok());
  EXPECT_THAT(c->set_cost_policy("cheapest"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ControllerTest, AFailingRankAbortsTheWorldAndTheNextStepGetsAFreshOne) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  std::unique_ptr<Controller> c = *Controller::Embedded(*engine, 3, ShortTimeout());
  const absl::Time start = absl::Now();
  const absl::Status s = c->Run(
      [](eager::EagerContext& ctx, int i) -> absl::Status {
        if (i == 1) return absl::InvalidArgumentError("rank 1 refuses");
        return ctx.world().Barrier();  // would wait for rank 1 until the timeout
      },
      nullptr);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
  EXPECT_NE(s.message().find("rank 1 refuses"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("[rank 1]"), absl::string_view::npos) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));  // the abort, not the 5 s timeout
  EXPECT_EQ(c->rebuilds(), 1);
  EXPECT_TRUE(c->Run([](eager::EagerContext& ctx, int) { return ctx.world().Barrier(); }, nullptr)
                  .ok());
}

TEST(ControllerTest, AnExceptionInAStepIsAStatus) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  std::unique_ptr<Controller> c = *Controller::Embedded(*engine, 2, ShortTimeout());
  const absl::Status s = c->Run(
      [](eager::EagerContext&, int i) -> absl::Status {
        if (i == 0) throw std::runtime_error("boom");
        return absl::OkStatus();
      },
      nullptr);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_NE(s.message().find("boom"), absl::string_view::npos) << s;
}

TEST(ControllerTest, AnInterruptEndsAHungCollectiveAtOnce) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  std::unique_ptr<Controller> c = *Controller::Embedded(*engine, 2, ShortTimeout());
  auto release = std::make_shared<absl::Notification>();
  std::atomic<int> polls{0};
  const absl::Time start = absl::Now();
  const absl::Status s = c->Run(
      [release](eager::EagerContext& ctx, int i) -> absl::Status {
        if (i == 1) {  // late: rank 0 waits in the barrier meanwhile
          release->WaitForNotificationWithTimeout(absl::Seconds(3));
          return absl::OkStatus();
        }
        return ctx.world().Barrier();
      },
      [&polls] { return ++polls >= 3; });
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kCancelled)) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  release->Notify();
  // The next step waits for the interrupted one, then runs on a fresh world.
  EXPECT_TRUE(c->Run([](eager::EagerContext& ctx, int) { return ctx.world().Barrier(); }, nullptr)
                  .ok());
  EXPECT_EQ(c->rebuilds(), 1);
}

TEST(ControllerTest, BadOptionsAndNoLauncher) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  EXPECT_THAT(Controller::Embedded(*engine, 0, {}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  eager::EagerOptions zero;
  zero.timeout = absl::ZeroDuration();
  EXPECT_THAT(Controller::Embedded(*engine, 2, zero),
            StatusIs(absl::StatusCode::kInvalidArgument));
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  EXPECT_THAT(Controller::Launched(*engine, ShortTimeout()),
            StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace oneflow_sbp::python
