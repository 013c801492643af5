// Ops defined outside the library: static registration into the global
// registry (OFS_REGISTER_OP), a private registry, the explicit
// broadcast-only fallback, mutable inputs, and rule bugs reported as
// errors instead of aborts.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/infer_cache.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

// Issue 23: an alias is another name for a registered op.
OpDefBuilder PrivateCopy(const std::string& name) {
  return OpDefBuilder(name).Input("x").Output("y")
      .SetShapeFn([](ShapeContext& ctx) {
        ctx.set_output("y", 0, ctx.input("x"));
        return absl::OkStatus();
      })
      .SetGetSbpFn(SplitForEachAxis);
}

OpDefBuilder PrivateCopyWith(const std::string& name, GetSbpFn rule) {
  return PrivateCopy(name).SetGetSbpFn(std::move(rule));
}

// A rule marks where its own candidates start once; a second mark is a
// rule bug (kInternal naming the op), not a silently moved boundary.
TEST(CustomOp, MarkingOursTwiceIsARuleBug) {
  OpRegistry registry;
  ASSERT_TRUE(registry.Register(PrivateCopyWith("twice", [](SbpContext& ctx) {
                ctx.OursFollow();
                ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
                ctx.OursFollow();
                return absl::OkStatus();
              })).ok());
  InferSpec spec{"twice", "cpu:0-1", {"f32[6,6]:S(1)"}};
  spec.registry = &registry;
  EXPECT_THAT(InferToString(spec),
              HasSubstr("twice: the rule marks where its own candidates start twice"));
}

TEST(CustomOp, AliasResolvesToTheCanonicalOp) {
  OpRegistry registry;
  ASSERT_TRUE(registry.Register(PrivateCopy("private_copy")).ok());
  ASSERT_TRUE(registry.RegisterAlias("pcopy", "private_copy").ok());
  ASSERT_TRUE(registry.RegisterAlias("my_copy", "private_copy").ok());
  std::shared_ptr<const OpDef> def = registry.Find("pcopy");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def, registry.Find("private_copy"));  // the same OpDef
  EXPECT_EQ(def->type_name(), "private_copy");
  absl::StatusOr<std::shared_ptr<const OpDef>> got = registry.Get("pcopy");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, def);
  EXPECT_EQ(registry.OpNames(), std::vector<std::string>{"private_copy"});
  EXPECT_EQ(registry.AliasesOf("private_copy"), (std::vector<std::string>{"my_copy", "pcopy"}));
  EXPECT_TRUE(registry.AliasesOf("pcopy").empty());
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(registry.Aliases(),
            (Pairs{{"my_copy", "private_copy"}, {"pcopy", "private_copy"}}));
  // An inference through the alias is the canonical op's.
  InferSpec spec{"pcopy", "cpu:0-1", {"f32[6,6]:S(1)"}};
  spec.registry = &registry;
  EXPECT_EQ(InferToString(spec), "x_0:S(1) -> y_0:S(1)");
  // Unknown names: kNotFound, aliases suggested.
  absl::StatusOr<std::shared_ptr<const OpDef>> bad = registry.Get("pcop");
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown op 'pcop' (did you mean pcopy?)"));
  EXPECT_EQ(registry.Find("nope"), nullptr);
}

