// `sbp infer` and `sbp ops` through their command functions: every output
// format, requests from JSON and text format, and the bad-request errors.
#include <string>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/proto_io.h"
#include "ops/builtin_ops.h"
#include "kernels/kernel_registry.h"
#include "proto/infer.pb.h"
#include "proto/op_def.pb.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"
#include "cli/cmd_infer.h"
#include "cli/cmd_ops.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const OpRegistry& Ops() { return ops::BuiltinOpRegistry(); }
// An engine like the tool's: the built-in ops, default caches.
engine::Engine& Eng() { return **testing::EngineFor(); }


InferOptions Matmul2x2() {
  InferOptions o;
  o.op = "matmul";
  o.attrs = {"transpose_b=true"};
  o.placement = "cpu:0-3 [2,2]";
  o.inputs = {"f32[64,32]:(S(0),B)", "f32[48,32]:(B,S(1))"};
  return o;
}

std::string ErrorOf(const absl::StatusOr<std::string>& r) {
  return r.ok() ? "OK: " + *r : std::string(r.status().message());
}

// No candidate keeps both inputs (b's S(1) on axis 1 is matmul's column
// split only without transpose_b). a:(S0,S1) b:(B,S1) -> (S0,P) costs 2
// (B -> S on one axis of a is a local slice, +1 for staying 2-D); keeping
// a and gathering b to (B,B) costs 1 + 3·T(b) = 18433.
TEST(SbpInfer, TextReportNamesEveryBlobAndTheBoxing) {
  absl::StatusOr<std::string> out = RunInfer(Matmul2x2(), Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "matmul on cpu:0-3 [2,2] (cost policy oneflow, 36 candidates)\n"
            "signature: a_0:(S(0),S(1)) b_0:(B,S(1)) -> out_0:(S(0),P)\n"
            "  blob  tensor           producer         chosen\n"
            "  a_0   f32[64,32]       (S(0), B)        (S(0), S(1))\n"
            "  b_0   f32[48,32]       (B, S(1))        (B, S(1))\n"
            "  out_0 f32[64,48]                        (S(0), P)\n"
            "boxing: a_0 (S(0), B) -> (S(0), S(1))\n");
}

TEST(SbpInfer, JsonIsTheResultMessageWithOneFlowFieldNames) {
  InferOptions o = Matmul2x2();
  o.format = "json";
  o.explain = true;
  absl::StatusOr<std::string> out = RunInfer(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  oneflow::InferResultProto r;
  ASSERT_TRUE(io::FromJson(*out, &r).ok());
  EXPECT_THAT(*out, HasSubstr("\"bn_in_op2nd_sbp\""));
  ASSERT_EQ(r.nd_sbp_signature().bn_in_op2nd_sbp().count("a_0"), 1u);
  EXPECT_EQ(r.nd_sbp_signature().bn_in_op2nd_sbp().at("a_0").sbp_parallel(1).split_parallel().axis(), 1);
  ASSERT_EQ(r.inputs_size(), 2);
  EXPECT_EQ(r.inputs(0).bn(), "a_0");
  EXPECT_EQ(r.inputs(0).dtype(), "f32");
  EXPECT_EQ(r.inputs(0).nd_sbp_str(), "(S(0), S(1))");
  EXPECT_EQ(r.inputs(0).producer_nd_sbp_str(), "(S(0), B)");
  EXPECT_TRUE(r.inputs(0).producer_nd_sbp().sbp_parallel(1).has_broadcast_parallel());
  EXPECT_TRUE(r.inputs(0).needs_boxing());
  EXPECT_FALSE(r.inputs(1).needs_boxing());
  ASSERT_EQ(r.outputs_size(), 1);
  EXPECT_EQ(r.outputs(0).shape().dim(1), 48);
  ASSERT_EQ(r.candidates_size(), 36);
  int chosen = 0;
  for (const auto& c : r.candidates()) {
    if (c.status() == "chosen") {
      ++chosen;
      EXPECT_EQ(c.signature(), "a_0:(S(0),S(1)) b_0:(B,S(1)) -> out_0:(S(0),P)");
      EXPECT_EQ(c.copy_cost(), 2);
    }
  }
  EXPECT_EQ(chosen, 1);
}

TEST(SbpInfer, TableListsRankedThenFilteredCandidates) {
  InferOptions o;
  o.op = "matmul";
  o.placement = "cpu:0-3";
  o.inputs = {"f32[2,8]:S(0)", "f32[8,16]:B"};
  o.format = "table";
  absl::StatusOr<std::string> out = RunInfer(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("*1    a_0:B b_0:B -> out_0:B"));
  EXPECT_THAT(*out, HasSubstr("filtered_by_shape: a_0 S(0): dim 0 has 2 < 4 parts"));
  EXPECT_LT(out->find("*1"), out->find("filtered_by_shape"));
}

TEST(SbpInfer, RequestFromJsonAndTextFormat) {
  InferOptions json;
  json.request = R"json({"op_type_name": "add_n", "placement": "cpu:0-1",
                     "input": [{"tensor": "f32[4,4]:S(0)"},
                               {"shape": {"dim": [4, 4]}, "data_type": "kFloat",
                                "nd_sbp": {"sbp_parallel": [{"split_parallel": {"axis": 1}}]}}]})json";
  absl::StatusOr<std::string> a = RunInfer(json, Eng());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(*a, HasSubstr("signature: in_0:S(0) in_1:S(0) -> out_0:S(0)"));
  InferOptions text;
  text.request = R"pb(op_type_name: "add_n" placement: "cpu:0-1"
                    input { tensor: "f32[4,4]:S(1)" } input { tensor: "f32[4,4]:S(1)" })pb";
  absl::StatusOr<std::string> b = RunInfer(text, Eng());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(*b, HasSubstr("signature: in_0:S(1) in_1:S(1) -> out_0:S(1)"));
  // Flags override the request's fields.
  text.placement = "cpu:0-3";
  EXPECT_THAT(*RunInfer(text, Eng()), HasSubstr("add_n on cpu:0-3"));
}

