// Planning on large meshes by simulation (issue 25): nothing runs, the
// planner prices the steps on 1,024 / 4,096 / 16,384 ranks.
//
//   bazel run -c opt //tools/bench:large_mesh_benchmark
//
// "boxing": one PlanBoxing (no cache) of f32[16384,4096] between two
// layouts of a 2-D mesh: an all-gather on the inner axis, a reduce-scatter
// on the outer one, and the transpose (S(0),S(1)) -> (S(1),S(0)) that
// takes several steps. Beyond 1,024 ranks the planner searches the
// collectives alone (p2p exchanges are over kMaxPlanWork there).
// "plan": PlanProgram of tests/testdata/plan_mlp.json (matmul, gelu,
// matmul) with its mesh replaced (sbp plan --mesh) with an unlimited work budget,
// every layout pair priced cold (fresh engine). Counter "ranks" is the
// mesh size and "peak_rss_mib" the process's peak so far (ru_maxrss).
#include <sys/resource.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "boxing/planner.h"
#include "graph/program_planner.h"
#include "io/program_proto.h"
#include "tools/bench/plan_engine.h"

namespace oneflow_sbp {
namespace {

// The meshes by range(0): [8,128], [64,64], [16,1024].
Placement Mesh(int64_t which) {
  const char* text[] = {"cpu:0-1023 [8,128]", "cpu:0-4095 [64,64]", "cpu:0-16383 [16,1024]"};
  return *Placement::Parse(text[which]);
}

void Counters(benchmark::State& state, const Placement& p) {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  state.counters["ranks"] = static_cast<double>(p.parallel_num());
  state.counters["peak_rss_mib"] = static_cast<double>(u.ru_maxrss) / 1024.0;
}

void BoxingPair(benchmark::State& state, const char* from, const char* to) {
  const Placement p = Mesh(state.range(0));
  const boxing::PlanRequest r{Shape{16384, 4096}, DataType::kFloat32, p, *NdSbp::Parse(from),
                              p, *NdSbp::Parse(to)};
  const boxing::Calibration cal = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
  for (auto _ : state) {
    absl::StatusOr<boxing::BoxingPlan> plan = boxing::PlanBoxing(r, cal);
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    state.counters["steps"] = static_cast<double>(plan->steps.size());
    benchmark::DoNotOptimize(plan);
  }
  Counters(state, p);
}

void BM_BoxingAllGather(benchmark::State& state) { BoxingPair(state, "(S(0),S(1))", "(S(0),B)"); }
void BM_BoxingReduceScatter(benchmark::State& state) {
  BoxingPair(state, "(P,S(1))", "(S(0),S(1))");
}
void BM_BoxingTranspose(benchmark::State& state) {
  BoxingPair(state, "(S(0),S(1))", "(S(1),S(0))");
}
BENCHMARK(BM_BoxingAllGather)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BoxingReduceScatter)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BoxingTranspose)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

// tests/testdata/plan_mlp.json, the issue 24 probe's program.
constexpr const char* kMlp = R"json({"placement": "cpu:0-3 [2,2]",
 "tensors": [{"name": "x",  "shape": [512, 1024],  "dtype": "f32", "nd_sbp": "(S(0),B)"},
             {"name": "w1", "shape": [1024, 4096], "dtype": "f32"},
             {"name": "w2", "shape": [4096, 1024], "dtype": "f32"}],
 "ops": [{"op": "matmul", "name": "fc1", "inputs": ["x", "w1"], "outputs": ["h"]},
         {"op": "gelu",   "name": "act", "inputs": ["h"], "outputs": ["a"]},
         {"op": "matmul", "name": "fc2", "inputs": ["a", "w2"], "outputs": ["y"]}],
 "outputs": [{"name": "y", "nd_sbp": "(S(0),B)"}]})json";

void BM_PlanMlp(benchmark::State& state) {
  const Placement p = Mesh(state.range(0));
  const std::vector<int64_t> mesh(p.hierarchy().begin(), p.hierarchy().end());
  for (auto _ : state) {
    std::unique_ptr<engine::Engine> engine = bench::NewPlanEngine();
    absl::StatusOr<oneflow::ProgramProto> proto = io::ProgramProtoFromJson(kMlp);
    if (!proto.ok()) {
      state.SkipWithError(std::string(proto.status().message()).c_str());
      return;
    }
    absl::StatusOr<graph::Program> program = io::ProgramFromProto(*proto, engine->registry(), mesh);
    if (!program.ok()) {
      state.SkipWithError(std::string(program.status().message()).c_str());
      return;
    }
    graph::PlanProgramOptions options;
    options.work_budget = std::numeric_limits<int64_t>::max();
    absl::StatusOr<graph::ProgramPlan> plan = graph::PlanProgram(*program, *engine, options);
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    state.counters["boxing_plans"] = static_cast<double>(plan->boxing_plans);
  }
  Counters(state, p);
}
BENCHMARK(BM_PlanMlp)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace oneflow_sbp