TEST(CustomOp, BadAliasesAreErrorsNamingBothNames) {
  OpRegistry registry;
  ASSERT_TRUE(registry.Register(PrivateCopy("private_copy")).ok());
  ASSERT_TRUE(registry.Register(PrivateCopy("other_copy")).ok());
  ASSERT_TRUE(registry.RegisterAlias("pcopy", "private_copy").ok());
  absl::Status s = registry.RegisterAlias("alias", "no_such_op");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(s.message(), HasSubstr("alias 'alias' of op 'no_such_op': no op 'no_such_op'"));
  s = registry.RegisterAlias("other_copy", "private_copy");  // an op's name
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(s.message(), HasSubstr("'other_copy' is already a registered op"));
  s = registry.RegisterAlias("pcopy", "other_copy");  // re-pointing
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(s.message(), HasSubstr("'pcopy' is already an alias of 'private_copy'"));
  s = registry.RegisterAlias("ppcopy", "pcopy");  // a chain
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s.message(), HasSubstr("'pcopy' is itself an alias of 'private_copy'"));
  EXPECT_THAT(registry.RegisterAlias("", "private_copy"),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(registry.RegisterAlias("private_copy", "private_copy"),
            StatusIs(absl::StatusCode::kInvalidArgument));
  // An op may not take an alias's name either.
  s = registry.Register(PrivateCopy("pcopy"));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(s.message(), HasSubstr("op 'pcopy' is already registered as an alias of "
                                     "'private_copy'"));
  EXPECT_EQ(registry.Find("pcopy")->type_name(), "private_copy");
}

// An op with a required list attribute and a defaulted one, for aliases
// that rename attributes.
OpDefBuilder PrivateSum(const std::string& name) {
  return PrivateCopy(name)
      .RequiredAttr("axis", AttrType::kInts)
      .Attr("keepdims", AttrValue(false));
}

AttrMap Attrs(std::vector<std::pair<std::string, AttrValue>> entries) {
  AttrMap m;
  for (auto& [name, value] : entries) m.Set(name, std::move(value));
  return m;
}

std::string ResolveError(const OpRegistry& registry, const std::string& name,
                         const AttrMap& attrs) {
  absl::StatusOr<ResolvedCall> r = registry.ResolveCall(name, attrs);
  if (r.ok()) return "OK " + r->def->type_name() + " " + r->attrs.ToString();
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument)) << r.status();
  return std::string(r.status().message());
}

// An alias may name attributes as another framework does; ResolveCall
// turns them into the op's, and checks them in the alias's terms.
TEST(CustomOp, AliasRenamesAttributes) {
  OpRegistry registry;
  ASSERT_TRUE(registry.Register(PrivateSum("psum")).ok());
  ASSERT_TRUE(registry
                  .RegisterAlias("tsum", "psum",
                                 {{"dim", "axis", /*non_empty=*/true}, {"keepdim", "keepdims"}})
                  .ok());
  ASSERT_TRUE(registry.RegisterAlias("same_sum", "psum").ok());
  const AttrValue dims(std::vector<int64_t>{1});
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"dim", dims}, {"keepdim", AttrValue(true)}})),
            "OK psum axis=1 keepdims=true");
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"dim", dims}})), "OK psum axis=1");
  // The op and a 1:1 alias take attributes as they are (OpCall::Make checks them).
  EXPECT_EQ(ResolveError(registry, "psum", Attrs({{"dim", dims}})), "OK psum dim=1");
  EXPECT_EQ(ResolveError(registry, "same_sum", Attrs({{"axis", dims}})), "OK psum axis=1");
  EXPECT_EQ(ResolveError(registry, "same_sum", Attrs({{"dim", dims}})),
            "same_sum (alias of psum): unknown attribute 'dim'; known: axis, keepdims");
  // The op's name for a renamed attribute names both.
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"axis", dims}})),
            "tsum (alias of psum): unknown attribute 'axis' (psum's name; tsum calls it 'dim'); "
            "known: dim, keepdim");
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"dim", dims}, {"keepdims", AttrValue(true)}})),
            "tsum (alias of psum): unknown attribute 'keepdims' (psum's name; tsum calls it "
            "'keepdim'); known: dim, keepdim");
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"dims", dims}})),
            "tsum (alias of psum): unknown attribute 'dims'; known: dim, keepdim");
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({})),
            "tsum (alias of psum): required attribute 'dim' (ints; psum's 'axis') is missing");
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"dim", AttrValue(1)}})),
            "tsum (alias of psum): attribute 'dim' is ints, got int '1'");
  EXPECT_EQ(ResolveError(registry, "tsum", Attrs({{"dim", AttrValue(std::vector<int64_t>{})}})),
            "tsum (alias of psum): attribute 'dim' is empty; list the axes (tsum with no dim "
            "reduces every axis, psum with axis=[] none)");
  EXPECT_EQ(registry.OpAttrName("tsum", "dim"), "axis");
  EXPECT_EQ(registry.OpAttrName("tsum", "axis"), "axis");
  EXPECT_EQ(registry.OpAttrName("psum", "dim"), "dim");
  ASSERT_EQ(registry.RenamedAttrsOf("tsum").size(), 2u);
  EXPECT_TRUE(registry.RenamedAttrsOf("same_sum").empty());
  EXPECT_THAT(registry.ResolveCall("tsumm", AttrMap()), StatusIs(absl::StatusCode::kNotFound));
  // An inference through the alias is the op's with the renamed attributes.
  InferSpec spec{"tsum", "cpu:0-1", {"f32[6,6]:S(1)"}, {"dim=1", "keepdim=true"}};
  spec.registry = &registry;
  EXPECT_EQ(InferToString(spec), "x_0:S(1) -> y_0:S(1)");
  spec.attrs = {"axis=1"};
  EXPECT_THAT(InferToString(spec), HasSubstr("unknown attribute 'axis' (psum's name"));
}

