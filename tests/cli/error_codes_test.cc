// The error-code contract: for every documented error of the parsers,
// requests, Engine::Create/Infer/Plan and the cost-policy registry, the
// absl status CODE (not only the message) and a word of the message. A
// caller that switches on codes (a binding mapping them to exceptions, a
// server mapping them to HTTP statuses) relies on exactly this table.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/data_type.h"
#include "engine/engine.h"
#include "oneflow_sbp/inference/infer_cache.h"
#include "io/infer_proto.h"
#include "oneflow_sbp/inference/infer_request_spec.h"
#include "io/message_decode.h"
#include "io/proto_io.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using absl::StatusCode;
using ::testing::HasSubstr;

struct Case {
  std::string name;
  std::function<absl::Status()> run;
  StatusCode code;
  std::string needle;  // a word the message must contain
};

template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

void ExpectCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const absl::Status s = c.run();
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.needle));
    // One line, of readable length: no input is echoed in full.
    EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("\n")));
    EXPECT_LT(s.message().size(), 600u) << s;
  }
}

const std::string kLong(5000, 'x');

// ------------------------------------------------------------------ parsers

TEST(ErrorCodes, Parsers) {
  const StatusCode kInvalid = StatusCode::kInvalidArgument;
  ExpectCases({
      {"sbp: unknown", [] { return StatusOf(SbpParallel::Parse("Q")); }, kInvalid, "expected B, P"},
      {"sbp: negative axis", [] { return StatusOf(SbpParallel::Parse("S(-1)")); }, kInvalid,
       "non-negative"},
      {"sbp: axis past the limit", [] { return StatusOf(SbpParallel::Parse("S(300)")); },
       kInvalid, "[0, 250]"},
      {"sbp: huge axis", [] { return StatusOf(SbpParallel::Parse("S(99999999999999)")); },
       kInvalid, "too large"},
      {"sbp: run together", [] { return StatusOf(SbpParallel::Parse("S(0)S(1)")); }, kInvalid,
       "missing ',' after S(0)"},
      {"nd_sbp: missing comma", [] { return StatusOf(NdSbp::Parse("(S(0)S(1))")); }, kInvalid,
       "missing ','"},
      {"nd_sbp: missing paren", [] { return StatusOf(NdSbp::Parse("(S(0),B")); }, kInvalid,
       "missing ')'"},
      {"nd_sbp: empty", [] { return StatusOf(NdSbp::Parse("()")); }, kInvalid, "one SBP"},
      {"nd_sbp: 9 axes", [] { return StatusOf(NdSbp::Parse("B,B,B,B,B,B,B,B,B")); }, kInvalid,
       "at most 8"},
      {"nd_sbp: entry named", [] { return StatusOf(NdSbp::Parse("(B, Q)")); }, kInvalid,
       "entry 2 of 2"},
      {"nd_sbp: huge input cut", [] { return StatusOf(NdSbp::Parse(kLong)); }, kInvalid,
       "(5000 characters)"},
      {"placement: empty", [] { return StatusOf(Placement::Parse("")); }, kInvalid, "empty"},
      {"placement: no colon", [] { return StatusOf(Placement::Parse("cpu0")); }, kInvalid,
       "<device>"},
      {"placement: device", [] { return StatusOf(Placement::Parse("tpu:0")); }, kInvalid,
       "unknown device type"},
      {"placement: trailing", [] { return StatusOf(Placement::Parse("cpu:0-3 [2,2]x")); },
       kInvalid, "trailing characters 'x'"},
      {"placement: no ]", [] { return StatusOf(Placement::Parse("cpu:0-3 [2,2")); }, kInvalid,
       "closing ']'"},
      {"placement: huge rank", [] { return StatusOf(Placement::Parse("cpu:0-99999999999999")); },
       kInvalid, "too large"},
      {"placement: not a number", [] { return StatusOf(Placement::Parse("cpu:a")); }, kInvalid,
       "not a non-negative integer"},
      {"placement: backwards", [] { return StatusOf(Placement::Parse("cpu:3-0")); }, kInvalid,
       "backwards"},
      {"placement: duplicate", [] { return StatusOf(Placement::Parse("cpu:0,0")); }, kInvalid,
       "more than once"},
      {"placement: product", [] { return StatusOf(Placement::Parse("cpu:0-3 [3]")); }, kInvalid,
       "holds 3 devices"},
      {"placement: one rank", [] { return StatusOf(Placement::Parse("cpu:0 [2]")); }, kInvalid,
       "lists 1 rank"},
      {"placement: too many ranks", [] { return StatusOf(Placement::Parse("cpu:0-70000")); },
       kInvalid, "65536"},
      {"placement: 9 axes", [] { return StatusOf(Placement::Parse("cpu:0 [1,1,1,1,1,1,1,1,1]")); },
       kInvalid, "at most 8"},
      {"shape: blank", [] { return StatusOf(Shape::Parse(" ")); }, kInvalid, "empty shape"},
      {"shape: missing ]", [] { return StatusOf(Shape::Parse("[1,2")); }, kInvalid, "missing ']'"},
      {"shape: not a number", [] { return StatusOf(Shape::Parse("4,x")); }, kInvalid,
       "not an integer extent"},
      {"shape: huge extent", [] { return StatusOf(Shape::Parse("99999999999999999999")); },
       kInvalid, "too large"},
      {"shape: zero", [] { return StatusOf(Shape::Parse("4,0")); }, kInvalid, "extent 0"},
      {"shape: negative", [] { return StatusOf(Shape::Parse("-3")); }, kInvalid, "extent -3"},
      {"shape: element overflow", [] { return StatusOf(Shape::Parse("4294967296,4294967296")); },
       kInvalid, "overflows int64"},
      {"shape: rank 33",
       [] { return StatusOf(Shape::Parse(absl::StrJoin(std::vector<int>(33, 1), ","))); },
       kInvalid, "rank 33"},
      {"dtype", [] { return StatusOf(ParseDataType("f33")); }, kInvalid, "unknown dtype"},
      {"attr: int", [] { return StatusOf(ParseAttrValue(AttrType::kInt, "x")); }, kInvalid,
       "not a valid"},
      {"attr: ints", [] { return StatusOf(ParseAttrValue(AttrType::kInts, "1,a")); }, kInvalid,
       "1,0,2"},
      {"attr: bool", [] { return StatusOf(ParseAttrValue(AttrType::kBool, "maybe")); }, kInvalid,
       "not a valid"},
      {"attr: float", [] { return StatusOf(ParseAttrValue(AttrType::kFloat, "abc")); }, kInvalid,
       "not a valid"},
      {"tensor: no dims", [] { return StatusOf(TensorDesc::Parse("f32")); }, kInvalid,
       "<dtype>[<dims>]"},
      {"tensor: bytes overflow", [] { return StatusOf(TensorDesc::Parse("f64[4611686018427387904]")); },
       kInvalid, "overflows int64"},
      {"input: no layout", [] { return StatusOf(ParseInferInput("f32[4]")); }, kInvalid,
       "<nd_sbp>"},
      {"decode nd_sbp: JSON", [] { return StatusOf(io::DecodeNdSbp("{")); }, kInvalid, "JSON"},
      {"decode nd_sbp: text", [] { return StatusOf(io::DecodeNdSbp("sbp_parallel {")); }, kInvalid,
       "text proto"},
      {"decode nd_sbp: unset entry", [] { return StatusOf(io::DecodeNdSbp(R"({"sbp_parallel":[{}]})")); },
       kInvalid, "sets none of"},
      {"decode nd_sbp: no entries", [] { return StatusOf(io::DecodeNdSbp("{}")); }, kInvalid,
       "no sbp_parallel"},
      {"decode placement", [] { return StatusOf(io::DecodePlacement(R"({"bogus":1})")); }, kInvalid,
       "ParallelConf: missing field device_tag"},
  });
}

