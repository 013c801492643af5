// A blow-up bound on planning the whole training step of a 24-layer GPT on
// [2,4] (issue 23: "planning stays under 2 s"; docs/PLANNING.md, "Planning
// time"): expansion and plan on a cold engine, uncapped and under a memory
// cap of 90% of the uncapped plan's peak (the Lagrangian search that once
// took 6.4 s).
//
// These bounds catch a regression to 10x the time, not the 2 s aim: each
// is about 4x what the step takes on the shared 2-core build machine
// (tools/bench:graph_plan_benchmark, BM_PlanGptTrainingCapped), and is
// counted in CPU time of this thread (pricing runs on this thread alone
// here), so a loaded machine does not fail it. Sanitizer builds run the
// GPT plans 10-40x slower (tests/BUILD, training_plan_test), so they scale
// the bounds instead of skipping the test, as limits_test does.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "eager/expand_training_step.h"
#include "gmock/gmock.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "gtest/gtest.h"
#include "ops/builtin_ops.h"
#include "tests/support/status_matchers.h"
#include "tests/support/thread_cpu_time.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::graph {
namespace {

constexpr int kSlowdown = testing::kSanitizerBuild ? 40 : 1;

// Measured (opt, 2-core shared VM, load 6-10): 3.8-4.1 s for the cold
// uncapped step (1,871 ops; pricing ~5,900 boxing plans on this one
// thread is most of it) and 1.8 s for the search under the cap on the
// warm engine (it ends with no plan: nothing it finds is 10% leaner once
// boxed copies count; docs/PLANNING.md). The search before the breakpoint
// narrowing took 7.5 s for this row, with the old memory model. Each
// bound is about 4x the measure.
constexpr absl::Duration kUncappedBound = absl::Seconds(16 * kSlowdown);
constexpr absl::Duration kCappedBound = absl::Seconds(7 * kSlowdown);

using testing::ThreadCpuNow;

TEST(TrainingPlanTime, GptTwentyFourLayersOnTwoByFour) {
  engine::Engine::Options o;
  o.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
  o.plan_cache_capacity = 1 << 16;  // every plan of the step stays cached
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create(std::move(o));
  GptConfig c;
  c.layers = 24;
  const Program forward = *GptProgram(engine->registry(), *Placement::Parse("cpu:0-7 [2,4]"), c);
  PlanProgramOptions options;
  options.pricing_threads = 1;  // all the work on this thread, which is timed

  absl::Duration start = ThreadCpuNow();
  absl::StatusOr<TrainingStepInfo> step = eager::ExpandTrainingStep(*engine, forward, {});
  ASSERT_TRUE(step.ok()) << step.status();
  absl::StatusOr<ProgramPlan> plan = PlanProgram(step->program, *engine, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const absl::Duration uncapped = ThreadCpuNow() - start;

  // The search's answer is a plan under the cap or kResourceExhausted
  // naming the least memory it found (with boxed copies counted, local
  // search finds almost nothing leaner than the uncapped plan here:
  // docs/PLANNING.md); either way it must come in time.
  options.memory_cap_bytes = plan->costs.peak_memory_bytes * 9 / 10;
  start = ThreadCpuNow();
  absl::StatusOr<ProgramPlan> capped = PlanProgram(step->program, *engine, options);
  const absl::Duration capped_cpu = ThreadCpuNow() - start;

  std::printf("24-layer GPT training step on [2,4]: %zu ops; uncapped (cold) %.3f s CPU, "
              "capped at 90%% %.3f s CPU: %s\n",
              step->program.ops().size(), absl::ToDoubleSeconds(uncapped),
              absl::ToDoubleSeconds(capped_cpu),
              capped.ok() ? "a plan" : std::string(capped.status().message()).c_str());
  EXPECT_LT(uncapped, kUncappedBound);
  EXPECT_LT(capped_cpu, kCappedBound);
  EXPECT_FALSE(plan->stats.exact);  // the report says it fell back to local search
  if (capped.ok()) {
    EXPECT_LE(capped->costs.peak_memory_bytes, *options.memory_cap_bytes);
  } else {
    EXPECT_THAT(capped, StatusIs(absl::StatusCode::kResourceExhausted)) << capped.status();
    EXPECT_THAT(std::string(capped.status().message()),
                ::testing::HasSubstr("the least memory any choice found needs is"));
  }
}

}  // namespace
}  // namespace oneflow_sbp::graph