TEST(CustomOp, BadAttributeRenamesNameTheAliasTheOpAndTheAttribute) {
  OpRegistry registry;
  ASSERT_TRUE(registry.Register(PrivateSum("psum")).ok());
  auto error = [&](const std::string& alias, std::vector<AliasAttr> renamed) {
    absl::Status s = registry.RegisterAlias(alias, "psum", std::move(renamed));
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
    return std::string(s.message());
  };
  EXPECT_EQ(error("a", {{"dim", "axes"}}),
            "alias 'a' of op 'psum': attribute 'dim' for 'axes': 'psum' has no attribute 'axes'");
  EXPECT_EQ(error("b", {{"axis", "axis"}}),
            "alias 'b' of op 'psum': attribute 'axis' for 'axis': a renamed attribute needs a "
            "name other than the op's");
  EXPECT_EQ(error("c", {{"dim", "axis"}, {"d", "axis"}}),
            "alias 'c' of op 'psum': attribute 'd' for 'axis': renamed twice (also 'dim' for "
            "'axis')");
  EXPECT_EQ(error("d", {{"keepdims", "axis"}}),
            "alias 'd' of op 'psum': attribute 'keepdims' for 'axis': 'psum' already has an "
            "attribute 'keepdims'");
  EXPECT_EQ(error("e", {{"keep", "keepdims", /*non_empty=*/true}}),
            "alias 'e' of op 'psum': attribute 'keep' for 'keepdims': non_empty needs a list "
            "attribute; 'keepdims' is bool");
  // Swapping two names is fine: each name means one thing.
  EXPECT_TRUE(registry.RegisterAlias("swapped", "psum", {{"keepdims", "axis"}, {"axis", "keepdims"}})
                  .ok());
  EXPECT_EQ(ResolveError(registry, "swapped",
                         Attrs({{"keepdims", AttrValue(std::vector<int64_t>{0})},
                                {"axis", AttrValue(true)}})),
            "OK psum axis=0 keepdims=true");
  EXPECT_TRUE(registry.Aliases().size() == 1u);
}