// ----------------------------------------------------------------- requests

absl::Status FromText(const std::string& text) {
  oneflow::InferRequestProto proto;
  absl::Status s = io::FromTextProto(text, &proto);
  if (!s.ok()) return s;
  return io::InferRequestFromProto(proto, Registry()).status();
}

TEST(ErrorCodes, Requests) {
  const StatusCode kInvalid = StatusCode::kInvalidArgument;
  const std::string ok_input = R"pb(input { tensor: "f32[8,4]:(S(0))" } )pb";
  ExpectCases({
      {"malformed text", [] { return FromText("op_type_name: "); }, kInvalid, "text proto"},
      {"unknown op", [] { return FromText(R"(op_type_name: "nope" placement: "cpu:0-1")"); },
       StatusCode::kNotFound, "nope"},
      {"undeclared attr",
       [&] {
         return FromText(R"(op_type_name: "relu" placement: "cpu:0-1" attr { key: "k" value { i: 1 } } )" +
                         ok_input);
       },
       kInvalid, "k"},
      {"bad placement", [&] { return FromText(R"(op_type_name: "relu" placement: "cpu:" )" + ok_input); },
       kInvalid, "no ranks"},
      {"partial_penalty_policy 99",
       [&] {
         return FromText(R"(op_type_name: "relu" placement: "cpu:0-1" partial_penalty_policy: 99 )" +
                         ok_input);
       },
       kInvalid, "partial_penalty_policy 99"},
      {"constraint on unknown blob",
       [&] {
         return FromText(R"(op_type_name: "relu" placement: "cpu:0-1" constraint { key: "zz" value { sbp_parallel { broadcast_parallel {} } } } )" +
                         ok_input);
       },
       kInvalid, "zz"},
      {"input missing", [] { return FromText(R"(op_type_name: "relu" placement: "cpu:0-1")"); },
       kInvalid, "relu"},
      {"bad input tensor",
       [] { return FromText(R"(op_type_name: "relu" placement: "cpu:0-1" input { tensor: "f32[8,4]" })"); },
       kInvalid, "<nd_sbp>"},
  });
}

