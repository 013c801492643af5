// Ops defined outside the library: static registration into the global
// registry (OFS_REGISTER_OP), a private registry, the explicit
// broadcast-only fallback, mutable inputs, and rule bugs reported as
// errors instead of aborts.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/infer_cache.h"
#include "oneflow_sbp/op_registry.h"
#include "oneflow_sbp/sbp_context.h"
#include "oneflow_sbp/signature_inference.h"
#include "tests/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

// y[m, n] = x[m, n] * scale[m]: rows split together; columns split x only;
// linear in x.
absl::Status RowScaleShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  const TensorDesc& scale = ctx.input("scale");
  if (x.shape.rank() != 2 || scale.shape.rank() != 1 || scale.shape.dim(0) != x.shape.dim(0)) {
    return absl::InvalidArgumentError(absl::StrCat("x_0 ", x.ToString(), " and scale_0 ",
                                                   scale.ToString(), " do not fit"));
  }
  ctx.set_output("y", 0, x);
  return absl::OkStatus();
}

absl::Status RowScaleGetSbp(SbpContext& ctx) {
  ctx.NewBuilder().Split(OpArg{"x", 0}, 0).Split(OpArg{"scale", 0}, 0)
      .Split(ctx.outputs(), 0).Build();
  ctx.NewBuilder().Split(OpArg{"x", 0}, 1).Broadcast(OpArg{"scale", 0})
      .Split(ctx.outputs(), 1).Build();
  ctx.NewBuilder().PartialSum(OpArg{"x", 0}).Broadcast(OpArg{"scale", 0})
      .PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

OFS_REGISTER_OP(OpDefBuilder("test_row_scale")
                    .Input("x")
                    .Input("scale")
                    .Output("y")
                    .SetShapeFn(RowScaleShape)
                    .SetGetSbpFn(RowScaleGetSbp));

TEST(CustomOp, StaticallyRegisteredOpInfersLikeABuiltin) {
  ASSERT_NE(Registry().Find("test_row_scale"), nullptr);
  EXPECT_EQ(CandidatesToString("test_row_scale", {"f32[8,4]", "f32[8]"}),
            "x_0:S(0) scale_0:S(0) -> y_0:S(0) | x_0:S(1) scale_0:B -> y_0:S(1) | "
            "x_0:P scale_0:B -> y_0:P");
  EXPECT_EQ(InferToString({"test_row_scale", "cpu:0-3 [2,2]",
                           {"f32[8,4]:(S(0),P)", "f32[8]:(S(0),B)"}}),
            "x_0:(S(0),P) scale_0:(S(0),B) -> y_0:(S(0),P)");
  EXPECT_THAT(InferToString({"test_row_scale", "cpu:0-1", {"f32[8,4]:B", "f32[5]:B"}}),
              HasSubstr("test_row_scale: x_0 f32[8,4] and scale_0 f32[5] do not fit"));
}

TEST(CustomOp, PrivateRegistryAndDuplicateNames) {
  OpRegistry registry;
  ASSERT_TRUE(registry.Register(OpDefBuilder("private_relu")
                                    .Input("x")
                                    .Output("y")
                                    .SetShapeFn([](ShapeContext& ctx) {
                                      ctx.set_output("y", 0, ctx.input("x"));
                                      return absl::OkStatus();
                                    })
                                    .SetGetSbpFn(SplitForEachAxis))
                  .ok());
  EXPECT_EQ(registry.Register(OpDefBuilder("private_relu")
                                  .Input("x")
                                  .Output("y")
                                  .SetShapeFn([](ShapeContext&) { return absl::OkStatus(); })
                                  .SetGetSbpFn(SplitForEachAxis))
                .code(),
            absl::StatusCode::kAlreadyExists);
  InferSpec spec{"private_relu", "cpu:0-1", {"f32[6,6]:S(1)"}};
  spec.registry = &registry;
  EXPECT_EQ(InferToString(spec), "x_0:S(1) -> y_0:S(1)");
  EXPECT_EQ(Registry().Find("private_relu"), nullptr);
}

TEST(CustomOp, MissingRuleIsAnErrorUnlessTheFallbackIsExplicit) {
  auto shape = [](ShapeContext& ctx) {
    ctx.set_output("y", 0, ctx.input("x"));
    return absl::OkStatus();
  };
  absl::StatusOr<OpDef> no_rule = OpDefBuilder("opaque").Input("x").Output("y").SetShapeFn(shape).Build();
  ASSERT_FALSE(no_rule.ok());
  EXPECT_THAT(std::string(no_rule.status().message()),
              HasSubstr("opaque: has no GetSbp rule; give one with SetGetSbpFn or opt in"));

  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("opaque").Input("x").Output("y").SetShapeFn(shape)
                                .BroadcastOnlyFallback())
                  .ok());
  InferSpec spec{"opaque", "cpu:0-3 [2,2]", {"f32[8,8]:(S(0),S(1))"}, {}, {}, true, &registry};
  absl::StatusOr<InferResult> r = Infer(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->used_broadcast_fallback);
  ASSERT_EQ(r->candidates.size(), 1u);  // only (B,B) -> (B,B)
  EXPECT_EQ(r->signature[0].ToString(), "(B, B)");

  // The engine's cache counts fallback inferences.
  Engine::Options options;
  options.registry = Engine::Options::Borrow(registry);
  std::unique_ptr<Engine> engine = *Engine::Create(std::move(options));
  std::shared_ptr<const OpCall> call;
  ASSERT_TRUE(Infer(spec, &call).ok());
  InferRequest req;
  req.op = call;
  req.placement = *Placement::Parse("cpu:0-3 [2,2]");
  req.inputs = {InferInput(*TensorDesc::Parse("f32[8,8]"), *NdSbp::Parse("(S(0),S(1))"))};
  ASSERT_TRUE(engine->Infer(req).ok());
  ASSERT_TRUE(engine->Infer(req).ok());
  EXPECT_EQ(engine->infer_cache_stats().fallback_inferences, 1u);
}

