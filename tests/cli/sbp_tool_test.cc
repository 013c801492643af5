// The `sbp` tool's commands as a library: cli::RunSlices, cli::RunParse,
// output-format selection and rendering.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/proto_io.h"
#include "proto/sbp_parallel.pb.h"
#include "proto/sbp_tool.pb.h"
#include "proto/tensor_slice.pb.h"
#include "tests/support/status_matchers.h"
#include "cli/cli_format.h"
#include "cli/cmd_parse.h"
#include "cli/cmd_slices.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

SlicesOptions Slices(const std::string& shape, const std::string& placement,
                     const std::string& nd_sbp, const std::string& format = "text") {
  SlicesOptions o;
  o.shape = shape;
  o.placement = placement;
  o.nd_sbp = nd_sbp;
  o.format = format;
  return o;
}

std::string RunSlicesOk(const SlicesOptions& o) {
  absl::StatusOr<std::string> out = RunSlices(o);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

void ExpectError(const absl::StatusOr<std::string>& out, const std::string& needle,
                 absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  ASSERT_FALSE(out.ok()) << "expected an error naming " << needle << ", got:\n" << *out;
  EXPECT_EQ(out.status().code(), code) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(needle));
  EXPECT_THAT(std::string(out.status().message()), Not(HasSubstr("\n")));
}

// ------------------------------------------------------------------ slices

const char kHeaderExample[] =
    "f32[10,6] (240 bytes) as (S(0), S(1)) on cpu:0-3 [2,2]\n"
    "parallel_id rank  coord    slice                       elems      bytes\n"
    "0           0     (0,0)    [0,5)x[0,3)                    15         60\n"
    "1           1     (0,1)    [0,5)x[3,6)                    15         60\n"
    "2           2     (1,0)    [5,10)x[0,3)                   15         60\n"
    "3           3     (1,1)    [5,10)x[3,6)                   15         60\n";

TEST(RunSlicesTest, GoldenText) {
  EXPECT_EQ(RunSlicesOk(Slices("10,6", "cpu:0-3 [2,2]", "(S(0),S(1))")), kHeaderExample);
}

TEST(RunSlicesTest, JsonAndTextProtoInputsGiveTheSameText) {
  const std::string json_placement =
      R"({"device_name":["0:0-3"],"device_tag":"cpu","hierarchy":{"dim":["2","2"]}})";
  const std::string text_nd =
      "sbp_parallel { split_parallel { axis: 0 } } sbp_parallel { split_parallel { axis: 1 } }";
  EXPECT_EQ(RunSlicesOk(Slices("[10,6]", json_placement, text_nd)), kHeaderExample);
}

TEST(RunSlicesTest, RanksDtypePartialAndEmpty) {
  SlicesOptions o = Slices("5", "cpu:0,2,4,6", "S(0)");
  o.dtype = "f64";
  EXPECT_EQ(RunSlicesOk(o),
            "f64[5] (40 bytes) as (S(0)) on cpu:0,2,4,6\n"
            "parallel_id rank  coord    slice                       elems      bytes\n"
            "0           0     (0)      [0,2)                           2         16\n"
            "1           2     (1)      [2,3)                           1          8\n"
            "2           4     (2)      [3,4)                           1          8\n"
            "3           6     (3)      [4,5)                           1          8\n");
  const std::string partial = RunSlicesOk(Slices("3", "cpu:0-5 [2,3]", "(P, S(0))"));
  EXPECT_THAT(partial, HasSubstr("\npartial: every rank holds an addend"));
  EXPECT_THAT(partial, HasSubstr("\n5           5     (1,2)    [2,3)  "));
  const std::string empty = RunSlicesOk(Slices("3", "cpu:0-3", "S(0)"));
  EXPECT_THAT(empty, HasSubstr("\n3           3     (3)      [3,3)                           "
                               "0          0  (empty)\n"));
  EXPECT_THAT(empty, Not(HasSubstr("partial")));
  EXPECT_EQ(std::count(empty.begin(), empty.end(), '\n'), 6);
  EXPECT_EQ(empty.find("(empty)"), empty.rfind("(empty)"));
}

