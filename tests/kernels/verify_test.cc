// The soundness verifier (kernels/verify): a wrong rule is caught and
// named, a right one passes, gaps (no kernel) are reported apart, bad
// options are errors, the input recipes are valid, and a fast subset of
// the catalog passes. The whole catalog is verify_sweep_test (tag sweep).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "ops/builtin_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/verify/input_recipes.h"
#include "kernels/verify/verifier.h"
#include "tests/support/status_matchers.h"
#include "cli/cmd_verify.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::kernels {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

absl::Status SameShape(ShapeContext& ctx) {
  ctx.set_output("y", 0, ctx.input("x"));
  return absl::OkStatus();
}

// relu's rule plus P -> P: wrong, relu(a) + relu(b) != relu(a + b).
absl::Status WrongReluSbp(SbpContext& ctx) {
  absl::Status s = SplitForEachAxis(ctx);
  if (!s.ok()) return s;
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// Extended rules (P(max)/P(min), offered under `planned`), checked as any
// rule is: relu keeps both kinds (right); claiming that negative keeps them
// (it swaps them) is wrong, and so is treating P(max) as P.
absl::Status RightReluPartials(SbpContext& ctx) {
  for (PartialKind k : {PartialKind::kMax, PartialKind::kMin}) {
    ctx.NewBuilder().Partial(ctx.inputs(), k).Partial(ctx.outputs(), k).Build();
  }
  return absl::OkStatus();
}
absl::Status WrongNegativePartials(SbpContext& ctx) {
  ctx.NewBuilder().Partial(ctx.inputs(), PartialKind::kMax)
      .Partial(ctx.outputs(), PartialKind::kMax).Build();
  return absl::OkStatus();
}
absl::Status MaxAsSumPartials(SbpContext& ctx) {
  ctx.NewBuilder().Partial(ctx.inputs(), PartialKind::kMax)
      .Partial(ctx.outputs(), PartialKind::kSum).Build();
  return absl::OkStatus();
}

// A private op registry (wrong_relu, right_relu, kernelless, and the
// extended-partial ops) and a kernel registry that runs the built-in relu
// (negative) kernel for the relus (negatives).
struct Fixture {
  OpRegistry ops;
  KernelRegistry kernels;
  Fixture() {
    auto unary = [](const std::string& name, GetSbpFn rule) {
      return OpDefBuilder(name).Input("x").Output("y").SetShapeFn(SameShape).SetGetSbpFn(rule);
    };
    EXPECT_TRUE(ops.Register(unary("wrong_relu", WrongReluSbp)).ok());
    EXPECT_TRUE(ops.Register(unary("right_relu", SplitForEachAxis)).ok());
    EXPECT_TRUE(ops.Register(unary("kernelless", SplitForEachAxis)).ok());
    auto extended = [&](const std::string& name, GetSbpFn rule) {
      return unary(name, SplitForEachAxis).SetExtendedSbpFn(std::move(rule));
    };
    EXPECT_TRUE(ops.Register(extended("max_relu", RightReluPartials)).ok());
    EXPECT_TRUE(ops.Register(extended("max_negative", WrongNegativePartials)).ok());
    EXPECT_TRUE(ops.Register(extended("max_as_sum_relu", MaxAsSumPartials)).ok());
    absl::StatusOr<KernelFn> relu = KernelRegistry::Global().Find("relu", DeviceType::kCpu);
    EXPECT_TRUE(relu.ok()) << relu.status();
    absl::StatusOr<KernelFn> neg = KernelRegistry::Global().Find("negative", DeviceType::kCpu);
    EXPECT_TRUE(neg.ok()) << neg.status();
    EXPECT_TRUE(kernels.Register("wrong_relu", DeviceType::kCpu, *relu).ok());
    EXPECT_TRUE(kernels.Register("right_relu", DeviceType::kCpu, *relu).ok());
    EXPECT_TRUE(kernels.Register("max_relu", DeviceType::kCpu, *relu).ok());
    EXPECT_TRUE(kernels.Register("max_as_sum_relu", DeviceType::kCpu, *relu).ok());
    EXPECT_TRUE(kernels.Register("max_negative", DeviceType::kCpu, *neg).ok());
  }
  absl::StatusOr<VerifyReport> Run(std::vector<std::string> op_names,
                                   std::vector<int64_t> mesh = {}) {
    VerifyOptions o;
    o.ops = std::move(op_names);
    o.mesh = std::move(mesh);
    o.kernels = &kernels;
    return RunVerify(ops, o);
  }
};

TEST(Verify, WrongRuleIsCaughtAndNamed) {
  Fixture f;
  absl::StatusOr<VerifyReport> r = f.Run({"wrong_relu"});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ops.size(), 1u);
  const OpVerification& v = r->ops[0];
  EXPECT_EQ(v.outcome, VerifyOutcome::kFailed);
  EXPECT_FALSE(r->ok());
  ASSERT_THAT(v.failures, Not(IsEmpty()));
  // Only the P candidates fail, on every mesh; the 1-D one is named.
  bool named_1d = false;
  for (const SweepFailure& fail : v.failures) {
    EXPECT_THAT(fail.signature, HasSubstr("P")) << fail.ToString();
    EXPECT_EQ(fail.blob, "y_0");
    EXPECT_GT(fail.max_error, 0);
    named_1d |= fail.signature == "x_0:P -> y_0:P" && fail.placement == "cpu:0-1";
  }
  EXPECT_TRUE(named_1d);
  const std::string text = VerifyReportToText(*r);
  EXPECT_THAT(text, HasSubstr("wrong_relu: FAILED"));
  EXPECT_THAT(text, HasSubstr("on cpu:0-1: x_0:P -> y_0:P\n    y_0 max error"));
  EXPECT_THAT(text, HasSubstr("failed: wrong_relu"));
}