TEST(CustomOp, BuiltinAliasesResolveToTheirOps) {
  // concat is cat (issue 23); the built-in aliases resolve in the shared
  // registry and never appear in OpNames().
  std::shared_ptr<const OpDef> concat = Registry().Find("concat");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->type_name(), "cat");
  for (const auto& [alias, canonical] : Registry().Aliases()) {
    ASSERT_NE(Registry().Find(alias), nullptr) << alias;
    EXPECT_EQ(Registry().Find(alias)->type_name(), canonical);
    const std::vector<std::string> names = Registry().OpNames();
    EXPECT_FALSE(std::binary_search(names.begin(), names.end(), alias)) << alias;
  }
  EXPECT_EQ(CandidatesToString("concat", {"f32[4,6]", "f32[4,2]"}, {"axis=1"}),
            CandidatesToString("cat", {"f32[4,6]", "f32[4,2]"}, {"axis=1"}));
}

// Each built-in alias gives exactly its op's answer with the attributes
// renamed: the same 1-D candidate list (golden), the same N-D choice, and
// through Engine::MakeCall the same call. Every alias is listed once.
TEST(CustomOp, BuiltinAliasesInferAsTheirOps) {
  struct Case {
    std::string alias;
    std::vector<std::string> alias_attrs;
    std::string op;
    std::vector<std::string> op_attrs;
    std::vector<std::string> inputs;  // 1-D shapes; the N-D run splits dim 0 on [2,2]
    std::string candidates;           // golden, on 2 ranks
  };
  const std::vector<Case> cases = {
      {"add", {}, "broadcast_add", {}, {"f32[4,6]", "f32[6]"},
       "x_0:S(0) y_0:B -> z_0:S(0) | x_0:S(1) y_0:S(0) -> z_0:S(1) | x_0:P y_0:P -> z_0:P"},
      {"concat", {"axis=1"}, "cat", {"axis=1"}, {"f32[4,6]", "f32[4,2]"},
       "in_0:S(0) in_1:S(0) -> out_0:S(0) | in_0:P in_1:P -> out_0:P"},
      {"mean", {"dim=1", "keepdim=true"}, "reduce_mean", {"axis=1", "keepdims=true"},
       {"f32[4,6]"},
       "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(1) -> output_tensor_0:P | input_tensor_0:P -> output_tensor_0:P"},
      {"mul", {}, "broadcast_mul", {}, {"f32[4,6]", "f32[4,6]"},
       "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1) | x_0:B y_0:P -> z_0:P | x_0:P y_0:B -> z_0:P"},
      {"multiply", {}, "broadcast_mul", {}, {"f32[4,6]", "f32[4,6]"},
       "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1) | x_0:B y_0:P -> z_0:P | x_0:P y_0:B -> z_0:P"},
      {"neg", {}, "negative", {}, {"f32[4,6]"},
       "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1) | x_0:P -> y_0:P"},
      {"permute", {"dims=1,0,2"}, "transpose", {"perm=1,0,2"}, {"f32[4,6,8]"},
       "input_0:S(1) -> output_0:S(0) | input_0:S(0) -> output_0:S(1) | input_0:S(2) -> output_0:S(2) | input_0:P -> output_0:P"},
      {"sigmoid_v2", {}, "sigmoid", {}, {"f32[4,6]"},
       "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"sub", {}, "broadcast_sub", {}, {"f32[4,1]", "f32[4,6]"},
       "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(1) -> z_0:S(1) | x_0:P y_0:P -> z_0:P"},
      {"subtract", {}, "broadcast_sub", {}, {"f32[4,1]", "f32[4,6]"},
       "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(1) -> z_0:S(1) | x_0:P y_0:P -> z_0:P"},
      {"unsqueeze", {"dim=-1"}, "expand_dims", {"axis=-1"}, {"f32[4,6]"},
       "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"view", {"shape=4,3,2"}, "reshape", {"shape=4,3,2"}, {"f32[4,6]"},
       "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P"},
  };
  std::vector<std::string> listed;
  for (const Case& c : cases) {
    listed.push_back(c.alias);
    EXPECT_EQ(Registry().Find(c.alias)->type_name(), c.op) << c.alias;
    const std::string got = CandidatesToString(c.alias, c.inputs, c.alias_attrs);
    EXPECT_EQ(got, c.candidates) << c.alias;
    EXPECT_EQ(got, CandidatesToString(c.op, c.inputs, c.op_attrs)) << c.alias;
    InferSpec nd{c.alias, "cpu:0-3 [2,2]", {}, c.alias_attrs};
    for (const std::string& in : c.inputs) nd.inputs.push_back(in + ":(S(0),B)");
    const std::string answer = InferToString(nd);
    EXPECT_THAT(answer, Not(HasSubstr("error"))) << c.alias;
    nd.op = c.op;
    nd.attrs = c.op_attrs;
    EXPECT_EQ(answer, InferToString(nd)) << c.alias;
  }
  std::vector<std::string> registered;
  for (const auto& [alias, canonical] : Registry().Aliases()) registered.push_back(alias);
  EXPECT_EQ(listed, registered);
  // Engine::MakeCall (the API, the interpreter and Python call through it)
  // makes the op's call.
  engine::Engine& engine = **EngineFor();
  absl::StatusOr<std::shared_ptr<const OpCall>> permute =
      engine.MakeCall("permute", 1, Attrs({{"dims", AttrValue(std::vector<int64_t>{1, 0})}}));
  absl::StatusOr<std::shared_ptr<const OpCall>> transpose =
      engine.MakeCall("transpose", 1, Attrs({{"perm", AttrValue(std::vector<int64_t>{1, 0})}}));
  ASSERT_TRUE(permute.ok() && transpose.ok()) << permute.status() << transpose.status();
  EXPECT_EQ(**permute, **transpose);
  EXPECT_EQ((*permute)->type_name(), "transpose");
}