TEST(SbpInfer, NamedInputsPlaceOptionalArgs) {
  InferOptions o;
  o.op = "matmul";
  o.placement = "cpu:0-1";
  o.inputs = {"a=f32[8,4]:S(0)", "b=f32[4,6]:B", "_add_to_output=f32[8,6]:S(0)"};
  absl::StatusOr<std::string> out = RunInfer(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("a_0:S(0) b_0:B _add_to_output_0:S(0) -> out_0:S(0)"));
  o.inputs = {"a=f32[8,4]:S(0)", "f32[4,6]:B"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("name every input (bn=...) or none"));
  o.inputs = {"a=f32[8,4]:S(0)", "c=f32[4,6]:B"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("no input named 'c'"));
}

TEST(SbpInfer, ConstraintsFromFlags) {
  InferOptions o = Matmul2x2();
  // a_0 pinned to (B,B): gathering a costs 1 + 3·T(a) = 24577 in every
  // survivor; b is cheapest as (B,S(0)) (1 + T(b)·3/4 = 4609), one less
  // than (S(0),S(0)), which pays the extra slice on axis 0.
  o.constraints = {"a_0=(B,B)"};
  EXPECT_THAT(*RunInfer(o, Eng()),
              HasSubstr("signature: a_0:(B,B) b_0:(B,S(0)) -> out_0:(B,S(1))"));
  o.constraints = {"z_0=(B,B)"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())),
              HasSubstr("matmul: constraint on unknown blob 'z_0'; blobs are a_0, b_0, out_0"));
  o.constraints = {"b_0"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("must read bn=nd_sbp"));
}