TEST(Verify, RightRulePassesOnEveryMesh) {
  Fixture f;
  absl::StatusOr<VerifyReport> r = f.Run({"right_relu"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << VerifyReportToText(*r);
  // [5,1,3]: 1-D S(0),S(1),S(2)+B on [2] and [3] = 8; N-D (S|B)^2 less
  // all-B... at least the 1-D ones plus some N-D.
  EXPECT_GT(r->ops[0].checked, 8);
  EXPECT_EQ(r->ops[0].inputs, "f32[5,1,3]");
}

TEST(Verify, ExtendedPartialRulesAreCheckedToo) {
  Fixture f;
  absl::StatusOr<VerifyReport> right = f.Run({"max_relu"});
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_TRUE(right->ok()) << VerifyReportToText(*right);
  absl::StatusOr<VerifyReport> plain = f.Run({"right_relu"});
  ASSERT_TRUE(plain.ok());
  // Two more 1-D candidates (P(max), P(min)) on each of [2] and [3].
  EXPECT_GE(right->ops[0].checked, plain->ops[0].checked + 4);
  for (const std::string op : {"max_negative", "max_as_sum_relu"}) {
    absl::StatusOr<VerifyReport> wrong = f.Run({op});
    ASSERT_TRUE(wrong.ok()) << wrong.status();
    EXPECT_FALSE(wrong->ok()) << op;
    bool named = false;
    bool nd = false;  // the N-D products with the extended candidates are checked too
    for (const SweepFailure& fail : wrong->ops[0].failures) {
      named |= fail.signature == (op == "max_negative" ? "x_0:P(max) -> y_0:P(max)"
                                                       : "x_0:P(max) -> y_0:P");
      nd |= fail.placement == "cpu:0-3 [2,2]" && fail.signature.rfind("x_0:(P(max),", 0) == 0;
    }
    EXPECT_TRUE(named) << VerifyReportToText(*wrong);
    EXPECT_TRUE(nd) << VerifyReportToText(*wrong);
  }
}

TEST(Verify, OpWithoutKernelIsACoverageGapNotACrash) {
  Fixture f;
  absl::StatusOr<VerifyReport> r = f.Run({"kernelless", "right_relu"}, {2});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ops.size(), 2u);
  EXPECT_EQ(r->ops[0].op, "kernelless");
  EXPECT_EQ(r->ops[0].outcome, VerifyOutcome::kNoKernel);
  EXPECT_THAT(r->ops[0].reason, HasSubstr("no cpu kernel"));
  EXPECT_EQ(r->ops[1].outcome, VerifyOutcome::kPassed);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->failed_ops(), 0);
  const std::string text = VerifyReportToText(*r);
  EXPECT_THAT(text, HasSubstr("kernelless: no cpu kernel"));
  EXPECT_THAT(text, HasSubstr("no cpu kernel: kernelless\n"));
  EXPECT_THAT(text, Not(HasSubstr("failed:")));
}

TEST(Verify, BadOptionsAreErrors) {
  Fixture f;
  EXPECT_THAT(f.Run({"nope"}).status().message(), HasSubstr("unknown op 'nope'"));
  EXPECT_THAT(f.Run({"right_relu"}, {2, 0}).status().message(),
              HasSubstr("extent 0 is not positive"));
  EXPECT_THAT(f.Run({"right_relu"}, {2, 2, 2, 2}).status().message(),
              HasSubstr("1 to 3 axes"));
  EXPECT_THAT(f.Run({"right_relu"}, {17}).status().message(), HasSubstr("at most 16 ranks"));
  // The command: the same errors, and flags it parses itself.
  cli::VerifyCmdOptions o;
  o.op = "relu";
  o.mesh = "2,x";
  EXPECT_THAT(cli::RunVerify(o, ops::BuiltinOpRegistry()).status().message(),
              HasSubstr("--mesh='2,x'"));
  o.mesh = "2";
  o.format = "table";
  EXPECT_THAT(cli::RunVerify(o, ops::BuiltinOpRegistry()),
            StatusIs(absl::StatusCode::kInvalidArgument));
  o.format = "text";
  o.device = "tpu";
  EXPECT_THAT(cli::RunVerify(o, ops::BuiltinOpRegistry()).status().message(),
              HasSubstr("--device='tpu': expected cpu or cuda"));
}

