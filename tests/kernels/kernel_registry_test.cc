// The kernel registry and KernelContext: registration, lookup errors,
// coverage of this batch's ops, the caller/kernel contract checks, and the
// failure paths that must return a Status and never abort (unsupported
// dtype, wrong preallocated output dims, missing or mistyped attributes,
// absent blobs).
#include "kernels/kernel_registry.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_context.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using kernels::BlobLayout;
using kernels::KernelContext;
using kernels::KernelFn;
using kernels::KernelRegistry;
using kernels::RunKernel;
using ::testing::HasSubstr;

// The ops of this batch: every one must have a cpu kernel.
const std::vector<std::string>& BatchOps() {
  static const auto* ops = new std::vector<std::string>{
      "abs", "ceil", "cos", "erf", "exp", "floor", "log", "negative", "reciprocal", "relu",
      "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "tanh", "gelu", "fast_gelu",
      "mish", "silu", "softplus", "logical_not", "identity", "copy", "scalar_add", "scalar_mul",
      "scalar_div", "scalar_floordiv", "scalar_fmod", "scalar_pow", "cast", "dropout",
      "dropout_grad", "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
      "broadcast_pow", "broadcast_fmod", "broadcast_maximum", "broadcast_minimum",
      "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
      "broadcast_less", "broadcast_less_equal", "where", "add_n", "reduce_sum", "reduce_mean",
      "reduce_max", "reduce_min", "reduce_prod", "reduce_nansum", "reshape", "flatten",
      "expand_dims", "squeeze", "transpose", "expand", "broadcast_like", "reduce_sum_like", "cat",
      "stack", "split", "narrow", "narrow_grad", "slice", "slice_grad", "slice_update",
      // matmul family, nn ops, norms, index ops
      "matmul", "batch_matmul", "broadcast_matmul", "bias_add", "conv2d", "softmax",
      "log_softmax", "softmax_grad", "log_softmax_grad", "relu_grad", "gelu_grad", "silu_grad",
      "sparse_softmax_cross_entropy", "sparse_softmax_cross_entropy_grad",
      "sparse_softmax_cross_entropy_ms", "sparse_softmax_cross_entropy_ms_grad", "layer_norm",
      "layer_norm_grad", "layer_norm_param_grad", "rms_norm", "rms_norm_grad",
      "rms_norm_param_grad", "embedding", "embedding_grad", "gather", "dim_gather", "argwhere"};
  return *ops;
}

TEST(KernelRegistry, EveryBatchOpHasACpuKernelWithDtypes) {
  const std::vector<std::string> have = KernelRegistry::Global().OpsWithKernels(DeviceType::kCpu);
  const std::set<std::string> set(have.begin(), have.end());
  for (const std::string& op : BatchOps()) {
    EXPECT_TRUE(set.count(op)) << op;
    const std::vector<DataType> dtypes = KernelRegistry::Global().Dtypes(op, DeviceType::kCpu);
    EXPECT_FALSE(dtypes.empty()) << op;
    EXPECT_NE(std::find(dtypes.begin(), dtypes.end(), DataType::kFloat32), dtypes.end()) << op;
    EXPECT_NE(std::find(dtypes.begin(), dtypes.end(), DataType::kFloat64), dtypes.end()) << op;
  }
  // Kernels exist only for ops the catalog defines.
  for (const std::string& op : have) EXPECT_NE(Registry().Find(op), nullptr) << op;
  EXPECT_TRUE(KernelRegistry::Global().OpsWithKernels(DeviceType::kCuda).empty());
}

// The catalog's goal: eager Apply can run every registered op, forward
// and backward, on cpu (`sbp ops` marks any op that lacks one).
TEST(KernelRegistry, EveryRegisteredOpHasACpuKernel) {
  std::vector<std::string> missing;
  for (const std::string& op : Registry().OpNames()) {
    if (!KernelRegistry::Global().Find(op, DeviceType::kCpu).ok()) missing.push_back(op);
  }
  EXPECT_TRUE(missing.empty()) << absl::StrJoin(missing, " ");
  EXPECT_GE(Registry().OpNames().size(), 100u);
}