TEST(SbpInfer, BadRequestsGiveOneClearMessage) {
  InferOptions o = Matmul2x2();
  o.op = "matmull";
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("unknown op 'matmull' (did you mean"));
  o = Matmul2x2();
  o.attrs = {"transpose_c=true"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())),
              HasSubstr("matmul: unknown attribute 'transpose_c'; known: transpose_a, "
                        "transpose_b, alpha"));
  o.attrs = {"transpose_b=maybe"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())),
              HasSubstr("matmul: attribute 'transpose_b': 'maybe' is not a valid bool"));
  o = Matmul2x2();
  o.inputs = {"f32[64,32]:(S(0),B)"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("matmul takes at least 2 inputs"));
  o.inputs = {"f32[64,32]:(S(0),B)", "f32[48,32]:(B,S(1))", "f32[64,48]:(B,B)", "f32[1]:(B,B)"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("matmul takes at most 3 inputs; got 4"));
  o = Matmul2x2();
  o.inputs = {"f32[64,32]:S(0)", "f32[48,32]:(B,S(1))"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())),
              HasSubstr("matmul: input a_0 f32[64,32]: nd_sbp (S(0)) has 1 entries"));
  o.inputs = {"f32[64,32]:(S(2),B)", "f32[48,32]:(B,S(1))"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("splits dim 2 but shape [64,32] has rank 2"));
  o.inputs = {"f32[64,32]", "f32[48,32]:(B,S(1))"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("malformed input 'f32[64,32]'"));
  o = Matmul2x2();
  o.placement.reset();
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("request has no placement"));
  o = Matmul2x2();
  o.cost = "cheapest";
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("unknown cost policy 'cheapest'"));
  o = Matmul2x2();
  o.format = "dot";
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("supports text|json|textproto|table"));
  InferOptions bad_request;
  bad_request.request = "{\"op_type_name\": ";
  EXPECT_THAT(ErrorOf(RunInfer(bad_request, Eng())), HasSubstr("malformed JSON"));
}

// --attr=equation=bmk,kn->bmn: the value keeps its comma and arrow (only
// the first '=' splits name from value), reaches einsum's string
// attribute, and gives the batched matmul's candidates: b and m of in_0
// split the output, n of in_1 too.
TEST(SbpInfer, EinsumEquationThroughAttrFlag) {
  InferOptions o;
  o.op = "einsum";
  o.attrs = {"equation=bmk,kn->bmn"};
  o.placement = "cpu:0-3 [2,2]";
  o.inputs = {"f32[8,6,4]:(S(0),B)", "f32[4,5]:(B,S(1))"};
  absl::StatusOr<std::string> out = RunInfer(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "einsum on cpu:0-3 [2,2] (cost policy oneflow, 49 candidates)\n"
            "signature: in_0:(S(0),B) in_1:(B,S(1)) -> out_0:(S(0),S(2))\n"
            "  blob  tensor           producer         chosen\n"
            "  in_0  f32[8,6,4]       (S(0), B)        (S(0), B)\n"
            "  in_1  f32[4,5]         (B, S(1))        (B, S(1))\n"
            "  out_0 f32[8,6,5]                        (S(0), S(2))\n"
            "boxing: none\n");
  // A malformed equation is an error (sbp infer exits 1) naming it.
  o.attrs = {"equation=bmk,kn-bmn"};
  absl::StatusOr<std::string> bad = RunInfer(o, Eng());
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ErrorOf(bad), HasSubstr("equation 'bmk,kn-bmn'"));
  EXPECT_THAT(ErrorOf(bad), HasSubstr("needs exactly one '->'"));
  o.attrs = {"equation=bmk,kn->bmq"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())),
              HasSubstr("einsum: equation 'bmk,kn->bmq': output letter 'q' is in "
                        "no operand"));
}

TEST(SbpOps, ListsEveryOpWithArgsAndAttrs) {
  // A registry with one kernel: the others are marked.
  kernels::KernelRegistry kr;
  ASSERT_TRUE(kr.Register("matmul", DeviceType::kCpu,
                          [](kernels::KernelContext&) { return absl::OkStatus(); },
                          {DataType::kFloat32, DataType::kFloat64})
                  .ok());
  absl::StatusOr<std::string> out = RunOps("", "text", Ops(), &kr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr(" ops, 1 with a cpu kernel (the rest marked [no cpu kernel])"));
  EXPECT_THAT(*out, HasSubstr(" matmul                     (a, b, _add_to_output?) -> (out)  "
                              "transpose_a:bool=false, transpose_b:bool=false, alpha:float=1\n"));
  EXPECT_THAT(*out, HasSubstr(" add_n                      (in...) -> (out)  [no cpu kernel]\n"));
  out = RunOps("matmul", "text", Ops(), &kr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("kernel:  cpu (f32 f64)\n"));
  out = RunOps("add_n", "text", Ops(), &kr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("kernel:  none for cpu (eager Apply rejects the op)\n"));
  absl::StatusOr<std::string> json = RunOps("transpose", "json", Ops());
  ASSERT_TRUE(json.ok());
  oneflow::OpDefListProto list;
  ASSERT_TRUE(io::FromJson(*json, &list).ok());
  ASSERT_EQ(list.op_size(), 1);
  EXPECT_EQ(list.op(0).attr(0).name(), "perm");
  EXPECT_FALSE(list.op(0).attr(0).has_default_value());
  EXPECT_THAT(ErrorOf(RunOps("nope", "text", Ops())), HasSubstr("unknown op 'nope'"));
}

