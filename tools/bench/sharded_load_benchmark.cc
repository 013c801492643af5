// Sharded loading (checkpoint/sharded_load.h) against a full read of the same
// tensor. Results go in docs/PERFORMANCE.md ("Sharded loading").
//
//   bazel run -c opt //tools/bench:sharded_load_benchmark
//
// One f32[4096,4096] tensor (64 MiB) is written to a safetensors file in
// $TEST_TMPDIR or /tmp once per run, so every read comes from the page
// cache (a cold read would measure the disk). BM_FullRead reads it whole
// with SafetensorsFile::Read on one thread. BM_LoadGlobal runs LoadGlobal
// on rank threads (the in-process backend) sharing one open file, as
// `sbp embed` does: the time is the slowest rank's LoadGlobal after a
// barrier (manual time, no thread start-up). Counters, per iteration:
// bytes_per_rank (the most any rank read; the least is bytes_min_rank),
// bytes_all_ranks (what the file's counter saw from every rank) and
// preads_per_rank (contiguous runs the slowest-reading layout needs: the
// rows of a column split).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "eager/eager_context.h"
#include "engine/engine.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_load.h"
#include "comm/inprocess_world.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {
namespace {

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 4096;
constexpr int64_t kBytes = kRows * kCols * 4;  // 64 MiB
constexpr char kName[] = "w";

// The file, written once and removed at exit; empty on failure. The
// string is never destroyed, so the exit handler may still read it.
const std::string& TensorFile() {
  static const std::string* const path = []() -> const std::string* {
    const char* tmp = std::getenv("TEST_TMPDIR");
    auto* p = new std::string(absl::StrCat(tmp != nullptr ? tmp : "/tmp",
                                           "/sharded_load_benchmark-", ::getpid(), ".safetensors"));
    absl::StatusOr<LocalTensor> t = LocalTensor::Empty(DataType::kFloat32, {kRows, kCols});
    if (!t.ok()) return new std::string();
    float* data = static_cast<float*>(t->raw_data());
    for (int64_t i = 0; i < t->elem_cnt(); ++i) data[i] = static_cast<float>(i % 1000) * 0.5f;
    if (!checkpoint::WriteSafetensors(*p, {{kName, *t}}).ok()) return new std::string();
    std::atexit([] { ::unlink(TensorFile().c_str()); });
    return p;
  }();
  return *path;
}

engine::Engine& Eng() {
  static engine::Engine* engine = engine::Engine::Create()->release();
  return *engine;
}

void BM_FullRead(benchmark::State& state) {
  absl::StatusOr<std::unique_ptr<checkpoint::SafetensorsFile>> f = checkpoint::SafetensorsFile::Open(TensorFile());
  if (!f.ok()) {
    state.SkipWithError(std::string(f.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<LocalTensor> t = (*f)->Read(kName);
    if (!t.ok()) state.SkipWithError(std::string(t.status().message()).c_str());
    benchmark::DoNotOptimize(t);
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["bytes_per_rank"] = static_cast<double>((*f)->bytes_read()) / iterations;
  state.counters["preads_per_rank"] = 1;
  state.SetBytesProcessed(static_cast<int64_t>((*f)->bytes_read()));
}
BENCHMARK(BM_FullRead)->Unit(benchmark::kMillisecond);

struct Layout {
  const char* placement;
  const char* nd_sbp;
};
// Indexed by the benchmark's argument.
const std::vector<Layout>& Layouts() {
  static const std::vector<Layout> layouts = {
      {"cpu:0-3 [2,2]", "(S(0), S(1))"}, {"cpu:0-3 [2,2]", "(S(0), B)"},
      {"cpu:0-3 [2,2]", "(B, S(1))"},    {"cpu:0-3 [2,2]", "(B, B)"},
      {"cpu:0-3 [2,2]", "(P, B)"},       {"cpu:0-3", "S(0)"},
      {"cpu:0-3", "S(1)"},               {"cpu:0-3", "B"},
  };
  return layouts;
}

void BM_LoadGlobal(benchmark::State& state) {
  const Layout& layout = Layouts()[state.range(0)];
  state.SetLabel(absl::StrCat(layout.nd_sbp, " on ", layout.placement));
  absl::StatusOr<std::unique_ptr<checkpoint::SafetensorsFile>> f = checkpoint::SafetensorsFile::Open(TensorFile());
  absl::StatusOr<Placement> placement = Placement::Parse(layout.placement);
  absl::StatusOr<NdSbp> nd_sbp = NdSbp::Parse(layout.nd_sbp);
  if (!f.ok() || !placement.ok() || !nd_sbp.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  const int n = static_cast<int>(placement->parallel_num());
  std::vector<double> seconds(n);
  std::vector<int64_t> bytes(n), runs(n);
  for (auto _ : state) {
    absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(n, [&](comm::Communicator& w) {
      eager::EagerContext ctx(Eng(), w);
      absl::Status s = w.Barrier();
      OFS_RETURN_IF_ERROR(s);
      const absl::Time start = absl::Now();
      absl::StatusOr<eager::GlobalTensor> t = checkpoint::LoadGlobal(ctx, **f, kName, *placement, *nd_sbp);
      seconds[w.rank()] = absl::ToDoubleSeconds(absl::Now() - start);
      OFS_RETURN_IF_ERROR(t.status());
      // A rank that reads holds exactly the bytes it read; on a P axis the
      // ranks off coordinate 0 hold zeros and read nothing.
      const MeshCoord coord = placement->CoordinateOf(*placement->ParallelIdOf(w.rank()));
      bool reads = true;
      for (int a = 0; a < nd_sbp->size(); ++a) {
        reads = reads && (!(*nd_sbp)[a].is_partial_sum() || coord[a] == 0);
      }
      const LocalTensor& local = t->local();
      bytes[w.rank()] = reads ? local.byte_size() : 0;
      // Contiguous runs: one for whole rows, else one per row.
      runs[w.rank()] = !reads ? 0 : local.dims()[1] == kCols ? 1 : local.dims()[0];
      return absl::OkStatus();
    });
    bool ok = ran.ok();
    for (size_t r = 0; ok && r < ran->size(); ++r) ok = (*ran)[r].ok();
    if (!ok) {
      state.SkipWithError("LoadGlobal failed");
      return;
    }
    state.SetIterationTime(*std::max_element(seconds.begin(), seconds.end()));
  }
  const double iterations = static_cast<double>(state.iterations());
  int64_t sum = 0;
  for (int64_t b : bytes) sum += b;
  if (sum * state.iterations() != (*f)->bytes_read()) {
    state.SkipWithError("the ranks' slices do not add up to the bytes the file read");
    return;
  }
  state.counters["bytes_per_rank"] = static_cast<double>(*std::max_element(bytes.begin(), bytes.end()));
  state.counters["bytes_min_rank"] = static_cast<double>(*std::min_element(bytes.begin(), bytes.end()));
  state.counters["bytes_all_ranks"] = static_cast<double>((*f)->bytes_read()) / iterations;
  state.counters["preads_per_rank"] = static_cast<double>(*std::max_element(runs.begin(), runs.end()));
}
BENCHMARK(BM_LoadGlobal)
    ->DenseRange(0, 7)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace oneflow_sbp
