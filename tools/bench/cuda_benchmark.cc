// GPU benchmarks (--config=cuda; docs/GPU.md, docs/PERFORMANCE.md "GPU"):
//   * memory-bound kernels (relu, same-shape add, adam_update, reduce_sum
//     over rows and over columns) report bytes_per_second over the bytes
//     they must read and write, next to a device-to-device cudaMemcpy of
//     the same size in the same run (read + write counted), so the ratio
//     is the fraction of copy bandwidth;
//   * matmul through the engine's launcher (cuda::Gemm, cublasGemmEx path)
//     against one plain cublasSgemm of the same shape, as FLOP/s;
//   * scaled_dot_product_attention and its grad (tiled nn.cu kernels) as
//     FLOP/s of their products.
// Every iteration synchronises, so small sizes include launch latency.
// Without a device each benchmark reports "no CUDA device" and skips.
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "kernels/cuda/cuda_launch.h"
#include "tools/bench/cuda_bench_ops.h"

namespace oneflow_sbp {
namespace {

namespace k = kernels::cuda;

// `count` device floats set to a small value, freed at scope exit.
class Buffers {
 public:
  Buffers(int count, int64_t floats) : ptrs_(count, nullptr) {
    std::vector<float> host(floats, 0.5f);
    for (void*& p : ptrs_) {
      ok_ = ok_ && cuda::Malloc(&p, floats * 4).empty() &&
            cuda::Copy(p, host.data(), floats * 4, 1).empty();
    }
  }
  ~Buffers() {
    for (void* p : ptrs_) cuda::Free(p);
  }
  bool ok() const { return ok_; }
  float* operator[](int i) { return static_cast<float*>(ptrs_[i]); }