TEST(RunSlicesTest, JsonOutputUsesProtoFieldNames) {
  const std::string json = RunSlicesOk(Slices("10,6", "cpu:0-3 [2,2]", "(S(0),S(1))", "json"));
  for (const char* field : {"\"rank_slice\"", "\"split_parallel\"", "\"mesh_coordinate\"",
                            "\"logical_shape\"", "\"parallel_conf\"", "\"device_tag\": \"cpu\"",
                            "\"data_type\": \"kFloat\"", "\"elem_cnt\": \"15\""}) {
    EXPECT_THAT(json, HasSubstr(field));
  }
  EXPECT_THAT(json, Not(HasSubstr("rankSlice")));
  EXPECT_THAT(json, StartsWith("{\n"));
  oneflow::TensorSliceViewProto proto;
  ASSERT_TRUE(io::FromJson(json, &proto).ok());
  ASSERT_EQ(proto.rank_slice_size(), 4);
  EXPECT_EQ(proto.rank_slice(3).range(0).begin(), 5);
  EXPECT_EQ(proto.rank_slice(3).range(1).end(), 6);
  EXPECT_EQ(proto.nd_sbp().sbp_parallel(1).split_parallel().axis(), 1);
}

TEST(RunSlicesTest, TextProtoOutput) {
  const std::string text =
      RunSlicesOk(Slices("10,6", "cpu:0-3 [2,2]", "(S(0),S(1))", "textproto"));
  EXPECT_THAT(text, HasSubstr("rank_slice {\n"));
  EXPECT_THAT(text, HasSubstr("split_parallel {\n"));
  oneflow::TensorSliceViewProto proto;
  ASSERT_TRUE(io::FromTextProto(text, &proto).ok());
  ASSERT_EQ(proto.rank_slice_size(), 4);
  EXPECT_EQ(proto.rank_slice(2).mesh_coordinate(0), 1);
  EXPECT_EQ(proto.rank_slice(2).elem_cnt(), 15);
}

TEST(RunSlicesTest, Errors) {
  ExpectError(RunSlices(Slices("", "cpu:0-3", "S(0)")), "--shape");
  ExpectError(RunSlices(Slices("10,6", "", "S(0)")), "--placement");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3", "")), "--nd_sbp");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3", "S(0)", "table")), "table");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3", "S(0)", "dot")), "text|json|textproto");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3 [2,2]", "S(-1)")), "S(-1)");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3 [2,2]", "(S(0), Q)")), "Q");
  ExpectError(RunSlices(Slices("10,0", "cpu:0-3", "S(0)")), "extent 0");
  ExpectError(RunSlices(Slices("4294967296,4294967296", "cpu:0-3", "S(0)")),
              "4294967296,4294967296");
  ExpectError(RunSlices(Slices("2305843009213693952", "cpu:0-3", "S(0)")), "overflows");
  ExpectError(RunSlices(Slices("10,6", "tpu:0-3", "S(0)")), "tpu");
  ExpectError(RunSlices(Slices("10,6", "cpu:3-1", "S(0)")), "3-1");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3 [2,3]", "S(0)")), "[2,3]");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3 [2,2]", "(S(0))")), "(S(0))");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3", "S(2)")), "S(2)");
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3", R"({"sbp_parallel":[{"bogus":{}}]})")),
              "JSON");
  ExpectError(RunSlices(Slices("10,6", R"({"device_tag":"cpu","device_name":["1:0-3"]})",
                               "S(0)")),
              "1:0-3", absl::StatusCode::kUnimplemented);
  SlicesOptions o = Slices("10,6", "cpu:0-3", "S(0)");
  o.dtype = "f128";
  ExpectError(RunSlices(o), "f128");
}

