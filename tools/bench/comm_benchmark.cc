// Communicator and executor benchmarks on the in-process backend (ranks as
// threads). Results go in docs/PERFORMANCE.md.
//
//   bazel run -c opt //tools/bench:comm_benchmark
//
// Bandwidth cases move a 64 MiB f32 tensor among 4 ranks; "bytes" counts
// what all ranks receive, and memcpy of the same bytes on one thread, in the
// same run, is the yardstick. Times are manual: only the collective (after
// a barrier), not thread start-up.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "comm/inprocess_world.h"
#include "oneflow_sbp/values/status_macros.h"
#include "runtime/executor.h"
#include "boxing/planner.h"
#include "kernels/shard_harness.h"

namespace oneflow_sbp {
namespace {

constexpr int64_t kBytes = int64_t{64} << 20;
constexpr int kRanks = 4;

// Runs `op` once on every rank after a barrier; returns the slowest rank's
// seconds.
double TimeOnRanks(int n, const std::function<absl::Status(comm::Communicator&)>& op) {
  std::vector<double> seconds(n, 0);
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(n, [&](comm::Communicator& w) {
    absl::Status s = w.Barrier();
    OFS_RETURN_IF_ERROR(s);
    const absl::Time start = absl::Now();
    s = op(w);
    seconds[w.rank()] = absl::ToDoubleSeconds(absl::Now() - start);
    return s;
  });
  if (!ran.ok()) return -1;
  for (const absl::Status& s : *ran) {
    if (!s.ok()) return -1;
  }
  double worst = 0;
  for (double s : seconds) worst = std::max(worst, s);
  return worst;
}

void BM_MemcpyOfTheSameBytes(benchmark::State& state) {
  // What the all-gather's ranks receive in all: 3/4 of 64 MiB, four times.
  const int64_t bytes = kBytes / kRanks * (kRanks - 1) * kRanks;
  std::vector<char> a(bytes, 1), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_MemcpyOfTheSameBytes)->Unit(benchmark::kMillisecond);

void BM_InProcessAllGather(benchmark::State& state) {
  const int64_t chunk = kBytes / kRanks / 4;
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(chunk, 1.f));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(chunk * kRanks));
  std::vector<int64_t> counts(kRanks, chunk);
  for (auto _ : state) {
    const double t = TimeOnRanks(kRanks, [&](comm::Communicator& w) {
      return w.AllGatherV(in[w.rank()].data(), out[w.rank()].data(), counts, DataType::kFloat32);
    });
    if (t < 0) state.SkipWithError("all-gather failed");
    state.SetIterationTime(t);
  }
  state.SetBytesProcessed(state.iterations() * kBytes / kRanks * (kRanks - 1) * kRanks);
}
BENCHMARK(BM_InProcessAllGather)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_InProcessAllToAll(benchmark::State& state) {
  const int64_t per_peer = kBytes / kRanks / kRanks / 4;
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(per_peer * kRanks, 1.f));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(per_peer * kRanks));
  std::vector<int64_t> counts(kRanks, per_peer);
  for (auto _ : state) {
    const double t = TimeOnRanks(kRanks, [&](comm::Communicator& w) {
      return w.AllToAllV(in[w.rank()].data(), counts, out[w.rank()].data(), counts,
                         DataType::kFloat32);
    });
    if (t < 0) state.SkipWithError("all-to-all failed");
    state.SetIterationTime(t);
  }
  // Received from the other ranks (own chunk is a local copy).
  state.SetBytesProcessed(state.iterations() * kBytes / kRanks / kRanks * (kRanks - 1) * kRanks);
}
BENCHMARK(BM_InProcessAllToAll)->UseManualTime()->Unit(benchmark::kMillisecond);

