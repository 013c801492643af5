// CPU kernel throughput on one rank holding 1M-element f32 tensors: the
// kernel call alone (context built once, outputs preallocated), as the
// eager interpreter will run it. A baseline memcpy of the same bytes gives
// the machine's scale. Matmul and conv2d report GFLOP/s instead.
//
//   bazel run -c opt //tools/bench:kernels_benchmark
//
// Results and the machine they ran on go in docs/PERFORMANCE.md.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "ops/builtin_ops.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp {
namespace {

using kernels::KernelContext;

LocalTensor Filled(DataType dtype, const std::vector<int64_t>& dims) {
  LocalTensor t = *LocalTensor::Empty(dtype, dims);
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, (i % 97) * 0.01);
  return t;
}

// A one-rank context for `op` with inputs of the given dims and attrs
// given as (name, value) pairs; outputs allocated once.
KernelContext MakeContext(const std::string& op,
                          const std::vector<std::vector<int64_t>>& input_dims,
                          const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  std::shared_ptr<const OpDef> def = ops::BuiltinOpRegistry().Find(op);
  AttrMap map;
  for (const auto& [name, value] : attrs) map.Set(name, value);
  auto call = *OpCall::Make(def, *OpCall::DeduceInputCounts(*def, input_dims.size()), map);
  std::vector<LocalTensor> inputs;
  std::vector<TensorDesc> descs;
  for (const auto& dims : input_dims) {
    inputs.push_back(Filled(DataType::kFloat32, dims));
    descs.push_back(TensorDesc{*Shape::Make(dims), DataType::kFloat32});
  }
  const std::vector<TensorDesc> outs = *call->InferOutputDescs(descs);
  descs.insert(descs.end(), outs.begin(), outs.end());
  const Placement one = *Placement::Parse("cpu:0");
  const NdSbpSignature sig(call->num_blobs(), NdSbp{SbpParallel::Broadcast()});
  auto layouts = *kernels::MakeBlobLayouts(*call, one, 0, descs, sig);
  auto outputs = *kernels::AllocateLocalOutputs(
      absl::MakeConstSpan(layouts).subspan(call->num_inputs()));
  return *KernelContext::MakeWithLayouts(call, one, 0, layouts, inputs, outputs);
}

void RunLoop(benchmark::State& state, KernelContext& ctx, int64_t elems) {
  for (auto _ : state) {
    absl::Status s = kernels::RunKernel(ctx);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetItemsProcessed(state.iterations() * elems);
  state.SetBytesProcessed(state.iterations() * elems * 4);
}

constexpr int64_t kN = 1024;

void BM_Memcpy(benchmark::State& state) {
  std::vector<float> a(kN * kN, 1.0f), b(kN * kN);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size() * sizeof(float));
    benchmark::DoNotOptimize(b.data());
  }
  state.SetBytesProcessed(state.iterations() * kN * kN * 4);
}
BENCHMARK(BM_Memcpy);

void BM_Unary(benchmark::State& state, const char* op) {
  KernelContext ctx = MakeContext(op, {{kN, kN}}, {});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK_CAPTURE(BM_Unary, relu, "relu");
BENCHMARK_CAPTURE(BM_Unary, exp, "exp");
BENCHMARK_CAPTURE(BM_Unary, gelu, "gelu");

void BM_BroadcastAddRow(benchmark::State& state) {
  KernelContext ctx = MakeContext("broadcast_add", {{kN, kN}, {kN}}, {});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_BroadcastAddRow);

void BM_ReduceSum(benchmark::State& state) {
  KernelContext ctx = MakeContext(
      "reduce_sum", {{kN, kN}}, {{"axis", AttrValue(std::vector<int64_t>{state.range(0)})}});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_ReduceSum)->Arg(0)->Arg(1);

void BM_Transpose(benchmark::State& state) {
  KernelContext ctx =
      MakeContext("transpose", {{kN, kN}}, {{"perm", AttrValue(std::vector<int64_t>{1, 0})}});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_Transpose);

void BM_SliceStep2(benchmark::State& state) {
  KernelContext ctx = MakeContext("slice", {{kN, kN}},
                                  {{"start", AttrValue(std::vector<int64_t>{0, 0})},
                                   {"stop", AttrValue(std::vector<int64_t>{kN, kN})},
                                   {"step", AttrValue(std::vector<int64_t>{1, 2})}});
  RunLoop(state, ctx, kN * kN / 2);
}
BENCHMARK(BM_SliceStep2);

void BM_Cat(benchmark::State& state) {
  KernelContext ctx =
      MakeContext("cat", {{kN, kN / 2}, {kN, kN / 2}}, {{"axis", AttrValue(int64_t{1})}});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_Cat);

void BM_Reshape(benchmark::State& state) {
  KernelContext ctx = MakeContext("reshape", {{kN, kN}},
                                  {{"shape", AttrValue(std::vector<int64_t>{kN / 2, kN * 2})}});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_Reshape);

void BM_Dropout(benchmark::State& state) {
  KernelContext ctx = MakeContext("dropout", {{kN, kN}}, {{"rate", AttrValue(0.1)}});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_Dropout);

// n x n x n f32 matmul (Eigen GEMM, one thread); reports GFLOP/s.
void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  KernelContext ctx = MakeContext("matmul", {{n, n}, {n, n}}, {});
  for (auto _ : state) {
    absl::Status s = kernels::RunKernel(ctx);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Matmul)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);

// A ResNet-style 3x3 convolution: 8 x 64 x 32 x 32 -> 8 x 64 x 32 x 32
// (im2col + GEMM); reports GFLOP/s of the multiply-adds.
void BM_Conv2d(benchmark::State& state) {
  const int64_t n = 8, c = 64, hw = 32, f = 64;
  KernelContext ctx = MakeContext(
      "conv2d", {{n, c, hw, hw}, {f, c, 3, 3}},
      {{"filters", AttrValue(f)},
       {"kernel_size", AttrValue(std::vector<int64_t>{3, 3})},
       {"padding_before", AttrValue(std::vector<int64_t>{1, 1})}});
  for (auto _ : state) {
    absl::Status s = kernels::RunKernel(ctx);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * f * hw * hw * c * 9 * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Conv2d)->Unit(benchmark::kMillisecond);

// Row-wise ops over 1024 rows of 1024.
void BM_Softmax(benchmark::State& state) {
  KernelContext ctx = MakeContext("softmax", {{kN, kN}}, {});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_Softmax);

void BM_LayerNorm(benchmark::State& state) {
  KernelContext ctx = MakeContext("layer_norm", {{kN, kN}, {kN}, {kN}}, {});
  RunLoop(state, ctx, kN * kN);
}
BENCHMARK(BM_LayerNorm);

}  // namespace
}  // namespace oneflow_sbp