TEST(CustomOp, RuleBugsAreErrorsNotAborts) {
  auto shape = [](ShapeContext& ctx) {
    ctx.set_output("y", 0, ctx.input("x"));
    return absl::OkStatus();
  };
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("forgets_output").Input("x").Output("y").SetShapeFn(shape)
                                .SetGetSbpFn([](SbpContext& ctx) {
                                  ctx.NewBuilder().Split(ctx.inputs(), 0).Build();
                                  return absl::OkStatus();
                                }))
                  .ok());
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("names_ghost").Input("x").Output("y").SetShapeFn(shape)
                                .SetGetSbpFn([](SbpContext& ctx) {
                                  ctx.NewBuilder().Split(OpArg{"ghost", 0}, 0).Build();
                                  return absl::OkStatus();
                                }))
                  .ok());
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("splits_too_far").Input("x").Output("y").SetShapeFn(shape)
                                .SetGetSbpFn([](SbpContext& ctx) {
                                  ctx.NewBuilder().Split(ctx.inputs(), 3).Split(ctx.outputs(), 0).Build();
                                  return absl::OkStatus();
                                }))
                  .ok());
  InferSpec spec{"forgets_output", "cpu:0-1", {"f32[4,4]:S(0)"}};
  spec.registry = &registry;
  EXPECT_THAT(InferToString(spec), HasSubstr("forgets_output: sbp rule candidate #0 "
                                             "(x_0:S(0) -> y_0:unset) has NOT set sbp for y_0"));
  spec.op = "names_ghost";
  EXPECT_THAT(InferToString(spec),
              HasSubstr("names_ghost: sbp rule: rule names blob ghost_0, which this call does not have"));
  spec.op = "splits_too_far";
  EXPECT_THAT(InferToString(spec), HasSubstr("splits x_0 f32[4,4] on dim 3"));
}

TEST(CustomOp, MutableInputsAreNeverBoxed) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("inplace_relu").MutableInput("ref").Output("y")
                                .SetShapeFn([](ShapeContext& ctx) {
                                  ctx.set_output("y", 0, ctx.input("ref"));
                                  return absl::OkStatus();
                                })
                                .SetGetSbpFn(SplitForEachAxis))
                  .ok());
  InferSpec spec{"inplace_relu", "cpu:0-3 [2,2]", {"f32[8,8]:(S(1),S(0))"}};
  spec.registry = &registry;
  EXPECT_EQ(InferToString(spec), "ref_0:(S(1),S(0)) -> y_0:(S(1),S(0))");
  // Partial sums have no candidate here, and the input may not be boxed.
  spec.inputs = {"f32[8,8]:(P,P)"};
  EXPECT_THAT(InferToString(spec), HasSubstr("op: `inplace_relu` can't find available sbp signature"));
}

}  // namespace
}  // namespace oneflow_sbp::testing
