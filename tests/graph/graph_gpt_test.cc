// A blow-up bound on graph-level selection: a 24-layer GPT stack on a
// [2,4] mesh is planned (greedy pass, cost tables, exact solve, reports)
// in about 3 s of CPU on a 2-vCPU VM (`bazel run -c opt
// //tools/bench:graph_plan_benchmark` measures it). The bound is on the
// process's CPU time (the pricing threads included), ten times that, so a
// loaded machine cannot fail it and a regression to quadratic work does;
// no test asserts wall-clock speed.
#include <cstdio>

#include "gtest/gtest.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "ops/builtin_ops.h"
#include "tests/support/thread_cpu_time.h"

namespace oneflow_sbp::graph {
namespace {

TEST(GptPlan, TwentyFourLayersOnTwoByFour) {
  engine::Engine::Options o;
  o.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create(std::move(o));  // cold caches
  GptConfig c;
  c.layers = 24;
  const Program program =
      *GptProgram(engine->registry(), *Placement::Parse("cpu:0-7 [2,4]"), c);
  EXPECT_EQ(program.ops().size(), 24u * 23);
  const absl::Duration before = testing::ProcessCpuNow();
  absl::StatusOr<ProgramPlan> plan = PlanProgram(program, *engine, {});
  const double cpu_s = absl::ToDoubleSeconds(testing::ProcessCpuNow() - before);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::printf("24-layer GPT on [2,4]: %zu ops, %d nodes, core %d, exact %d, %lld boxing plans, "
              "%.3f s (%.3f s CPU); planned %.3f ms vs greedy %.3f ms\n",
              program.ops().size(), plan->stats.nodes, plan->stats.core_nodes, plan->stats.exact,
              static_cast<long long>(plan->boxing_plans), plan->seconds, cpu_s,
              plan->costs.total_time_s * 1e3, plan->greedy_costs.total_time_s * 1e3);
  EXPECT_LT(cpu_s, 30.0);
  EXPECT_TRUE(plan->stats.exact);
  EXPECT_LE(plan->costs.total_time_s, plan->greedy_costs.total_time_s);
}

}  // namespace
}  // namespace oneflow_sbp::graph
