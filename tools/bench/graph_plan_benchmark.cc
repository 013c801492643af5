// Graph-level selection latency: a GPT stack (23 ops and 8 free weights a
// layer; graph/program_generators.h) planned on a [2,4] mesh.
//
//   bazel run -c opt //tools/bench:graph_plan_benchmark
//
// "cold": a fresh Engine every iteration (no boxing plan cached), the case
// `sbp plan` meets; threads: boxing prices planned on 1 or 2 threads.
// "warm": the engine's plan cache already holds the plans (a second
// program on the same engine). "solve": the cost graph alone (reduction and
// exact solve), tables built once.
#include <memory>

#include "benchmark/benchmark.h"
#include "graph/boxing_prices.h"
#include "graph/graph_solver.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "graph/selection_problem.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::graph {
namespace {

std::unique_ptr<Engine> NewEngine() {
  Engine::Options o;
  o.registry = Engine::Options::Borrow(ops::BuiltinOpRegistry());
  o.plan_cache_capacity = 1 << 16;
  return *Engine::Create(std::move(o));
}

Program Gpt(int layers) {
  GptConfig c;
  c.layers = layers;
  return *GptProgram(ops::BuiltinOpRegistry(), *Placement::Parse("cpu:0-7 [2,4]"), c);
}

void Report(benchmark::State& state, const ProgramPlan& plan) {
  state.counters["boxing_plans"] = static_cast<double>(plan.boxing_plans);
  state.counters["speedup_vs_greedy"] = plan.greedy_costs.total_time_s / plan.costs.total_time_s;
  state.counters["exact"] = plan.stats.exact ? 1 : 0;
}

void BM_PlanGptCold(benchmark::State& state) {
  const Program program = Gpt(static_cast<int>(state.range(0)));
  PlanProgramOptions options;
  options.pricing_threads = static_cast<int>(state.range(1));
  for (auto _ : state) {
    std::unique_ptr<Engine> engine = NewEngine();
    absl::StatusOr<ProgramPlan> plan = PlanProgram(program, *engine, options);
    if (!plan.ok()) state.SkipWithError("planning failed");
    if (plan.ok()) Report(state, *plan);
  }
}
BENCHMARK(BM_PlanGptCold)
    ->ArgNames({"layers", "threads"})
    ->Args({24, 1})
    ->Args({24, 2})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_PlanGptWarm(benchmark::State& state) {
  const Program program = Gpt(static_cast<int>(state.range(0)));
  std::unique_ptr<Engine> engine = NewEngine();
  if (!PlanProgram(program, *engine, {}).ok()) state.SkipWithError("planning failed");
  for (auto _ : state) {
    absl::StatusOr<ProgramPlan> plan = PlanProgram(program, *engine, {});
    if (plan.ok()) Report(state, *plan);
  }
}
BENCHMARK(BM_PlanGptWarm)->ArgNames({"layers"})->Arg(24)->Unit(benchmark::kMillisecond);

void BM_SolveGpt(benchmark::State& state) {
  const Program program = Gpt(static_cast<int>(state.range(0)));
  std::unique_ptr<Engine> engine = NewEngine();
  BoxingPrices prices(*engine, program.placement());
  absl::StatusOr<SelectionProblem> p = BuildSelectionProblem(program, prices, {}, 2);
  if (!p.ok()) state.SkipWithError("building failed");
  for (auto _ : state) {
    benchmark::DoNotOptimize(SolveCostGraph(p->graph, SolverOptions(), {}));
  }
  state.counters["nodes"] = p->graph.num_nodes();
}
BENCHMARK(BM_SolveGpt)->ArgNames({"layers"})->Arg(24)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace oneflow_sbp::graph