// ------------------------------------------------------------- Engine::Infer

engine::Engine& Eng() {
  static engine::Engine* engine = *EngineFor();
  return *engine;
}

InferRequest Request(const std::string& op, const std::string& placement,
                     const std::vector<std::string>& inputs) {
  InferRequest r;
  r.op = *MakeCall(op, static_cast<int>(inputs.size()));
  r.placement = *Placement::Parse(placement);
  for (const std::string& in : inputs) r.inputs.push_back(*ParseInferInput(in));
  return r;
}

absl::Status InferStatus(const InferRequest& r) { return Eng().Infer(r).status(); }

absl::Status SameShape(ShapeContext& ctx) {
  ctx.set_output("y", 0, ctx.input("x"));
  return absl::OkStatus();
}

TEST(ErrorCodes, EngineInfer) {
  const StatusCode kInvalid = StatusCode::kInvalidArgument;
  ExpectCases({
      {"no op", [] { return InferStatus(InferRequest()); }, kInvalid, "names no op"},
      {"unknown policy",
       [] {
         InferRequest r = Request("relu", "cpu:0-1", {"f32[8]:(S(0))"});
         r.cost.policy = PolicyName::Of("fastest");
         return InferStatus(r);
       },
       kInvalid, "fastest"},
      {"wrong number of inputs",
       [] {
         InferRequest r = Request("relu", "cpu:0-1", {"f32[8]:(S(0))"});
         r.inputs.push_back(r.inputs[0]);
         return InferStatus(r);
       },
       kInvalid, "relu"},
      {"input nd_sbp length", [] { return InferStatus(Request("relu", "cpu:0-3 [2,2]", {"f32[8]:(S(0))"})); },
       kInvalid, "relu"},
      {"input splits a missing dim", [] { return InferStatus(Request("relu", "cpu:0-1", {"f32[8]:(S(1))"})); },
       kInvalid, "relu"},
      {"unset input",
       [] {
         InferRequest r = Request("relu", "cpu:0-1", {"f32[8]:(S(0))"});
         r.inputs[0] = InferInput(r.inputs[0].desc(), NdSbp{SbpParallel()});
         return InferStatus(r);
       },
       kInvalid, "unset"},
      {"constraint length",
       [] {
         InferRequest r = Request("relu", "cpu:0-1", {"f32[8]:(S(0))"});
         r.constraints = {NdSbp{SbpParallel::Broadcast(), SbpParallel::Broadcast()}, std::nullopt};
         return InferStatus(r);
       },
       kInvalid, "mesh axes"},
      {"constraint unsatisfiable",
       [] {
         InferRequest r = Request("relu", "cpu:0-1", {"f32[8]:(S(0))"});
         r.constraints = {*NdSbp::Parse("P"), std::nullopt};
         return InferStatus(r);
       },
       kInvalid, "constraint"},
      {"output constraint on an N-D mesh (oneflow)",
       [] {
         InferRequest r = Request("relu", "cpu:0-3 [2,2]", {"f32[8,8]:(S(0),B)"});
         r.constraints = {std::nullopt, *NdSbp::Parse("(P,P)")};
         return InferStatus(r);
       },
       kInvalid, "constrains inputs only"},
      {"output constraint on an N-D mesh (planned) applies",
       [] {
         InferRequest r = Request("relu", "cpu:0-3 [2,2]", {"f32[8,8]:(S(0),B)"});
         r.constraints = {std::nullopt, *NdSbp::Parse("(B,S(1))")};
         r.cost.policy = PolicyName::Planned();
         absl::StatusOr<std::shared_ptr<const InferResult>> res = Eng().Infer(r);
         if (!res.ok()) return res.status();
         return (*res)->signature[1] == *NdSbp::Parse("(B,S(1))")
                    ? absl::OkStatus()
                    : absl::InternalError("planned ignored the output constraint");
       },
       StatusCode::kOk, ""},
      {"oversized N-D product",
       [] {
         const std::string dims = absl::StrJoin(std::vector<int>(8, 2), ",");
         return InferStatus(Request("relu", "cpu:0-255 [" + dims + "]",
                                    {"f32[" + dims + "]:(B,B,B,B,B,B,B,B)"}));
       },
       StatusCode::kResourceExhausted, "exceeds"},
      {"planned without an engine",
       [] {
         InferRequest r = Request("relu", "cpu:0-1", {"f32[8]:(S(0))"});
         r.cost.policy = PolicyName::Planned();
         return InferSignature(r).status();
       },
       StatusCode::kFailedPrecondition, "needs an Engine"},
  });
}