// Reductions at memory speed (docs/PERFORMANCE.md): reduce-scatter and
// all-reduce of 64 MiB f32 per rank on 4 rank threads. "bytes" are what
// all ranks receive (the byte counters' formulas, collectives.h): 3/4 of
// 64 MiB per rank for the reduce-scatter (192 MiB in all, the same bytes as
// BM_MemcpyOfTheSameBytes) and twice that for the all-reduce. range(0):
// 0 sum, 1 max.
void BM_InProcessReduceScatter(benchmark::State& state) {
  const int64_t count = kBytes / 4;
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(count, 1.f));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(count / kRanks));
  std::vector<int64_t> counts(kRanks, count / kRanks);
  comm::CallOptions call;
  call.reduce_op = state.range(0) == 0 ? comm::ReduceOp::kSum : comm::ReduceOp::kMax;
  for (auto _ : state) {
    const double t = TimeOnRanks(kRanks, [&](comm::Communicator& w) {
      return w.ReduceScatterV(in[w.rank()].data(), out[w.rank()].data(), counts,
                              DataType::kFloat32, call);
    });
    if (t < 0) state.SkipWithError("reduce-scatter failed");
    state.SetIterationTime(t);
  }
  state.SetBytesProcessed(state.iterations() * kBytes / kRanks * (kRanks - 1) * kRanks);
  state.SetLabel(std::string(comm::ReduceOpName(call.reduce_op)));
}
BENCHMARK(BM_InProcessReduceScatter)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// range(1): 1 in place (send == recv), 0 into a separate buffer.
void BM_InProcessAllReduce(benchmark::State& state) {
  const int64_t count = kBytes / 4;
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(count, 1.f));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(count));
  comm::CallOptions call;
  call.reduce_op = state.range(0) == 0 ? comm::ReduceOp::kSum : comm::ReduceOp::kMax;
  const bool in_place = state.range(1) == 1;
  for (auto _ : state) {
    const double t = TimeOnRanks(kRanks, [&](comm::Communicator& w) {
      float* recv = in_place ? in[w.rank()].data() : out[w.rank()].data();
      return w.AllReduce(in[w.rank()].data(), recv, count, DataType::kFloat32, call);
    });
    if (t < 0) state.SkipWithError("all-reduce failed");
    state.SetIterationTime(t);
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBytes / kRanks * (kRanks - 1) * kRanks);
  state.SetLabel(absl::StrCat(comm::ReduceOpName(call.reduce_op), in_place ? " in place" : ""));
}
BENCHMARK(BM_InProcessAllReduce)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The executor on a plan: (S(0),S(1)) -> (S(1),S(0)) on [2,2], one p2p
// exchange with region packing.
void BM_InProcessP2pExchangePlan(benchmark::State& state) {
  const Placement p = *Placement::Parse("cpu:0-3 [2,2]");
  const Shape shape{4096, 4096};  // 64 MiB f32
  const NdSbp from = *NdSbp::Parse("(S(0),S(1))");
  const NdSbp to = *NdSbp::Parse("(S(1),S(0))");
  absl::StatusOr<boxing::BoxingPlan> plan = boxing::PlanBoxing(
      {shape, DataType::kFloat32, p, from, p, to}, boxing::Calibration::Defaults(NdSbp::kMaxAxes));
  LocalTensor full = *LocalTensor::Zeros(DataType::kFloat32, shape.dims());
  absl::StatusOr<std::vector<LocalTensor>> shards = kernels::DistributeTensor(full, from, p);
  if (!plan.ok() || !shards.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  for (auto _ : state) {
    const double t = TimeOnRanks(kRanks, [&](comm::Communicator& w) {
      return runtime::ExecutePlan(*plan, (*shards)[w.rank()], w).status();
    });
    if (t < 0) state.SkipWithError("exchange failed");
    state.SetIterationTime(t);
  }
  state.SetBytesProcessed(state.iterations() * plan->total_bytes());
  state.counters["plan"] = static_cast<double>(plan->total_bytes());
}
BENCHMARK(BM_InProcessP2pExchangePlan)->UseManualTime()->Unit(benchmark::kMillisecond);

// Executor overhead on a cached plan and a 1 KiB tensor: lowering, group
// lookup, region copies. Local-only plan (no transfers): all of it is
// overhead. Measured inside one rank's loop, so thread start-up is out.
void BM_ExecutePlanOverhead1KiB(benchmark::State& state) {
  const Placement p = *Placement::Parse("cpu:0-3 [2,2]");
  const Shape shape{16, 16};  // 1 KiB f32
  const NdSbp from = *NdSbp::Parse(state.range(0) == 0 ? "(B,B)" : "(S(0),B)");
  const NdSbp to = *NdSbp::Parse(state.range(0) == 0 ? "(S(0),S(1))" : "(B,B)");
  absl::StatusOr<boxing::BoxingPlan> plan = boxing::PlanBoxing(
      {shape, DataType::kFloat32, p, from, p, to}, boxing::Calibration::Defaults(NdSbp::kMaxAxes));
  LocalTensor full = *LocalTensor::Zeros(DataType::kFloat32, shape.dims());
  absl::StatusOr<std::vector<LocalTensor>> shards = kernels::DistributeTensor(full, from, p);
  const int64_t iters = 2000;
  double per_call = 0;
  for (auto _ : state) {
    const double t = TimeOnRanks(kRanks, [&](comm::Communicator& w) {
      for (int64_t i = 0; i < iters; ++i) {
        absl::Status s = runtime::ExecutePlan(*plan, (*shards)[w.rank()], w).status();
        OFS_RETURN_IF_ERROR(s);
      }
      return absl::OkStatus();
    });
    if (t < 0) state.SkipWithError("execute failed");
    // The loop is the iteration; the counter is one ExecutePlan.
    state.SetIterationTime(t);
    per_call = t / iters;
  }
  state.counters["us_per_execute"] = per_call * 1e6;
  state.SetLabel(state.range(0) == 0 ? "local slices only" : "one all-gather of 1 KiB");
}
BENCHMARK(BM_ExecutePlanOverhead1KiB)->Arg(0)->Arg(1)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace oneflow_sbp
