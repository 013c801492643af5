// The time bound of graph-level selection: a 24-layer GPT stack on a
// [2,4] mesh is planned (greedy pass, cost tables, exact solve, reports)
// well within 1 s on an idle machine (`bazel run -c opt
// //tools/bench:graph_plan_benchmark`); here with a generous bound, as CI
// machines are shared.
#include <cstdio>

#include "gtest/gtest.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::graph {
namespace {

TEST(GptPlan, TwentyFourLayersOnTwoByFour) {
  Engine::Options o;
  o.registry = Engine::Options::Borrow(ops::BuiltinOpRegistry());
  std::unique_ptr<Engine> engine = *Engine::Create(std::move(o));  // cold caches
  GptConfig c;
  c.layers = 24;
  const Program program =
      *GptProgram(engine->registry(), *Placement::Parse("cpu:0-7 [2,4]"), c);
  EXPECT_EQ(program.ops().size(), 24u * 23);
  absl::StatusOr<ProgramPlan> plan = PlanProgram(program, *engine, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::printf("24-layer GPT on [2,4]: %zu ops, %d nodes, core %d, exact %d, %lld boxing plans, "
              "%.3f s; planned %.3f ms vs greedy %.3f ms\n",
              program.ops().size(), plan->stats.nodes, plan->stats.core_nodes, plan->stats.exact,
              static_cast<long long>(plan->boxing_plans), plan->seconds,
              plan->costs.total_time_s * 1e3, plan->greedy_costs.total_time_s * 1e3);
  EXPECT_LT(plan->seconds, 10.0);
  EXPECT_TRUE(plan->stats.exact);
  EXPECT_LE(plan->costs.total_time_s, plan->greedy_costs.total_time_s);
}

}  // namespace
}  // namespace oneflow_sbp::graph