// Issue 23: names users type. `concat` is OneFlow's name for cat.
TEST(SbpOps, AliasesAreListedAndShowTheCanonicalOp) {
  absl::StatusOr<std::string> out = RunOps("", "text", Ops());
  ASSERT_TRUE(out.ok()) << out.status();
  // One line, with the attributes an alias names otherwise.
  EXPECT_THAT(*out, HasSubstr("\naliases (OneFlow/PyTorch names accepted for the op): add = broadcast_add, concat = cat, mean = reduce_mean (dim for axis, keepdim for keepdims), mul = broadcast_mul, multiply = broadcast_mul, neg = negative, permute = transpose (dims for perm), sigmoid_v2 = sigmoid, sub = broadcast_sub, subtract = broadcast_sub, unsqueeze = expand_dims (dim for axis), view = reshape\n"));
  // The op lines stay canonical: no line starts with an alias.
  EXPECT_THAT(*out, Not(HasSubstr("\n concat ")));
  out = RunOps("concat", "text", Ops());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("op:      cat ('concat' is an alias)\naliases: concat\n"
                              "inputs:  in...\n"));
  EXPECT_THAT(*out, HasSubstr("sbp infer --op=cat "));
  out = RunOps("cat", "text", Ops());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("op:      cat\naliases: concat\n"));
  out = RunOps("mean", "text", Ops());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("op:      reduce_mean ('mean' is an alias)\n"
                              "aliases: mean (dim for axis, keepdim for keepdims)\n"));
  // An op without aliases prints no aliases line.
  out = RunOps("matmul", "text", Ops());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, Not(HasSubstr("aliases:")));
  EXPECT_THAT(*out, Not(HasSubstr("ours:")));
  // What the rule appends after OneFlow's own list, from the record.
  out = RunOps("gather", "text", Ops());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("\nours:    after OneFlow's list, `in:P indices:B -> out:P`: a "
                              "gather is linear in `in`"));
  absl::StatusOr<std::string> json = RunOps("concat", "json", Ops());
  ASSERT_TRUE(json.ok()) << json.status();
  oneflow::OpDefListProto list;
  ASSERT_TRUE(io::FromJson(*json, &list).ok());
  ASSERT_EQ(list.op_size(), 1);
  EXPECT_EQ(list.op(0).op_type_name(), "cat");
  ASSERT_EQ(list.op(0).alias_size(), 1);
  EXPECT_EQ(list.op(0).alias(0), "concat");
  // The whole catalog in JSON names every alias under its op, and which
  // ops have P(max)/P(min) rules.
  json = RunOps("", "json", Ops());
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(io::FromJson(*json, &list).ok());
  std::vector<std::string> aliases;
  std::vector<std::string> extended;
  for (const oneflow::OpDefProto& op : list.op()) {
    for (const std::string& a : op.alias()) aliases.push_back(a + "=" + op.op_type_name());
    if (op.extended_partials()) extended.push_back(op.op_type_name());
  }
  EXPECT_EQ(absl::StrJoin(aliases, " "),
            "add=broadcast_add mul=broadcast_mul multiply=broadcast_mul sub=broadcast_sub "
            "subtract=broadcast_sub concat=cat unsqueeze=expand_dims neg=negative "
            "mean=reduce_mean view=reshape sigmoid_v2=sigmoid permute=transpose");
  EXPECT_THAT(extended, ::testing::IsSupersetOf({"reduce_max", "relu", "broadcast_add"}));
  EXPECT_THAT(extended, ::testing::Not(::testing::Contains("square")));
  // Unknown names: kNotFound, aliases among the suggestions.
  absl::StatusOr<std::string> bad = RunOps("concatt", "text", Ops());
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ErrorOf(bad), HasSubstr("unknown op 'concatt' (did you mean concat"));
}

