// Boxing planner latency, cold (a fresh search) and cached (a planner hit).
//
//   bazel run -c opt //tools/bench:boxing_benchmark
#include <string>

#include "benchmark/benchmark.h"
#include "boxing/planner.h"

namespace oneflow_sbp::boxing {
namespace {

PlanRequest Request(const std::string& placement, const std::string& from,
                    const std::string& to) {
  const Placement p = *Placement::Parse(placement);
  return PlanRequest{Shape{1024, 1000}, DataType::kFloat32, p, *NdSbp::Parse(from), p,
                     *NdSbp::Parse(to)};
}

void BM_PlanCold(benchmark::State& state, const std::string& placement, const std::string& from,
                 const std::string& to) {
  const PlanRequest r = Request(placement, from, to);
  const Calibration cal = Calibration::Defaults(NdSbp::kMaxAxes);
  absl::StatusOr<BoxingPlan> plan = PlanBoxing(r, cal);
  if (!plan.ok()) state.SkipWithError("planning failed");
  state.SetLabel(plan.ok() ? plan->Summary() : "");
  for (auto _ : state) benchmark::DoNotOptimize(PlanBoxing(r, cal));
}

void BM_PlanCached(benchmark::State& state, const std::string& placement,
                   const std::string& from, const std::string& to) {
  BoxingPlanner planner;
  const PlanRequest r = Request(placement, from, to);
  if (!planner.Plan(r).ok()) state.SkipWithError("planning failed");
  for (auto _ : state) benchmark::DoNotOptimize(planner.Plan(r));
}

#define OFS_BOXING_BENCH(name, placement, from, to)                    \
  BENCHMARK_CAPTURE(BM_PlanCold, name, placement, from, to);           \
  BENCHMARK_CAPTURE(BM_PlanCached, name, placement, from, to)

OFS_BOXING_BENCH(mesh_8_s0_to_s1, "cpu:0-7", "S(0)", "S(1)");
OFS_BOXING_BENCH(mesh_2x4_transpose, "cpu:0-7 [2,4]", "(S(0),S(1))", "(S(1),S(0))");
OFS_BOXING_BENCH(mesh_2x4_partial, "cpu:0-7 [2,4]", "(P,P)", "(S(0),B)");
OFS_BOXING_BENCH(mesh_2x2x2_mixed, "cpu:0-7 [2,2,2]", "(S(0),P,S(1))", "(S(1),B,S(0))");
// Into partial sums: every exchange prices balanced ownership too.
OFS_BOXING_BENCH(mesh_2x3_to_partial, "cpu:0-5 [2,3]", "(S(0),S(0))", "(B,P)");
OFS_BOXING_BENCH(mesh_2x2x2_to_partial, "cpu:0-7 [2,2,2]", "(S(0),S(1),B)", "(B,P,P)");

}  // namespace
}  // namespace oneflow_sbp::boxing