TEST(ErrorCodes, RuleMisuseIsInternal) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("sloppy").Input("x").Output("y").SetShapeFn(SameShape)
                                .SetGetSbpFn([](SbpContext& ctx) {
                                  (void)ctx.Attr<int64_t>("undeclared");
                                  return SplitForEachAxis(ctx);
                                }))
                  .ok());
  absl::StatusOr<engine::Engine*> engine = EngineFor(&registry);
  ASSERT_TRUE(engine.ok());
  InferRequest r;
  r.op = *OpCall::Make(registry.Find("sloppy"), {1}, AttrMap());
  r.placement = *Placement::Parse("cpu:0-1");
  r.inputs = {*ParseInferInput("f32[8]:(S(0))")};
  const absl::Status s = (*engine)->Infer(r).status();
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("undeclared"));
}

// -------------------------------------------------------------- Engine::Plan

absl::Status PlanStatus(const std::string& shape, DataType dtype, const std::string& src_pl,
                        const std::string& src, const std::string& dst_pl,
                        const std::string& dst) {
  return Eng()
      .Plan({*Shape::Parse(shape), dtype, *Placement::Parse(src_pl), *NdSbp::Parse(src),
             *Placement::Parse(dst_pl), *NdSbp::Parse(dst)})
      .status();
}

TEST(ErrorCodes, EnginePlan) {
  const StatusCode kInvalid = StatusCode::kInvalidArgument;
  const std::string mesh = "cpu:0-3 [2,2]";
  ExpectCases({
      {"source length", [&] { return PlanStatus("8,6", DataType::kFloat32, mesh, "S(0)", mesh, "(B,B)"); },
       kInvalid, "source"},
      {"destination splits a missing dim",
       [&] { return PlanStatus("8", DataType::kFloat32, mesh, "(B,B)", mesh, "(S(1),B)"); }, kInvalid,
       "destination"},
      {"unset layout",
       [&] {
         return Eng()
             .Plan({*Shape::Parse("8"), DataType::kFloat32, *Placement::Parse(mesh),
                    NdSbp{SbpParallel(), SbpParallel::Broadcast()}, *Placement::Parse(mesh),
                    *NdSbp::Parse("(B,B)")})
             .status();
       },
       kInvalid, "unset"},
      {"cpu to cuda",
       [&] { return PlanStatus("8", DataType::kFloat32, "cpu:0-1", "S(0)", "cuda:0-1", "B"); },
       StatusCode::kUnimplemented, "device types"},
      {"tensor bytes overflow",
       [&] { return PlanStatus("4611686018427387904", DataType::kFloat64, mesh, "(S(0),B)", mesh, "(B,B)"); },
       kInvalid, "overflows int64"},
      {"plan byte sums overflow",
       [&] {
         return PlanStatus("9223372036854775807", DataType::kUInt8, mesh, "(S(0),P)", mesh, "(B,B)");
       },
       StatusCode::kOutOfRange, "u8[9223372036854775807]"},
  });
}

// ---------------------------------------------------- Engine and its options