 private:
  std::vector<void*> ptrs_;
  bool ok_ = true;
};

bool Ready(benchmark::State& state) {
  if (cuda::DeviceCount() > 0) return true;
  state.SkipWithError("no CUDA device");
  return false;
}

// Runs `launch` per iteration, synchronising; bytes moved per iteration.
template <typename F>
void Loop(benchmark::State& state, int64_t bytes, F launch) {
  for (auto _ : state) {
    const std::string err = launch();
    if (err.empty() && cuda::Synchronize().empty()) continue;
    state.SkipWithError(err.empty() ? "synchronize failed" : err.c_str());
    return;
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_CopyDeviceToDevice(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t n = state.range(0);
  Buffers b(2, n);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  Loop(state, 2 * n * 4, [&] { return cuda::Copy(b[1], b[0], n * 4, 0); });
}

void BM_Relu(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t n = state.range(0);
  Buffers b(2, n);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  Loop(state, 2 * n * 4, [&] { return k::Unary(k::UnaryCode::kRelu, 2, b[0], b[1], n); });
}

void BM_AddSameShape(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t n = state.range(0);
  Buffers b(3, n);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  const int64_t dims[1] = {n}, stride[1] = {1};
  Loop(state, 3 * n * 4, [&] {
    return k::Binary(k::BinaryCode::kAdd, 2, 1, dims, stride, stride, b[0], b[1], b[2]);
  });
}

void BM_AdamUpdate(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t n = state.range(0);
  Buffers b(4, n);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  // Reads param, m, v, grad; writes param, m, v.
  Loop(state, 7 * n * 4, [&] {
    return k::AdamUpdate(cuda::kF32, n, 1, 1e-3, 0.9, 0.999, 1e-8, 0, b[0], b[1], b[2], b[3]);
  });
}

// reduce_sum of f32 [n / 1024, 1024] over axis 0 (kColumns: the column
// path, a bias grad) or of [1024, n / 1024] over axis 1 (the row path);
// bytes: the input read and the output written.
template <bool kColumns>
void BM_ReduceSum(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t n = state.range(0), kept = 1024, red = n / kept;
  Buffers b(2, n);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  const int64_t out_dims[1] = {kept}, out_stride[1] = {kColumns ? 1 : red};
  const int64_t red_dims[1] = {red}, red_stride[1] = {kColumns ? kept : 1};
  Loop(state, (n + kept) * 4, [&] {
    return k::Reduce(k::ReduceCode::kSum, cuda::kF32, 1, out_dims, out_stride, 1, red_dims,
                     red_stride, 1, b[0], b[1]);
  });
}

template <bool kDirect>
void BM_Matmul(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t m = state.range(0);
  Buffers b(3, m * m);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  for (auto _ : state) {
    const std::string err =
        kDirect ? bench::CublasSgemmRowMajor(m, m, m, b[0], b[1], b[2])
                : k::Gemm(2, false, false, m, m, m, 1.0, b[0], 0, b[1], 0, 0.0, b[2], 0, 1);
    if (!err.empty() || !cuda::Synchronize().empty()) {
      return state.SkipWithError(err.empty() ? "synchronize failed" : err.c_str());
    }
  }
  state.counters["FLOP/s"] = benchmark::Counter(
      2.0 * m * m * m * state.iterations(), benchmark::Counter::kIsRate);
}

// scaled_dot_product_attention (kGrad false) or its grad, f32, 8 heads of
// S query and key rows, head dim 64, causal or not: FLOP/s counts the two
// S x S x D products of the forward (five for the grad: scores, dout . v,
// dq, dk and dv; the kernels' further recomputation of scores is not
// counted), halved when causal. The kernels compute in double (nn.cu), so
// this is far below matmul rates.
template <bool kGrad>
void BM_Attention(benchmark::State& state) {
  if (!Ready(state)) return;
  const int64_t bh = 8, s = state.range(0), d = 64;
  const bool causal = state.range(1) != 0;
  Buffers b(7, bh * s * d);
  if (!b.ok()) return state.SkipWithError("allocation failed");
  const double scale = 0.125;
  for (auto _ : state) {
    const std::string err =
        kGrad ? k::AttentionGrad(cuda::kF32, bh, s, s, d, d, scale, causal, b[0], b[1], b[2],
                                 b[3], b[4], b[5], b[6])
              : k::Attention(cuda::kF32, bh, s, s, d, d, scale, causal, b[0], b[1], b[2], b[3],
                             nullptr);
    if (!err.empty() || !cuda::Synchronize().empty()) {
      return state.SkipWithError(err.empty() ? "synchronize failed" : err.c_str());
    }
  }
  const double products = kGrad ? 5 : 2;
  state.counters["FLOP/s"] = benchmark::Counter(
      products * 2.0 * bh * s * s * d * (causal ? 0.5 : 1) * state.iterations(),
      benchmark::Counter::kIsRate);
}

// 1 Mi to 64 Mi floats (4 to 256 MiB per buffer).
BENCHMARK(BM_CopyDeviceToDevice)->RangeMultiplier(8)->Range(1 << 20, 1 << 26)->UseRealTime();
BENCHMARK(BM_Relu)->RangeMultiplier(8)->Range(1 << 20, 1 << 26)->UseRealTime();
BENCHMARK(BM_AddSameShape)->RangeMultiplier(8)->Range(1 << 20, 1 << 26)->UseRealTime();
BENCHMARK(BM_AdamUpdate)->RangeMultiplier(8)->Range(1 << 20, 1 << 26)->UseRealTime();
BENCHMARK(BM_ReduceSum<true>)
    ->Name("BM_ReduceSum_Columns")
    ->RangeMultiplier(8)
    ->Range(1 << 20, 1 << 26)
    ->UseRealTime();
BENCHMARK(BM_ReduceSum<false>)
    ->Name("BM_ReduceSum_Rows")
    ->RangeMultiplier(8)
    ->Range(1 << 20, 1 << 26)
    ->UseRealTime();
BENCHMARK(BM_Matmul<false>)->Name("BM_Matmul_Engine")->Arg(1024)->Arg(4096)->UseRealTime();
BENCHMARK(BM_Matmul<true>)->Name("BM_Matmul_CublasSgemm")->Arg(1024)->Arg(4096)->UseRealTime();
// Attention at S 1024 and 4096, causal 0 / 1.
BENCHMARK(BM_Attention<false>)
    ->Name("BM_Attention")
    ->ArgsProduct({{1024, 4096}, {0, 1}})
    ->UseRealTime();
BENCHMARK(BM_Attention<true>)
    ->Name("BM_AttentionGrad")
    ->ArgsProduct({{1024, 4096}, {0, 1}})
    ->UseRealTime();

}  // namespace
}  // namespace oneflow_sbp

BENCHMARK_MAIN();
