// The reduction kernels alone (comm/reduce_op.h): inout = op(inout,
// in) for every dtype and op, against a memcpy of the same bytes in the
// same run. Results go in docs/PERFORMANCE.md ("Reductions at memory
// speed").
//
//   bazel run -c opt //tools/bench:reduce_benchmark
//
// "bytes" is the reduced payload (count * element size); a reduction
// streams three times that (two reads, one write) and a memcpy two (one
// read, one write), so at memory speed a reduction reaches about 2/3 of
// memcpy's bytes per second.
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "oneflow_sbp/values/data_type.h"
#include "comm/reduce_op.h"

namespace oneflow_sbp {
namespace {

// Large enough to stream from memory (not the caches).
constexpr int64_t kBytes = int64_t{32} << 20;

void BM_MemcpyOfThePayload(benchmark::State& state) {
  std::vector<char> a(kBytes, 1), b(kBytes, 2);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), kBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(BM_MemcpyOfThePayload)->Unit(benchmark::kMillisecond);

// range(0): DataType, range(1): ReduceOp.
void BM_ReduceInto(benchmark::State& state) {
  const DataType dtype = static_cast<DataType>(state.range(0));
  const comm::ReduceOp op = static_cast<comm::ReduceOp>(state.range(1));
  const int64_t count = kBytes / ByteSizeOf(dtype);
  // Byte 0x01 everywhere: a small value of every type (no NaN, no
  // overflow surprises), and bools that are true.
  std::vector<char> in(kBytes, 1), acc(kBytes, 1);
  for (auto _ : state) {
    comm::ReduceInto(op, dtype, in.data(), acc.data(), count);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
  state.SetLabel(std::string(DataTypeName(dtype)) + " " +
                 std::string(comm::ReduceOpName(op)));
}
void AllReductions(benchmark::internal::Benchmark* b) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (int op = 0; op < 3; ++op) b->Args({t, op});
  }
}
BENCHMARK(BM_ReduceInto)->Apply(AllReductions)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace oneflow_sbp