TEST(ErrorCodes, EngineOptionsAndPolicies) {
  ExpectCases({
      {"cache shards",
       [] {
         engine::Engine::Options o;
         o.infer_cache.shards = 3;
         return engine::Engine::Create(std::move(o)).status();
       },
       StatusCode::kInvalidArgument, "shards"},
      {"plan cache capacity",
       [] {
         engine::Engine::Options o;
         o.plan_cache_capacity = 0;
         return engine::Engine::Create(std::move(o)).status();
       },
       StatusCode::kInvalidArgument, "capacity"},
      {"calibration axes",
       [] {
         engine::Engine::Options o;
         o.calibration = boxing::Calibration::Defaults(2);
         return engine::Engine::Create(std::move(o)).status();
       },
       StatusCode::kInvalidArgument, "axes"},
      {"infer cache capacity",
       [] {
         InferCache::Options o;
         o.capacity = 0;
         return InferCache::Create(o).status();
       },
       StatusCode::kInvalidArgument, "capacity"},
  });
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const engine::Engine::PolicyPtr nd = OneFlowNd();
  EXPECT_EQ(engine->RegisterCostPolicy("oneflow", nd, nd).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(engine->RegisterCostPolicy("", nd, nd).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine->RegisterCostPolicy("null", nullptr, nd).code(), StatusCode::kInvalidArgument);
  absl::Status last;
  for (int i = 0; i < engine::Engine::kMaxCostPolicies && last.ok(); ++i) {
    last = engine->RegisterCostPolicy(absl::StrCat("p", i), nd, nd);
  }
  EXPECT_EQ(last.code(), StatusCode::kResourceExhausted) << last;
}

// User text in messages (issue 24): controls escaped, so a NUL cannot cut a
// message nor an ANSI escape drive the terminal; long text cut at 64 bytes,
// never inside a UTF-8 character, with the full length.
TEST(QuotedInputText, EscapesControlsAndCutsLongText) {
  EXPECT_EQ(QuotedInput("S(0)"), "'S(0)'");
  EXPECT_EQ(QuotedInput(absl::string_view("a\0b\x1b[31m\n\t\r\x7f", 12)),
            "'a\\x00b\\x1b[31m\\n\\t\\r\\x7f'");
  EXPECT_EQ(QuotedInput("\xc2\x9b" "2J \xc3\xa9"), "'\\u009b2J \xc3\xa9'");  // C1 CSI; é kept
  EXPECT_EQ(QuotedInput(std::string(100, 'b')),
            absl::StrCat("'", std::string(64, 'b'), "...' (100 characters)"));
  // 63 ASCII bytes then a two-byte character: the cut keeps 63 bytes.
  EXPECT_EQ(QuotedInput(std::string(63, 'a') + "\xc3\xa9" + std::string(10, 'a')),
            absl::StrCat("'", std::string(63, 'a'), "...' (75 characters)"));
  EXPECT_EQ(UnquotedInput(std::string(70, 'n')),
            absl::StrCat(std::string(64, 'n'), "... (70 characters)"));
  EXPECT_EQ(Abbreviated("x\x1b[2J"), "x\\x1b[2J");
  EXPECT_EQ(EscapedControls("ok \xe2\x9c\x93"), "ok \xe2\x9c\x93");
  // Bytes outside UTF-8 are escaped: a lone 0x9B is 8-bit CSI.
  EXPECT_EQ(QuotedInput("a\x9b" "2J\xff \xc3"), "'a\\x9b2J\\xff \\xc3'");
  EXPECT_EQ(EscapedControls("\xe2\x9c" "x \xf0\x9f\x98\x80"), "\\xe2\\x9cx \xf0\x9f\x98\x80");
  // A path is cut at 256 bytes, not 64: it is what finds the file.
  const std::string dir(200, 'd');
  EXPECT_EQ(QuotedPath(dir + "/f\x1b.bin"), absl::StrCat("'", dir, "/f\\x1b.bin'"));
  EXPECT_EQ(QuotedPath(std::string(300, 'p')),
            absl::StrCat("'", std::string(256, 'p'), "...' (300 characters)"));
}

// A JSON request is read strictly too: the reader is shared.
TEST(ErrorCodes, JsonIsStrict) {
  oneflow::NdSbp nd;
  EXPECT_TRUE(io::FromJson(R"j({"sbp_parallel": [{"broadcast_parallel": {}}]})j", &nd).ok());
  for (const char* bad : {R"j({'sbp_parallel': []})j", R"j({"sbp_parallel": [],})j",
                          R"j({"sbp_parallel": [[{"broadcast_parallel": {}}]]})j"}) {
    const absl::Status s = io::FromJson(bad, &nd);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("malformed JSON for oneflow.NdSbp")) << bad;
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
