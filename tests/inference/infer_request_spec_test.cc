// InferRequestSpec and BuildInferRequest (oneflow_sbp/inference/
// infer_request_spec.h): the header's example, named inputs, an alias's
// attribute names, flags' values replacing a message's, and a spec with
// several faults naming the same one every time.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/infer_request_spec.h"
#include "ops/builtin_ops.h"
#include "tests/support/status_matchers.h"

namespace oneflow_sbp {
namespace {

using ::oneflow_sbp::matchers::StatusIs;
using ::testing::HasSubstr;

const OpRegistry& Registry() { return ops::BuiltinOpRegistry(); }

InferRequestSpec Matmul() {
  InferRequestSpec spec;
  spec.op = "matmul";
  spec.placement = *Placement::Parse("cpu:0-1");
  spec.inputs.push_back({std::nullopt, ParseInferInput("f32[8,4]:S(0)")});
  spec.inputs.push_back({std::nullopt, ParseInferInput("f32[4,6]:B")});
  return spec;
}

TEST(InferRequestSpec, TheHeadersExample) {
  absl::StatusOr<InferRequest> req = BuildInferRequest(Matmul(), Registry());
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->op->type_name(), "matmul");
  ASSERT_EQ(req->inputs.size(), 2u);
  EXPECT_EQ(req->inputs[1].desc().ToString(), "f32[4,6]");
  EXPECT_EQ(req->placement.ToString(), "cpu:0-1");
  EXPECT_TRUE(req->constraints.empty());
  EXPECT_EQ(req->cost.policy.str(), "oneflow");
}

TEST(InferRequestSpec, NamedInputsAliasesAndReplacedParts) {
  InferRequestSpec spec = Matmul();
  spec.inputs = {{"b", ParseInferInput("f32[4,6]:B")}, {"a", ParseInferInput("f32[8,4]:S(0)")}};
  spec.SetAttr("transpose_b", AttrValue(true));
  spec.SetAttr("transpose_b", AttrValue(false));  // replaced, as a flag replaces a file's
  spec.SetConstraint("out_0", NdSbp::Parse("S(0)"));
  spec.cost_policy = "planned";
  absl::StatusOr<InferRequest> req = BuildInferRequest(spec, Registry());
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->inputs[0].desc().ToString(), "f32[8,4]");  // blob order, not given order
  EXPECT_FALSE(req->op->attrs().Get<bool>("transpose_b").value());
  ASSERT_EQ(req->constraints.size(), 3u);
  EXPECT_EQ(req->constraints[2]->ToString(), "(S(0))");
  EXPECT_EQ(req->cost.policy.str(), "planned");
  // An alias with its own attribute name.
  InferRequestSpec unsqueeze;
  unsqueeze.op = "unsqueeze";
  unsqueeze.placement = *Placement::Parse("cpu:0-1");
  unsqueeze.inputs.push_back({std::nullopt, ParseInferInput("f32[8]:S(0)")});
  unsqueeze.SetAttr("dim", AttrValue(int64_t{0}));
  req = BuildInferRequest(unsqueeze, Registry());
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->op->type_name(), "expand_dims");
}

TEST(InferRequestSpec, TheFirstFaultInAFixedOrderIsNamed) {
  InferRequestSpec spec = Matmul();
  spec.inputs[1].value = ParseInferInput("f32[4,6]");
  spec.SetConstraint("nope", NdSbp::Parse("S(0)"));
  spec.partial_penalty = absl::InvalidArgumentError("partial_penalty_policy 9");
  // The input comes before the constraint and the penalty.
  EXPECT_THAT(BuildInferRequest(spec, Registry()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("matmul: input #1: malformed input 'f32[4,6]'")));
  spec.inputs[1].value = ParseInferInput("f32[4,6]:B");
  EXPECT_THAT(BuildInferRequest(spec, Registry()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("matmul: constraint on unknown blob 'nope'; blobs are a_0, b_0, "
                                 "out_0")));
  spec.constraints.clear();
  EXPECT_THAT(BuildInferRequest(spec, Registry()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("matmul: partial_penalty_policy 9")));
  spec.placement.reset();
  EXPECT_THAT(BuildInferRequest(spec, Registry()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("matmul: request has no placement")));
  spec.op = "nope";
  EXPECT_THAT(BuildInferRequest(spec, Registry()), StatusIs(absl::StatusCode::kNotFound));
  spec.op.clear();
  EXPECT_THAT(BuildInferRequest(spec, Registry()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request names no op")));
  // Inputs all named or none.
  spec = Matmul();
  spec.inputs[0].bn = "a";
  EXPECT_THAT(BuildInferRequest(spec, Registry()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("matmul: name every input (bn=...) or none; 1 of 2 are named")));
}

}  // namespace
}  // namespace oneflow_sbp