// This binary links no cuda backend (the default build): one error for
// the whole run, naming the build option, not one per op and candidate.
TEST(Verify, CudaWithoutABackendIsOneUnimplementedError) {
  Fixture f;
  VerifyOptions o;
  o.ops = {"right_relu", "wrong_relu"};
  o.kernels = &f.kernels;
  o.device = DeviceType::kCuda;
  absl::StatusOr<VerifyReport> r = RunVerify(f.ops, o);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_THAT(r.status().message(), HasSubstr("--config=cuda"));
  cli::VerifyCmdOptions c;
  c.op = "relu";
  c.device = "cuda";
  absl::StatusOr<std::string> out = cli::RunVerify(c, ops::BuiltinOpRegistry());
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_THAT(out.status().message(), HasSubstr("`bazel build --config=cuda //cli:sbp`"));
}

TEST(Verify, CommandExitCodeAndJson) {
  Fixture f;
  cli::VerifyCmdOptions o;
  o.op = "wrong_relu";
  o.mesh = "2";
  o.format = "json";
  o.kernels = &f.kernels;
  int exit_code = 0;
  absl::StatusOr<std::string> out = cli::RunVerify(o, f.ops, &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(*out, HasSubstr("\"failed\": [\"wrong_relu\"]"));
  EXPECT_THAT(*out, HasSubstr("\"signature\": \"x_0:P -> y_0:P\", \"blob\": \"y_0\""));
  o.op = "right_relu";
  exit_code = 0;
  out = cli::RunVerify(o, f.ops, &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(*out, HasSubstr("\"ok\": true"));
}

TEST(InputRecipes, TableIsSortedRegisteredAndValid) {
  const OpRegistry& registry = ops::BuiltinOpRegistry();
  std::string previous;
  for (const InputRecipe& r : BuiltinInputRecipes()) {
    EXPECT_LT(previous, r.op) << "table not sorted at " << r.op;
    previous = r.op;
    EXPECT_EQ(FindInputRecipe(r.op), &r);
    std::shared_ptr<const OpDef> def = registry.Find(r.op);
    ASSERT_NE(def, nullptr) << r.op << " has a recipe but is not registered";
    absl::StatusOr<OpInputs> in = MakeOpInputs(def, r, 1);
    EXPECT_TRUE(in.ok()) << in.status();
  }
  // Every op without an entry fits the default recipe.
  for (const std::string& op : registry.OpNames()) {
    if (FindInputRecipe(op) != nullptr) continue;
    std::shared_ptr<const OpDef> def = registry.Find(op);
    absl::StatusOr<OpInputs> in = MakeOpInputs(def, DefaultInputRecipe(*def), 1);
    EXPECT_TRUE(in.ok()) << op << ": " << in.status();
  }
}

TEST(InputRecipes, DomainsAndErrors) {
  std::shared_ptr<const OpDef> embedding = ops::BuiltinOpRegistry().Find("embedding");
  absl::StatusOr<OpInputs> in = MakeOpInputs(embedding, *FindInputRecipe("embedding"), 3);
  ASSERT_TRUE(in.ok()) << in.status();
  const LocalTensor& idx = in->inputs[1];
  for (int64_t i = 0; i < idx.elem_cnt(); ++i) {
    EXPECT_GE(idx.GetDouble(i), 0);
    EXPECT_LT(idx.GetDouble(i), 7);
  }
  // Same seed, same values; another seed, other values.
  absl::StatusOr<OpInputs> again = MakeOpInputs(embedding, *FindInputRecipe("embedding"), 3);
  absl::StatusOr<OpInputs> other = MakeOpInputs(embedding, *FindInputRecipe("embedding"), 4);
  EXPECT_EQ(again->inputs[0].ToString(), in->inputs[0].ToString());
  EXPECT_NE(other->inputs[0].ToString(), in->inputs[0].ToString());
  EXPECT_THAT(MakeOpInputs(embedding, {"embedding", {"f32[7,3]", "i64[3]@idy7"}, {}}, 1)
                  .status()
                  .message(),
              HasSubstr("input recipe of embedding: 'i64[3]@idy7': unknown domain"));
  EXPECT_THAT(MakeOpInputs(embedding, {"embedding", {"f32[7,3]", "f32[3,2]"}, {}}, 1)
                  .status()
                  .message(),
              HasSubstr("embedding: "));
}

// A handful of families on [2] and [2,2]: the fast subset of the catalog.
TEST(Verify, FastSubsetOfTheCatalogPasses) {
  for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{2}, std::vector<int64_t>{2, 2}}) {
    VerifyOptions o;
    o.ops = {"relu", "matmul", "reduce_sum", "softmax", "embedding", "add_n", "transpose"};
    o.mesh = mesh;
    absl::StatusOr<VerifyReport> r = RunVerify(ops::BuiltinOpRegistry(), o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->ok()) << VerifyReportToText(*r);
    for (const OpVerification& v : r->ops) EXPECT_GT(v.checked, 1) << v.op;
  }
}

}  // namespace
}  // namespace oneflow_sbp::kernels