TEST(SbpInfer, AliasInfersAsTheCanonicalOp) {
  InferOptions o;
  o.op = "concat";
  o.attrs = {"axis=1"};
  o.placement = "cpu:0-1";
  o.inputs = {"f32[8,4]:S(0)", "f32[8,6]:S(0)"};
  absl::StatusOr<std::string> out = RunInfer(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("cat on cpu:0-1"));
  EXPECT_THAT(*out, HasSubstr("signature: in_0:S(0) in_1:S(0) -> out_0:S(0)\n"));
  o.op = "cat";
  absl::StatusOr<std::string> canonical = RunInfer(o, Eng());
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(*out, *canonical);
  // Errors name the canonical op.
  o.op = "concat";
  o.attrs = {"axis=5"};
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())), HasSubstr("cat"));
  o.op = "conca";
  absl::StatusOr<std::string> bad = RunInfer(o, Eng());
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ErrorOf(bad), HasSubstr("unknown op 'conca' (did you mean "));
  EXPECT_THAT(ErrorOf(bad), HasSubstr("concat"));
}

// Aliases that rename attributes, through --attr: the op's report, word
// for word, from the alias's names; the op's names on the alias, and a
// misspelt alias, are errors naming both.
TEST(SbpInfer, AliasWithRenamedAttributesInfersAsTheOp) {
  InferOptions o;
  o.op = "mean";
  o.attrs = {"dim=1", "keepdim=true"};
  o.placement = "cpu:0-3 [2,2]";
  o.inputs = {"f32[8,6]:(S(0),S(1))"};
  absl::StatusOr<std::string> out = RunInfer(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("reduce_mean on cpu:0-3 [2,2] (cost policy oneflow, 16 candidates)\n"
                              "signature: input_tensor_0:(S(0),S(1)) -> output_tensor_0:(S(0),P)\n"));
  o.op = "reduce_mean";
  o.attrs = {"axis=1", "keepdims=true"};
  absl::StatusOr<std::string> canonical = RunInfer(o, Eng());
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(*out, *canonical);
  o.op = "mean";
  o.attrs = {"axis=1"};
  EXPECT_EQ(ErrorOf(RunInfer(o, Eng())),
            "mean (alias of reduce_mean): unknown attribute 'axis' (reduce_mean's name; mean "
            "calls it 'dim'); known: dim, keepdim");
  o.attrs = {"dim=x"};
  EXPECT_EQ(ErrorOf(RunInfer(o, Eng())),
            "mean (alias of reduce_mean): attribute 'dim': 'x' is not a valid ints (write e.g. "
            "1,0,2)");
  // The same from a request file, which names the alias and its attributes.
  InferOptions from_file;
  from_file.request = R"json({"op_type_name": "unsqueeze", "attr": {"dim": {"i": 0}},
                              "placement": "cpu:0-1", "input": [{"tensor": "f32[4,6]:S(1)"}]})json";
  out = RunInfer(from_file, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("signature: in_0:S(1) -> out_0:S(2)\n"));
  from_file.request = R"json({"op_type_name": "unsqueeze", "attr": {"axis": {"i": 0}},
                              "placement": "cpu:0-1", "input": [{"tensor": "f32[4,6]:S(1)"}]})json";
  EXPECT_THAT(ErrorOf(RunInfer(from_file, Eng())),
              HasSubstr("unsqueeze (alias of expand_dims): unknown attribute 'axis' "
                        "(expand_dims's name; unsqueeze calls it 'dim')"));
  o.op = "unsqeeze";
  EXPECT_THAT(ErrorOf(RunInfer(o, Eng())),
              HasSubstr("unknown op 'unsqeeze' (did you mean unsqueeze?)"));
}

}  // namespace
}  // namespace oneflow_sbp::cli
