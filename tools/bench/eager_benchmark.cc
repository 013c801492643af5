// The eager interpreter's overhead per op call on a cache hit: Apply on a
// small tensor whose layout needs no boxing, minus the kernel alone.
// Results go in docs/PERFORMANCE.md.
//
//   bazel run -c opt //tools/bench:eager_benchmark
#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "comm/inprocess_world.h"
#include "eager/apply.h"
#include "eager/tensor_layout.h"
#include "engine/engine.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/builtin_ops.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp {
namespace {

engine::Engine& TheEngine() {
  static engine::Engine* engine = [] {
    engine::Engine::Options options;
    options.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
    return engine::Engine::Create(std::move(options))->release();
  }();
  return *engine;
}

// Apply(relu) on `ranks` ranks (threads), each on a [ranks*4, 4] tensor
// split so every rank holds 16 floats; per call per rank.
void BM_ApplyCacheHit(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const Placement p = *Placement::Parse(ranks == 1 ? "cpu:0" : "cpu:0-3 [2,2]");
  const NdSbp nd = *NdSbp::Parse(ranks == 1 ? "B" : "(S(0),S(1))");
  const int64_t iters = 5000;
  double per_call = 0;
  for (auto _ : state) {
    std::vector<double> seconds(ranks, 0);
    absl::StatusOr<std::vector<absl::Status>> ran =
        comm::RunRanks(ranks, [&](comm::Communicator& world) -> absl::Status {
          eager::EagerContext ctx(TheEngine(), world);
          LocalTensor full = *LocalTensor::Full(DataType::kFloat32, {8, 8}, 1.0);
          OFS_ASSIGN_OR_RETURN(eager::GlobalTensor x, eager::FromFull(ctx, full, p, nd));
          OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpCall> call, ctx.Call("relu", 1, AttrMap()));
          const std::vector<eager::GlobalTensor> in = {x};
          if (!eager::Apply(ctx, call, in).ok()) return absl::InternalError("apply");
          const absl::Time start = absl::Now();
          for (int64_t i = 0; i < iters; ++i) {
            absl::StatusOr<std::vector<eager::GlobalTensor>> y = eager::Apply(ctx, call, in);
            benchmark::DoNotOptimize(y);
          }
          seconds[world.rank()] = absl::ToDoubleSeconds(absl::Now() - start);
          return absl::OkStatus();
        });
    if (!ran.ok() || !(*ran)[0].ok()) state.SkipWithError("apply failed");
    double worst = 0;
    for (double s : seconds) worst = std::max(worst, s);
    // The whole loop is the iteration; the counter gives one call.
    state.SetIterationTime(worst);
    per_call = worst / iters;
  }
  state.counters["us_per_call"] = per_call * 1e6;
}
BENCHMARK(BM_ApplyCacheHit)->Arg(1)->Arg(4)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

// The relu kernel alone on the same 16-float shard, context built once.
void BM_KernelAlone(benchmark::State& state) {
  const Placement p = *Placement::Parse("cpu:0");
  std::shared_ptr<const OpCall> call =
      *OpCall::Make(ops::BuiltinOpRegistry().Find("relu"), {1}, AttrMap());
  const TensorDesc d{Shape{4, 4}, DataType::kFloat32};
  const NdSbpSignature sig = {*NdSbp::Parse("B"), *NdSbp::Parse("B")};
  LocalTensor x = *LocalTensor::Full(DataType::kFloat32, {4, 4}, 1.0);
  LocalTensor y = *LocalTensor::Empty(DataType::kFloat32, {4, 4});
  absl::StatusOr<kernels::KernelContext> ctx =
      kernels::KernelContext::Make(call, p, 0, {d, d}, sig, {x}, {y});
  absl::StatusOr<kernels::KernelFn> fn = kernels::KernelRegistry::Global().Find("relu", DeviceType::kCpu);
  if (!ctx.ok() || !fn.ok()) {
    state.SkipWithError("setup");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize((*fn)(*ctx));
}
BENCHMARK(BM_KernelAlone);

}  // namespace
}  // namespace oneflow_sbp