// Truncated JSON gives a one-line error (protobuf's context lines dropped).
TEST(RunSlicesTest, TruncatedJsonErrorIsOneLine) {
  ExpectError(RunSlices(Slices("10,6", "cpu:0-3", "{")), "JSON");
  ExpectError(RunSlices(Slices("10,6", R"({"device_tag":"cpu")", "S(0)")), "JSON");
}

// ------------------------------------------------------------------- parse

TEST(RunParseTest, HelpExampleGolden) {
  ParseOptions o;
  o.positional = {"(S(0),B)", "cuda:0-7 [2,4]"};
  absl::StatusOr<std::string> out = RunParse(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "nd_sbp:    (S(0), B)   (long form S(0),B, 2 mesh axes)\n"
            "placement: cuda:0-7 [2,4]   (8 ranks, hierarchy [2,4])\n");
}

TEST(RunParseTest, AllFlags) {
  const ParseOptions o{/*sbp=*/" S(1) ",       /*nd_sbp=*/"S(0)",
                      /*placement=*/"cpu:3,1", /*shape=*/"(10, 6)",
                      /*dtype=*/"bfloat16",    /*positional=*/{}};
  absl::StatusOr<std::string> out = RunParse(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "sbp:       S(1)\n"
            "nd_sbp:    (S(0))   (long form S(0), 1 mesh axis)\n"
            "placement: cpu:1,3   (2 ranks, hierarchy [2])\n"
            "shape:     [10,6]   (rank 2, 60 elements)\n"
            "dtype:     bf16   (2 bytes)\n");
}

TEST(RunParseTest, PositionalValuesAreClassifiedByForm) {
  ParseOptions o;
  o.positional = {"10,6", "f32", "cpu:0-3 [4]", "S(0),B"};
  absl::StatusOr<std::string> out = RunParse(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("nd_sbp:    (S(0), B)   "));
  EXPECT_THAT(*out, HasSubstr("placement: cpu:0-3   (4 ranks, hierarchy [4])\n"));
  EXPECT_THAT(*out, HasSubstr("shape:     [10,6]   "));
  EXPECT_THAT(*out, HasSubstr("dtype:     f32   (4 bytes)\n"));

  o.positional = {R"({"sbp_parallel":[{"split_parallel":{"axis":"1"}}]})",
                  R"({"device_tag":"cuda","device_name":["0:0-1"]})", "[4]"};
  out = RunParse(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("nd_sbp:    (S(1))   "));
  EXPECT_THAT(*out, HasSubstr("placement: cuda:0-1   "));
  EXPECT_THAT(*out, HasSubstr("shape:     [4]   (rank 1, 4 elements)\n"));

  o.positional = {"sbp_parallel { split_parallel { axis: 2 } }",
                  R"(device_tag: "cpu" device_name: "0:0-3")"};
  out = RunParse(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("nd_sbp:    (S(2))   "));
  EXPECT_THAT(*out, HasSubstr("placement: cpu:0-3   "));
}

// A 1-entry positional nd_sbp also prints as a plain SBP.
TEST(RunParseTest, OneEntryPositionalNdSbpAlsoPrintsAsSbp) {
  ParseOptions o;
  o.positional = {"S(1)"};
  absl::StatusOr<std::string> out = RunParse(o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("sbp:       S(1)\n"));
  EXPECT_THAT(*out, HasSubstr("nd_sbp:    (S(1))"));
}