TEST(KernelRegistry, LookupErrors) {
  absl::Status s = KernelRegistry::Global().Find("no_such_op", DeviceType::kCpu).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_EQ(s.message(), "no cpu kernel for op 'no_such_op'");
  s = KernelRegistry::Global().Find("abs", DeviceType::kCuda).status();
  EXPECT_EQ(s.message(), "no cuda kernel for op 'abs'");
  KernelRegistry r;
  KernelFn ok = [](KernelContext&) { return absl::OkStatus(); };
  EXPECT_TRUE(r.Register("abs", DeviceType::kCpu, ok).ok());
  EXPECT_TRUE(r.Register("abs", DeviceType::kCuda, ok).ok());
  EXPECT_THAT(r.Register("abs", DeviceType::kCpu, ok), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(r.Register("", DeviceType::kCpu, ok), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(r.Register("x", DeviceType::kCpu, nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(r.OpsWithKernels(DeviceType::kCpu), std::vector<std::string>{"abs"});
  EXPECT_TRUE(r.Dtypes("abs", DeviceType::kCpu).empty());
}

// A context for `op` on one rank holding everything, with `outputs` as the
// preallocated outputs (default: the right shapes).
absl::StatusOr<KernelContext> OneRankContext(std::shared_ptr<const OpCall> call,
                                             const std::vector<LocalTensor>& inputs,
                                             std::vector<LocalTensor> outputs = {}) {
  std::vector<TensorDesc> descs;
  for (const LocalTensor& t : inputs) descs.push_back(TensorDesc{*Shape::Make(t.dims()), t.dtype()});
  absl::StatusOr<std::vector<TensorDesc>> out = call->InferOutputDescs(descs);
  if (!out.ok()) return out.status();
  descs.insert(descs.end(), out->begin(), out->end());
  const Placement one = *Placement::Parse("cpu:0");
  const NdSbpSignature sig(call->num_blobs(), NdSbp{SbpParallel::Broadcast()});
  if (outputs.empty()) {
    absl::StatusOr<std::vector<BlobLayout>> layouts =
        kernels::MakeBlobLayouts(*call, one, 0, descs, sig);
    if (!layouts.ok()) return layouts.status();
    outputs = *kernels::AllocateLocalOutputs(
        absl::MakeConstSpan(*layouts).subspan(call->num_inputs()));
  }
  return KernelContext::Make(call, one, 0, descs, sig, inputs, outputs);
}

TEST(KernelContext, AccessorsAndLayouts) {
  auto call = CallOrDie("dropout", 1, {"rate=0.5"});
  const LocalTensor x = GridTensor(DataType::kFloat32, {4, 6}, 1);
  absl::StatusOr<KernelContext> ctx = OneRankContext(call, {x});
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ(ctx->op_type(), "dropout");
  EXPECT_EQ(ctx->num_inputs(), 1);
  EXPECT_EQ(ctx->num_outputs(), 2);
  EXPECT_TRUE(ctx->input("in").SharesStorageWith(x));
  EXPECT_TRUE(ctx->input(0).SharesStorageWith(x));
  EXPECT_EQ(ctx->output("mask").dtype(), DataType::kBool);
  EXPECT_EQ(ctx->output_bn(1), "mask_0");
  EXPECT_FALSE(ctx->has_input("_add_to_output"));
  EXPECT_EQ(ctx->output_layout(0).slice.ToString(), "[0,4)x[0,6)");
  EXPECT_EQ(ctx->Attr<double>("rate"), 0.5);
  EXPECT_EQ(ctx->Attr<int64_t>("seed"), 0);
  EXPECT_TRUE(ctx->status().ok());
}

TEST(KernelContext, MakeChecksInputsAgainstTheirLayouts) {
  auto call = CallOrDie("relu", 1);
  const Placement two = *Placement::Parse("cpu:0-1");
  const std::vector<TensorDesc> descs = {*TensorDesc::Parse("f32[5,3]"),
                                         *TensorDesc::Parse("f32[5,3]")};
  const NdSbpSignature sig = {*NdSbp::Parse("S(0)"), *NdSbp::Parse("S(0)")};
  // Rank 1 holds rows [3,5): a [3,3] input is wrong.
  absl::StatusOr<KernelContext> ctx =
      KernelContext::Make(call, two, 1, descs, sig, {*LocalTensor::Zeros(DataType::kFloat32, {3, 3})},
                          {*LocalTensor::Zeros(DataType::kFloat32, {2, 3})});
  EXPECT_THAT(ctx, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(ctx.status().message()),
              HasSubstr("local input x_0 is f32[3,3] but its layout f32[5,3] (S(0)) gives rank 1 "
                        "the slice [3,5)x[0,3) (f32[2,3])"));
  ctx = KernelContext::Make(call, two, 1, descs, sig, {*LocalTensor::Zeros(DataType::kFloat32, {2, 3})},
                            {LocalTensor()});
  EXPECT_THAT(ctx, StatusIs(absl::StatusCode::kInvalidArgument));
  ctx = KernelContext::Make(call, two, 2, descs, sig, {}, {});
  EXPECT_THAT(ctx, StatusIs(absl::StatusCode::kInvalidArgument));
  const NdSbpSignature bad = {*NdSbp::Parse("S(2)"), *NdSbp::Parse("S(0)")};
  ctx = KernelContext::Make(call, two, 0, descs, bad,
                            {*LocalTensor::Zeros(DataType::kFloat32, {5, 3})},
                            {*LocalTensor::Zeros(DataType::kFloat32, {5, 3})});
  EXPECT_THAT(ctx, StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(KernelFailures, WrongPreallocatedOutputDimsAreInternal) {
  auto call = CallOrDie("exp", 1);
  absl::StatusOr<KernelContext> ctx =
      OneRankContext(call, {GridTensor(DataType::kFloat32, {4, 3}, 1)},
                     {*LocalTensor::Zeros(DataType::kFloat32, {3, 3})});
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  absl::Status s = RunKernel(*ctx);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("exp cpu kernel: preallocated y_0 is f32[3,3] but the kernel computes "
                        "f32[4,3] from its local inputs"));
  // A wrong dtype is caught the same way, for a layout kernel too.
  ctx = OneRankContext(CallOrDie("transpose", 1, {"perm=1,0"}),
                       {GridTensor(DataType::kFloat32, {4, 3}, 1)},
                       {*LocalTensor::Zeros(DataType::kFloat64, {3, 4})});
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_THAT(RunKernel(*ctx), StatusIs(absl::StatusCode::kInternal));
  ctx = OneRankContext(CallOrDie("reduce_sum", 1, {"axis=1"}),
                       {GridTensor(DataType::kFloat32, {4, 3}, 1)},
                       {*LocalTensor::Zeros(DataType::kFloat32, {4, 1})});
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_THAT(RunKernel(*ctx), StatusIs(absl::StatusCode::kInternal));
}

TEST(KernelFailures, UnsupportedDtypeIsUnimplemented) {
  for (const auto& [op, input] : std::vector<std::pair<std::string, LocalTensor>>{
           {"sqrt", IntTensor(DataType::kInt64, {3}, 1)},
           {"reduce_mean", IntTensor(DataType::kInt32, {3}, 1)},
           {"dropout", IntTensor(DataType::kInt32, {3}, 1)},
           {"negative", BoolTensor({3}, 1)},
           {"sigmoid", IntTensor(DataType::kUInt8, {3}, 1, 0, 5)}}) {
    std::vector<std::string> attrs;
    if (op == "reduce_mean") attrs = {"axis=0"};
    absl::Status s = RunOnce(op, {input}, attrs).status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented)) << op << ": " << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr(absl::StrCat("no cpu kernel for op '", op, "' with dtype ",
                                       DataTypeName(input.dtype()))));
  }
}

TEST(KernelFailures, MissingOrMistypedAttributesAreRecordedNotFatal) {
  KernelRegistry r;
  // A kernel that reads attributes its op does not have, or with the wrong
  // type, and then succeeds: RunKernel still fails.
  ASSERT_TRUE(r.Register("relu", DeviceType::kCpu, [](KernelContext& ctx) {
                 EXPECT_EQ(ctx.Attr<double>("alpha"), 0.0);  // default value returned
                 return absl::OkStatus();
               }).ok());
  ASSERT_TRUE(r.Register("cast", DeviceType::kCpu, [](KernelContext& ctx) {
                 EXPECT_EQ(ctx.Attr<int64_t>("dtype"), 0);
                 EXPECT_EQ(ctx.Attr<std::string>("dtype"), "f64");  // later reads still work
                 return absl::OkStatus();
               }).ok());
  ASSERT_TRUE(r.Register("dropout", DeviceType::kCpu, [](KernelContext& ctx) {
                 EXPECT_FALSE(ctx.input("_add_to_output").defined());
                 EXPECT_FALSE(ctx.output(5).defined());
                 return absl::OkStatus();
               }).ok());

  absl::StatusOr<KernelContext> ctx =
      OneRankContext(CallOrDie("relu", 1), {GridTensor(DataType::kFloat32, {2}, 1)});
  ASSERT_TRUE(ctx.ok());
  absl::Status s = RunKernel(*ctx, r);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(s.message(), "relu cpu kernel: attribute 'alpha' (float) is missing from relu(x_0 -> y_0)");

  ctx = OneRankContext(CallOrDie("cast", 1, {"dtype=f64"}), {GridTensor(DataType::kFloat32, {2}, 1)});
  ASSERT_TRUE(ctx.ok());
  s = RunKernel(*ctx, r);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(s.message(),
            "cast cpu kernel: attribute 'dtype' is string 'f64' but the kernel reads it as int");

  ctx = OneRankContext(CallOrDie("dropout", 1), {GridTensor(DataType::kFloat32, {2}, 1)});
  ASSERT_TRUE(ctx.ok());
  s = RunKernel(*ctx, r);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("asked for input _add_to_output_0, which this call does not have"));
}

}  // namespace
}  // namespace oneflow_sbp::testing
