// The `planned` cost policy: costs from the boxing planner and the improved
// selection rules (SPEC.md §9, "improved").
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/infer_cache.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

// Through the test engine, which knows the `planned` policy.
absl::StatusOr<InferResult> InferPlanned(InferSpec spec, std::shared_ptr<const OpCall>* call) {
  spec.cost = "planned";
  return Infer(spec, call);
}

std::string Planned(const InferSpec& spec) {
  std::shared_ptr<const OpCall> call;
  absl::StatusOr<InferResult> r = InferPlanned(spec, &call);
  if (!r.ok()) return absl::StrCat("error: ", r.status().message());
  return SignatureToString(*call, r->signature);
}

TEST(PlannedPolicy, CostFirstThenFewerBoxedInputsThenListOrder) {
  // Both split candidates box one input with one all-to-all; P would need a
  // reduction later (the default penalty charges it), B gathers both.
  EXPECT_EQ(Planned({"add_n", "cpu:0-1", {"f32[4,4]:S(0)", "f32[4,4]:S(1)"}}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0)");
  // An all-matching candidate costs nothing.
  EXPECT_EQ(Planned({"matmul", "cpu:0-3 [2,2]", {"f32[64,32]:(S(0),B)", "f32[32,48]:(B,S(1))"}}),
            "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))");
}

TEST(PlannedPolicy, TurningBIntoPBesideAPInputIsFree) {
  // add(B, P): the output is P whatever happens to the B input, so its
  // local B -> P conversion adds no reduction and costs nothing; charging
  // one made planned reduce-scatter the P input instead.
  EXPECT_EQ(Planned({"broadcast_add", "cpu:0-1", {"f32[64,32]:B", "f32[64,32]:P"}}),
            "x_0:P y_0:P -> z_0:P");
  EXPECT_EQ(Planned({"add_n", "cpu:0-1", {"f32[64,32]:B", "f32[64,32]:P"}}),
            "in_0:P in_1:P -> out_0:P");
  // Per mesh axis: P on axis 0 only, the B input joins it there.
  EXPECT_EQ(Planned({"broadcast_add", "cpu:0-3 [2,2]",
                     {"f32[64,32]:(B,S(0))", "f32[64,32]:(P,S(0))"}}),
            "x_0:(P,S(0)) y_0:(P,S(0)) -> z_0:(P,S(0))");
  // Without a P input, making one is still charged: B stays B.
  EXPECT_EQ(Planned({"add_n", "cpu:0-1", {"f32[64,32]:B", "f32[64,32]:B"}}),
            "in_0:B in_1:B -> out_0:B");
}

TEST(PlannedPolicy, DiffersFromOneFlowWhereOrderValuesMislead) {
  // 1-D, N = 2: both S(0) and all-B keep one input (order -10). OneFlow
  // prices the local slice of in_1 at INT32_MAX and the gather of in_0 at
  // T = 4 MiB, so it gathers; planned slices in_1 for free and keeps in_0.
  const InferSpec spec{"add_n", "cpu:0-1", {"f32[1024,1024]:S(0)", "f32[1024,1024]:B"}};
  EXPECT_EQ(InferToString(spec), "in_0:B in_1:B -> out_0:B");
  EXPECT_EQ(Planned(spec), "in_0:S(0) in_1:S(0) -> out_0:S(0)");
}

TEST(PlannedPolicy, OutputsAreShapeFilteredAndConstraintsApplyToOutputs) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("shrink").Input("x").Output("y")
                                .SetShapeFn([](ShapeContext& ctx) {
                                  ctx.set_output("y", 0, TensorDesc{Shape{2}, ctx.input("x").dtype});
                                  return absl::OkStatus();
                                })
                                .SetGetSbpFn([](SbpContext& ctx) {
                                  ctx.NewBuilder().Split(ctx.inputs(), 0).Split(ctx.outputs(), 0).Build();
                                  return absl::OkStatus();
                                }))
                  .ok());
  InferSpec spec{"shrink", "cpu:0-3", {"f32[8]:S(0)"}};
  spec.registry = &registry;
  // OneFlow never checks outputs: y:S(0) with 2 < 4 rows stays.
  EXPECT_EQ(InferToString(spec), "x_0:S(0) -> y_0:S(0)");
  EXPECT_EQ(Planned(spec), "x_0:B -> y_0:B");
  // N-D: OneFlow's inference constrains inputs only, so the engine refuses an
  // output constraint under it (rather than dropping it); planned honours it.
  InferSpec constrained{"relu", "cpu:0-3 [2,2]", {"f32[8,8]:(S(0),B)"}};
  constrained.constraints = {{"y_0", "(B,B)"}};
  EXPECT_THAT(InferToString(constrained),
              ::testing::HasSubstr("constraint on output y_0 (B, B) cannot be applied"));
  EXPECT_EQ(Planned(constrained), "x_0:(B,B) -> y_0:(B,B)");
}

TEST(PlannedPolicy, NeedsAnEngineAndExplains) {
  std::shared_ptr<const OpCall> call;
  InferRequest req;
  req.op = *MakeCall("relu", 1);
  req.placement = *Placement::Parse("cpu:0-1");
  req.inputs = {InferInput(*TensorDesc::Parse("f32[8]"), *NdSbp::Parse("S(0)"))};
  req.cost.policy = PolicyName::Planned();
  // Only an Engine knows the planned policy's model (its planner).
  absl::StatusOr<InferResult> r = InferSignature(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cost policy planned needs an Engine"));
  InferSpec spec{"relu", "cpu:0-5 [2,3]", {"f32[2,12]:(P,P)"}};
  spec.explain = true;
  r = InferPlanned(spec, &call);
  ASSERT_TRUE(r.ok()) << r.status();
  int chosen = 0;
  int filtered = 0;
  for (const CandidateRecord& c : r->candidates) {
    chosen += c.status == CandidateStatus::kChosen ? 1 : 0;
    filtered += c.status == CandidateStatus::kFilteredByShape ? 1 : 0;
    if (c.status == CandidateStatus::kChosen) {
      EXPECT_GT(c.copy_cost.ValueOrFltMax(), 0);
    }
  }
  EXPECT_EQ(chosen, 1);
  // S(0) over the 3-way axis 1 on dim 0 (extent 2), after each of relu's
  // five axis-0 entries: S(0), S(1), B, and planned's P(max) and P(min).
  EXPECT_EQ(filtered, 5);
}

TEST(PlannedPolicy, CacheKeysSeparatePolicies) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call = MakeCall("add_n", 2);
  ASSERT_TRUE(call.ok());
  InferRequest a;
  a.op = *call;
  a.placement = *Placement::Parse("cpu:0-1");
  a.inputs = {InferInput(*TensorDesc::Parse("f32[8,8]"), *NdSbp::Parse("S(0)")),
              InferInput(*TensorDesc::Parse("f32[8,8]"), *NdSbp::Parse("B"))};
  InferRequest b = a;
  b.cost.policy = PolicyName::Planned();
  EXPECT_FALSE(InferKeyEquals(a, b));
  engine::Engine* engine = *EngineFor();
  absl::StatusOr<std::shared_ptr<const InferResult>> ra = engine->Infer(a);
  absl::StatusOr<std::shared_ptr<const InferResult>> rb = engine->Infer(b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_NE(SignatureToString(*a.op, (*ra)->signature), SignatureToString(*b.op, (*rb)->signature));
}

}  // namespace
}  // namespace oneflow_sbp::testing