TEST(RunParseTest, JsonAndTextProtoOutput) {
  ParseOptions o;
  o.positional = {"(S(0),B)", "cuda:0-7 [2,4]", "10,6", "f16"};
  o.format = "json";
  absl::StatusOr<std::string> json = RunParse(o);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"nd_sbp_str\": \"(S(0), B)\""));
  EXPECT_THAT(*json, HasSubstr("\"split_parallel\""));
  EXPECT_THAT(*json, HasSubstr("\"parallel_conf\""));
  EXPECT_THAT(*json, HasSubstr("\"data_type\": \"kFloat16\""));
  oneflow::ParsedValues values;
  ASSERT_TRUE(io::FromJson(*json, &values).ok());
  EXPECT_EQ(values.placement_str(), "cuda:0-7 [2,4]");
  EXPECT_EQ(values.shape_str(), "[10,6]");
  EXPECT_EQ(values.nd_sbp().sbp_parallel_size(), 2);
  EXPECT_FALSE(values.has_sbp());

  o.format = "textproto";
  absl::StatusOr<std::string> text = RunParse(o);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("nd_sbp_str: \"(S(0), B)\"\n"));
  oneflow::ParsedValues from_text;
  ASSERT_TRUE(io::FromTextProto(*text, &from_text).ok());
  EXPECT_EQ(from_text.SerializeAsString(), values.SerializeAsString());
}

// One field set, the rest left out.
ParseOptions Only(std::optional<std::string> ParseOptions::*field, const std::string& v) {
  ParseOptions o;
  (o.*field).emplace(v);
  return o;
}

ParseOptions Positional(const std::string& v, const std::string& format = "text") {
  ParseOptions o;
  o.positional.push_back(v);
  o.format = format;
  return o;
}

TEST(RunParseTest, Errors) {
  ExpectError(RunParse(ParseOptions()), "nothing to parse");
  ExpectError(RunParse(Only(&ParseOptions::sbp, "Q")), "'Q'");
  ExpectError(RunParse(Only(&ParseOptions::sbp, "S(-1)")), "S(-1)");
  ExpectError(RunParse(Only(&ParseOptions::nd_sbp, "()")), "()");
  ExpectError(RunParse(Only(&ParseOptions::placement, "cpu:")), "cpu:");
  ExpectError(RunParse(Only(&ParseOptions::shape, "0")), "extent 0");
  ExpectError(RunParse(Only(&ParseOptions::dtype, "f128")), "f128");
  ExpectError(RunParse(Positional("cpu:3-1")), "3-1");
  ExpectError(RunParse(Positional(R"({"sbp_parallel":[{"split_parallel":{"axis":"-1"}}]})")),
              "-1");
  ExpectError(RunParse(Positional("B", "dot")), "dot");
}

// ---------------------------------------------------------- format helpers

TEST(OutputFormatTest, Parse) {
  const char kAll[] = "text|json|textproto|table|dot";
  EXPECT_EQ(*ParseOutputFormat("text", kAll), OutputFormat::kText);
  EXPECT_EQ(*ParseOutputFormat("json", kAll), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("textproto", kAll), OutputFormat::kTextProto);
  EXPECT_EQ(*ParseOutputFormat("table", kAll), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("dot", kAll), OutputFormat::kDot);
  for (const char* bad : {"table", "JSON", "", "tex", "text|json"}) {
    absl::StatusOr<OutputFormat> f = ParseOutputFormat(bad, "text|json");
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_THAT(f, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(f.status().message()), HasSubstr("'" + std::string(bad) + "'"));
    EXPECT_THAT(std::string(f.status().message()), HasSubstr("text|json"));
  }
}

TEST(OutputFormatTest, Render) {
  oneflow::NdSbp proto;
  proto.add_sbp_parallel()->mutable_broadcast_parallel();
  EXPECT_EQ(Render(OutputFormat::kText, proto, "hello\n"), "hello\n");
  const std::string json = Render(OutputFormat::kJson, proto, "hello\n");
  EXPECT_EQ(json, io::ToJson(proto, /*pretty=*/true) + "\n");
  EXPECT_THAT(json, HasSubstr("\"broadcast_parallel\": {}"));
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 7);
  EXPECT_EQ(Render(OutputFormat::kTextProto, proto, "hello\n"),
            "sbp_parallel {\n  broadcast_parallel {\n  }\n}\n");
}

}  // namespace
}  // namespace oneflow_sbp::cli
