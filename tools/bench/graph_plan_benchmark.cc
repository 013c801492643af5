// Graph-level selection latency: a GPT stack (23 ops and 8 free weights a
// layer; graph/program_generators.h) planned on a [2,4] mesh.
//
//   bazel run -c opt //tools/bench:graph_plan_benchmark
//
// "cold": a fresh Engine every iteration (no boxing plan cached), the case
// `sbp plan` meets; threads: boxing prices planned on 1 or 2 threads.
// "warm": the engine's plan cache already holds the plans (a second
// program on the same engine). "solve": the cost graph alone (reduction and
// exact solve), tables built once. "training": the whole training step
// (forward, backward, Adam updates) expanded and planned cold; "capped":
// the same under a memory cap (a percentage of the uncapped plan's peak),
// cold or with the boxing plans already cached, timed in CPU seconds of
// the whole process (the pricing threads' too).
#include <memory>

#include "benchmark/benchmark.h"
#include "eager/expand_training_step.h"
#include "graph/boxing_prices.h"
#include "graph/graph_solver.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "graph/selection_problem.h"
#include "ops/builtin_ops.h"
#include "tools/bench/plan_engine.h"

namespace oneflow_sbp::graph {
namespace {

using bench::NewPlanEngine;

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
    std::unique_ptr<engine::Engine> engine = NewPlanEngine();
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
  std::unique_ptr<engine::Engine> engine = NewPlanEngine();
  if (!PlanProgram(program, *engine, {}).ok()) state.SkipWithError("planning failed");
  for (auto _ : state) {
    absl::StatusOr<ProgramPlan> plan = PlanProgram(program, *engine, {});
    if (plan.ok()) Report(state, *plan);
  }
}
BENCHMARK(BM_PlanGptWarm)->ArgNames({"layers"})->Arg(24)->Unit(benchmark::kMillisecond);

void BM_SolveGpt(benchmark::State& state) {
  const Program program = Gpt(static_cast<int>(state.range(0)));
  std::unique_ptr<engine::Engine> engine = NewPlanEngine();
  BoxingPrices prices(*engine, program.placement());
  absl::StatusOr<SelectionProblem> p = BuildSelectionProblem(program, prices, {}, 2);
  if (!p.ok()) state.SkipWithError("building failed");
  for (auto _ : state) {
    benchmark::DoNotOptimize(SolveCostGraph(p->graph, SolverOptions(), {}));
  }
  state.counters["nodes"] = p->graph.num_nodes();
}
BENCHMARK(BM_SolveGpt)->ArgNames({"layers"})->Arg(24)->Unit(benchmark::kMillisecond);

// The whole training step (eager/expand_training_step.h): the expansion into
// forward, backward and Adam updates, then the plan, on a fresh engine
// each iteration, as `sbp plan --training` pays it. "exact" 0 means the
// solver fell back to local search on the core.
void BM_PlanGptTrainingCold(benchmark::State& state) {
  const Program program = Gpt(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::unique_ptr<engine::Engine> engine = NewPlanEngine();
    absl::StatusOr<TrainingStepInfo> step = eager::ExpandTrainingStep(*engine, program, {});
    if (!step.ok()) {
      state.SkipWithError("expansion failed");
      break;
    }
    absl::StatusOr<ProgramPlan> plan = PlanProgram(step->program, *engine, {});
    if (!plan.ok()) {
      state.SkipWithError("planning failed");
      break;
    }
    Report(state, *plan);
    state.counters["ops"] = static_cast<double>(step->program.ops().size());
  }
}
BENCHMARK(BM_PlanGptTrainingCold)
    ->ArgNames({"layers"})
    ->Arg(4)
    ->Arg(8)
    ->Arg(24)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The training step under a memory cap of cap_percent of the uncapped
// plan's peak (0: no cap), as `sbp plan --training --memory_cap=...` pays
// it: expansion and plan on a fresh engine ("warm" 0) or on one whose
// boxing plans a first plan of the same step already cached ("warm" 1,
// as the rows of tools/bench:training_plan_table after the first).
// "CPU" is the process's CPU time (pricing threads included);
// "priced_solves" counts the memory cap search's solves; "fits" 0 means
// the search found no choice under the cap (kResourceExhausted, timed
// like a plan).
void BM_PlanGptTrainingCapped(benchmark::State& state) {
  const Program program = Gpt(static_cast<int>(state.range(0)));
  const int percent = static_cast<int>(state.range(1));
  const bool warm = state.range(2) != 0;
  std::unique_ptr<engine::Engine> setup = NewPlanEngine();
  absl::StatusOr<TrainingStepInfo> step = eager::ExpandTrainingStep(*setup, program, {});
  absl::StatusOr<ProgramPlan> uncapped =
      step.ok() ? PlanProgram(step->program, *setup, {}) : absl::StatusOr<ProgramPlan>(step.status());
  if (!uncapped.ok()) {
    state.SkipWithError("the uncapped plan failed");
    return;
  }
  PlanProgramOptions options;
  if (percent > 0) options.memory_cap_bytes = uncapped->costs.peak_memory_bytes * percent / 100;
  for (auto _ : state) {
    std::unique_ptr<engine::Engine> fresh = warm ? nullptr : NewPlanEngine();
    engine::Engine& engine = warm ? *setup : *fresh;
    absl::StatusOr<TrainingStepInfo> s = eager::ExpandTrainingStep(engine, program, {});
    if (!s.ok()) {
      state.SkipWithError("expansion failed");
      break;
    }
    absl::StatusOr<ProgramPlan> plan = PlanProgram(s->program, engine, options);
    // No choice found under the cap is an answer too (kResourceExhausted):
    // timed like a plan, counted as fits=0.
    state.counters["fits"] = plan.ok() ? 1 : 0;
    if (!plan.ok() && plan.status().code() != absl::StatusCode::kResourceExhausted) {
      state.SkipWithError("planning failed");
      break;
    }
    if (plan.ok()) {
      Report(state, *plan);
      state.counters["priced_solves"] = plan->priced_solves;
    }
  }
}
BENCHMARK(BM_PlanGptTrainingCapped)
    ->ArgNames({"layers", "cap_percent", "warm"})
    ->Args({24, 0, 0})
    ->Args({24, 95, 0})
    ->Args({24, 90, 0})
    ->Args({24, 0, 1})
    ->Args({24, 95, 1})
    ->Args({24, 90, 1})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace
}  // namespace oneflow_sbp::graph