// The op's attribute name on an alias that renames it is an error naming
// both names; so is every other wrong name, in the alias's terms.
TEST(CustomOp, BuiltinAliasesRejectTheOpsAttributeNames) {
  EXPECT_EQ(CandidatesToString("unsqueeze", {"f32[4,6]"}, {"axis=1"}),
            "error: unsqueeze (alias of expand_dims): unknown attribute 'axis' (expand_dims's "
            "name; unsqueeze calls it 'dim'); known: dim");
  EXPECT_EQ(CandidatesToString("permute", {"f32[4,6]"}, {"perm=1,0"}),
            "error: permute (alias of transpose): unknown attribute 'perm' (transpose's name; "
            "permute calls it 'dims'); known: dims");
  EXPECT_EQ(CandidatesToString("mean", {"f32[4,6]"}, {"axis=1"}),
            "error: mean (alias of reduce_mean): unknown attribute 'axis' (reduce_mean's name; "
            "mean calls it 'dim'); known: dim, keepdim");
  EXPECT_EQ(CandidatesToString("mean", {"f32[4,6]"}, {"dim=1", "keepdims=true"}),
            "error: mean (alias of reduce_mean): unknown attribute 'keepdims' (reduce_mean's "
            "name; mean calls it 'keepdim'); known: dim, keepdim");
  EXPECT_EQ(CandidatesToString("mean", {"f32[4,6]"}, {}),
            "error: mean (alias of reduce_mean): required attribute 'dim' (ints; reduce_mean's "
            "'axis') is missing");
  EXPECT_EQ(CandidatesToString("mean", {"f32[4,6]"}, {"dim="}),
            "error: mean (alias of reduce_mean): attribute 'dim' is empty; list the axes (mean "
            "with no dim reduces every axis, reduce_mean with axis=[] none)");
  // PyTorch's alpha (x - alpha * y) is not broadcast_sub's.
  EXPECT_EQ(CandidatesToString("sub", {"f32[4,6]", "f32[4,6]"}, {"alpha=2"}),
            "error: sub (alias of broadcast_sub): unknown attribute 'alpha'; the op has no "
            "attributes");
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
  engine::Engine::Options options;
  options.registry = engine::Engine::Options::Borrow(registry);
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create(std::move(options));
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
