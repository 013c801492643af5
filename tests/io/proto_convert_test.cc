// Value <-> proto <-> JSON <-> text proto for SbpParallel, NdSbp, Placement
// (ParallelConf), Shape and DataType; decoding of command-line values; and
// every malformed message.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/message_decode.h"
#include "io/proto_convert.h"
#include "io/proto_io.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using ::testing::HasSubstr;

using testing::Nd;

using testing::P;

// value -> proto -> JSON -> proto -> value, and the same through text proto.
template <typename Value, typename Proto>
void ExpectRoundTrips(const Value& value) {
  const Proto proto = io::ToProto(value);
  Proto from_json;
  ASSERT_TRUE(io::FromJson(io::ToJson(proto), &from_json).ok()) << io::ToJson(proto);
  Proto from_pretty;
  ASSERT_TRUE(io::FromJson(io::ToJson(proto, /*pretty=*/true), &from_pretty).ok());
  Proto from_text;
  ASSERT_TRUE(io::FromTextProto(io::ToTextProto(proto), &from_text).ok()) << io::ToTextProto(proto);
  for (const Proto* p : {&from_json, &from_pretty, &from_text}) {
    EXPECT_EQ(p->SerializeAsString(), proto.SerializeAsString());
    auto back = io::FromProto(*p);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, value);
  }
}

template <typename T>
void ExpectError(const absl::StatusOr<T>& result, absl::StatusCode code,
                 const std::string& needle) {
  ASSERT_FALSE(result.ok()) << "expected an error naming " << needle;
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(needle));
}

// ------------------------------------------------------------- SbpParallel

TEST(SbpParallelProtoTest, Cases) {
  EXPECT_EQ(io::ToProto(SbpParallel::Split(3)).split_parallel().axis(), 3);
  EXPECT_TRUE(io::ToProto(SbpParallel::Broadcast()).has_broadcast_parallel());
  EXPECT_TRUE(io::ToProto(SbpParallel::PartialSum()).has_partial_sum_parallel());
  EXPECT_EQ(io::ToProto(SbpParallel()).parallel_type_case(),
            oneflow::SbpParallel::PARALLEL_TYPE_NOT_SET);
  EXPECT_TRUE(io::FromProto(oneflow::SbpParallel())->is_unset());
  EXPECT_TRUE(io::ToProto(SbpParallel::PartialMax()).has_partial_max_parallel());
  EXPECT_TRUE(io::ToProto(SbpParallel::PartialMin()).has_partial_min_parallel());
  for (SbpParallel s : {SbpParallel::Split(0), SbpParallel::Split(5), SbpParallel::Broadcast(),
                        SbpParallel::PartialSum(), SbpParallel::PartialMax(),
                        SbpParallel::PartialMin(), SbpParallel()}) {
    ExpectRoundTrips<SbpParallel, oneflow::SbpParallel>(s);
  }
}

TEST(SbpParallelProtoTest, BadSplitAxis) {
  oneflow::SbpParallel proto;
  proto.mutable_split_parallel()->set_axis(-1);
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "-1");
  proto.mutable_split_parallel()->set_axis(300);
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "300");
}

// ------------------------------------------------------------------- NdSbp

TEST(NdSbpProtoTest, JsonAndTextGoldens) {
  const oneflow::NdSbp proto = io::ToProto(Nd("(S(0), B)"));
  EXPECT_EQ(io::ToJson(proto),
            R"({"sbp_parallel":[{"split_parallel":{"axis":"0"}},{"broadcast_parallel":{}}]})");
  EXPECT_EQ(io::ToTextProto(proto),
            "sbp_parallel {\n  split_parallel {\n    axis: 0\n  }\n}\n"
            "sbp_parallel {\n  broadcast_parallel {\n  }\n}\n");
  EXPECT_EQ(io::ToJson(io::ToProto(Nd("P"))), R"({"sbp_parallel":[{"partial_sum_parallel":{}}]})");
  EXPECT_EQ(io::ToJson(io::ToProto(Nd("(P(max), P(max))"))),
            R"({"sbp_parallel":[{"partial_max_parallel":{}},{"partial_max_parallel":{}}]})");
  const std::string pretty = io::ToJson(proto, /*pretty=*/true);
  EXPECT_THAT(pretty, HasSubstr("\"sbp_parallel\": [\n"));
  EXPECT_EQ(pretty.front(), '{');
  EXPECT_EQ(pretty.back(), '}');
}

// Pretty JSON keeps protobuf's layout: a line per field, nested levels
// indented one space deeper.
TEST(NdSbpProtoTest, PrettyJsonIsIndentedOneLinePerField) {
  const std::string pretty = io::ToJson(io::ToProto(Nd("B")), /*pretty=*/true);
  EXPECT_THAT(pretty, ::testing::StartsWith("{\n \"sbp_parallel\": [\n  {\n"));
}

TEST(NdSbpProtoTest, RoundTrips) {
  for (const char* text : {"(S(0), B)", "S(0),B", "(S(0))", "B", "P", "(P, S(2), B)",
                           "(B, B, B, B, B, B, B, S(7))"}) {
    ExpectRoundTrips<NdSbp, oneflow::NdSbp>(Nd(text));
    EXPECT_EQ(io::FromProto(io::ToProto(Nd(text)))->ToString(), Nd(text).ToString());
  }
  const NdSbp with_unset{SbpParallel::Split(1), SbpParallel()};
  ExpectRoundTrips<NdSbp, oneflow::NdSbp>(with_unset);
  EXPECT_EQ(io::ToProto(with_unset).sbp_parallel_size(), 2);
}

TEST(NdSbpProtoTest, BadMessages) {
  oneflow::NdSbp proto = io::ToProto(Nd("(B, S(0))"));
  proto.mutable_sbp_parallel(1)->mutable_split_parallel()->set_axis(-1);
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "sbp_parallel[1]");
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "-1");
  oneflow::NdSbp nine;
  for (int i = 0; i < 9; ++i) nine.add_sbp_parallel()->mutable_broadcast_parallel();
  ExpectError(io::FromProto(nine), absl::StatusCode::kInvalidArgument, "9");
}

// ---------------------------------------------------------- Shape, DataType

TEST(ShapeProtoTest, RoundTripsAndErrors) {
  EXPECT_EQ(io::ToJson(io::ToProto(Shape{10, 6})), R"({"dim":["10","6"]})");
  EXPECT_EQ(io::ToTextProto(io::ToProto(Shape{10, 6})), "dim: 10\ndim: 6\n");
  for (const Shape& s : {Shape(), Shape{1}, Shape{10, 6}, Shape{2, 3, 4, 5}}) {
    ExpectRoundTrips<Shape, oneflow::ShapeProto>(s);
  }
  oneflow::ShapeProto proto;
  proto.add_dim(4);
  proto.add_dim(0);
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "extent 0");
  proto.set_dim(1, -3);
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "extent -3");
  proto.set_dim(0, 4294967296);
  proto.set_dim(1, 4294967296);
  ExpectError(io::FromProto(proto), absl::StatusCode::kInvalidArgument, "overflows int64");
}

TEST(DataTypeProtoTest, MappingAndErrors) {
  struct Pair {
    DataType dtype;
    oneflow::DataType proto;
  };
  const Pair kPairs[] = {
      {DataType::kFloat16, oneflow::kFloat16}, {DataType::kBFloat16, oneflow::kBFloat16},
      {DataType::kFloat32, oneflow::kFloat},   {DataType::kFloat64, oneflow::kDouble},
      {DataType::kInt8, oneflow::kInt8},       {DataType::kInt32, oneflow::kInt32},
      {DataType::kInt64, oneflow::kInt64},     {DataType::kUInt8, oneflow::kUInt8},
      {DataType::kBool, oneflow::kBool},
  };
  for (const Pair& p : kPairs) {
    EXPECT_EQ(io::ToProto(p.dtype), p.proto) << DataTypeName(p.dtype);
    absl::StatusOr<DataType> back = io::FromProto(p.proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, p.dtype);
  }
  ExpectError(io::FromProto(oneflow::kChar), absl::StatusCode::kInvalidArgument, "kChar");
  ExpectError(io::FromProto(oneflow::kInvalidDataType), absl::StatusCode::kInvalidArgument,
              "kInvalidDataType");
  ExpectError(io::FromProto(static_cast<oneflow::DataType>(8)),
              absl::StatusCode::kInvalidArgument, "(8)");
}

// ---------------------------------------------------- Placement/ParallelConf

TEST(ParallelConfTest, Goldens) {
  EXPECT_EQ(io::ToJson(io::ToProto(P("cuda:0-7 [2,4]"))),
            R"({"device_name":["0:0-7"],"device_tag":"cuda","hierarchy":{"dim":["2","4"]}})");
  EXPECT_EQ(io::ToJson(io::ToProto(P("cpu:0,2,4,6 [2,2]"))),
            R"({"device_name":["0:0","0:2","0:4","0:6"],"device_tag":"cpu",)"
            R"("hierarchy":{"dim":["2","2"]}})");
  EXPECT_EQ(io::ToJson(io::ToProto(P("cpu:10,8,0-3"))),
            R"({"device_name":["0:0-3","0:8","0:10"],"device_tag":"cpu",)"
            R"("hierarchy":{"dim":["6"]}})");
  EXPECT_EQ(io::ToTextProto(io::ToProto(P("cpu:0-3"))),
            "device_name: \"0:0-3\"\ndevice_tag: \"cpu\"\nhierarchy {\n  dim: 4\n}\n");
}

TEST(ParallelConfTest, RoundTrips) {
  for (const char* text : {"cpu:0-3", "cuda:0-7 [2,4]", "cpu:0,2,4,6 [2,2]", "cpu:3,1",
                           "cpu:0-3 [4]", "cpu:0-3,8,10", "cpu:5", "cuda:0-11 [2,3,2]"}) {
    ExpectRoundTrips<Placement, oneflow::ParallelConf>(P(text));
    EXPECT_EQ(io::FromProto(io::ToProto(P(text)))->ToString(), P(text).ToString());
  }
}

TEST(ParallelConfTest, AcceptedForms) {
  oneflow::ParallelConf conf;
  conf.set_device_tag("gpu");
  conf.add_device_name("@3:0");
  conf.add_device_name("@1:0");
  EXPECT_EQ(io::FromProto(conf)->ToString(), "cuda:1,3");
  conf.Clear();
  conf.set_device_tag("cpu");
  conf.add_device_name("0:0-1");
  conf.add_device_name("0:4-5");
  EXPECT_EQ(io::FromProto(conf)->ToString(), "cpu:0-1,4-5");  // no hierarchy: [N]
  conf.mutable_hierarchy();                               // empty hierarchy: [N]
  EXPECT_THAT(io::FromProto(conf)->hierarchy(), ::testing::ElementsAre(4));
  conf.mutable_hierarchy()->add_dim(2);
  conf.mutable_hierarchy()->add_dim(2);
  EXPECT_EQ(io::FromProto(conf)->ToString(), "cpu:0-1,4-5 [2,2]");
}

oneflow::ParallelConf Conf(const std::string& tag, const std::vector<std::string>& names,
                           const std::vector<int64_t>& hierarchy = {}) {
  oneflow::ParallelConf conf;
  conf.set_device_tag(tag);
  for (const std::string& n : names) conf.add_device_name(n);
  for (int64_t h : hierarchy) conf.mutable_hierarchy()->add_dim(h);
  return conf;
}

TEST(ParallelConfTest, BadMessages) {
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  ExpectError(io::FromProto(Conf("cpu", {"1:0-3"})), absl::StatusCode::kUnimplemented, "1:0-3");
  ExpectError(io::FromProto(Conf("cpu", {"0:0-3", "2:0"})), absl::StatusCode::kUnimplemented,
              "2:0");
  ExpectError(io::FromProto(Conf("cpu", {"0:3-1"})), kInvalid, "0:3-1");
  ExpectError(io::FromProto(Conf("cpu", {"0:x"})), kInvalid, "'x'");
  ExpectError(io::FromProto(Conf("cpu", {"0"})), kInvalid, "'0'");
  ExpectError(io::FromProto(Conf("cpu", {"0:1-2-3"})), kInvalid, "0:1-2-3");
  ExpectError(io::FromProto(Conf("cpu", {"@-1:0"})), kInvalid, "@-1:0");
  ExpectError(io::FromProto(Conf("tpu", {"0:0-3"})), kInvalid, "tpu");
  ExpectError(io::FromProto(Conf("", {"0:0-3"})), kInvalid, "device_tag");
  ExpectError(io::FromProto(Conf("cpu", {})), kInvalid, "no ranks");
  ExpectError(io::FromProto(Conf("cpu", {"0:0-3", "0:2"})), kInvalid, "rank 2");
  ExpectError(io::FromProto(Conf("cpu", {"0:0-3"}, {3})), kInvalid, "[3]");
  ExpectError(io::FromProto(Conf("cpu", {"0:0-3"}, {2, -2})), kInvalid, "-2");
  ExpectError(io::FromProto(Conf("cpu", {"0:0-3"}, {0, 4})), kInvalid, "extent 0");
}

// A ParallelConf hierarchy whose product overflows int64 is rejected.
TEST(ParallelConfTest, HierarchyProductOverflowIsRejected) {
  ExpectError(io::FromProto(Conf("cpu", {"0:0-3"}, {4, (int64_t{1} << 62) + 1})),
              absl::StatusCode::kInvalidArgument, "4611686018427387905");
}

// --------------------------------------------------- JSON/text proto errors

TEST(ProtoIoTest, MalformedInputIsInvalidArgument) {
  struct Case {
    const char* text;
    bool json;
  };
  const Case kCases[] = {
      {"{", true},
      {"", true},
      {R"({"sbp_parallel":[{"bogus":{}}]})", true},
      {R"({"sbp_parallel": 3})", true},
      {R"({"sbp_parallel":[{"split_parallel":{"axis":"zero"}}]})", true},
      {"sbp_parallel { split_parallel { axis: x } }", false},
      {"sbp_parallel { bogus {} }", false},
      {"sbp_parallel {", false},
      {"sbp_parallel { split_parallel { } }", false},  // required axis missing
  };
  for (const Case& c : kCases) {
    oneflow::NdSbp proto;
    const absl::Status s = c.json ? io::FromJson(c.text, &proto) : io::FromTextProto(c.text, &proto);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << c.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr("oneflow.NdSbp")) << c.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.json ? "JSON" : "text proto"));
  }
  oneflow::NdSbp proto;
  const absl::Status s = io::FromTextProto("sbp_parallel {\n  bogus {}\n}", &proto);
  EXPECT_THAT(std::string(s.message()), HasSubstr("line 2"));
}

// Protobuf's JSON parser adds context lines after its message; errors stay one line.
TEST(ProtoIoTest, JsonErrorMessagesAreOneLine) {
  for (const char* json : {"{", R"({"sbp_parallel":[)", R"({"sbp_parallel":[{"split_parallel":)"}) {
    oneflow::NdSbp proto;
    const absl::Status s = io::FromJson(json, &proto);
    ASSERT_FALSE(s.ok()) << json;
    EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("\n"))) << json;
  }
}

TEST(ProtoIoTest, ParallelConfMissingRequiredDeviceTag) {
  oneflow::ParallelConf conf;
  EXPECT_FALSE(io::FromJson(R"({"device_name":["0:0-3"]})", &conf).ok());
  const absl::Status s = io::FromTextProto(R"(device_name: "0:0-3")", &conf);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(s.message()), HasSubstr("device_tag"));
}

// ------------------------------------------------------- Decode* forms

TEST(DecodeTest, NdSbpAllEncodingsAgree) {
  const NdSbp want = Nd("(S(0), B)");
  for (const std::string& text : std::vector<std::string>{
           "(S(0), B)", "S(0),B", " (S(0),B) ",
        R"({"sbp_parallel":[{"split_parallel":{"axis":"0"}},{"broadcast_parallel":{}}]})",
        "sbp_parallel { split_parallel { axis: 0 } } sbp_parallel { broadcast_parallel {} }",
        io::ToTextProto(io::ToProto(want)), io::ToJson(io::ToProto(want), /*pretty=*/true)}) {
    absl::StatusOr<NdSbp> nd = io::DecodeNdSbp(text);
    ASSERT_TRUE(nd.ok()) << text << ": " << nd.status();
    EXPECT_EQ(*nd, want) << text;
  }
}

TEST(DecodeTest, PlacementAllEncodingsAgree) {
  const Placement want = P("cpu:0-3 [2,2]");
  for (const std::string& text : std::vector<std::string>{
           "cpu:0-3 [2,2]", "cpu:3,2,1,0 [2,2]",
        R"({"device_tag":"cpu","device_name":["0:0-3"],"hierarchy":{"dim":[2,2]}})",
        R"(device_tag: "cpu" device_name: "0:0-3" hierarchy { dim: 2 dim: 2 })",
        R"(device_name: "0:0-1" device_name: "0:2-3" device_tag: "cpu" hierarchy { dim: [2, 2] })",
        R"(hierarchy { dim: 2 dim: 2 } device_tag: "cpu" device_name: "@0:0" device_name: "0:1-3")",
        io::ToTextProto(io::ToProto(want)), io::ToJson(io::ToProto(want), /*pretty=*/true)}) {
    absl::StatusOr<Placement> p = io::DecodePlacement(text);
    ASSERT_TRUE(p.ok()) << text << ": " << p.status();
    EXPECT_EQ(*p, want) << text;
  }
}

TEST(DecodeTest, BadNdSbp) {
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  ExpectError(io::DecodeNdSbp("S(-1)"), kInvalid, "S(-1)");
  ExpectError(io::DecodeNdSbp(""), kInvalid, "''");
  ExpectError(io::DecodeNdSbp("{"), kInvalid, "JSON");
  ExpectError(io::DecodeNdSbp(R"({"sbp_parallel":[{"split_parallel":{"axis":"-1"}}]})"),
              kInvalid, "-1");
  ExpectError(io::DecodeNdSbp(R"({"sbp_parallel":[{"bogus":{}}]})"), kInvalid, "bogus");
  ExpectError(io::DecodeNdSbp("sbp_parallel { split_parallel { axis: -1 } }"), kInvalid,
              "-1");
  ExpectError(io::DecodeNdSbp("sbp_parallel { bogus {} }"), kInvalid, "bogus");
  ExpectError(io::DecodeNdSbp("sbp_parallel {"), kInvalid, "text proto");
}

// An NdSbp message with no entries is as bad as the compact "()".
TEST(DecodeTest, EmptyNdSbpMessageIsRejected) {
  for (const char* text : {"{}", R"({"sbp_parallel":[]})"}) {
    absl::StatusOr<NdSbp> nd = io::DecodeNdSbp(text);
    ASSERT_FALSE(nd.ok()) << text << " decoded as " << nd->ToString();
    EXPECT_THAT(nd, StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST(DecodeTest, BadPlacement) {
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  ExpectError(io::DecodePlacement("cpu:3-1"), kInvalid, "3-1");
  ExpectError(io::DecodePlacement("tpu:0-3"), kInvalid, "tpu");
  ExpectError(io::DecodePlacement("cpu:"), kInvalid, "cpu:");
  ExpectError(io::DecodePlacement(R"({"device_tag":"cpu")"), kInvalid, "JSON");
  ExpectError(io::DecodePlacement(R"({"device_tag":"cpu","device_name":["1:0"]})"),
              absl::StatusCode::kUnimplemented, "1:0");
  ExpectError(io::DecodePlacement(R"(device_tag: "cpu" device_name: "3:0-1")"),
              absl::StatusCode::kUnimplemented, "3:0-1");
  ExpectError(io::DecodePlacement("device_tag: cpu"), kInvalid, "text proto");
  ExpectError(io::DecodePlacement(
                  R"({"device_tag":"cpu","device_name":["0:0-3"],"hierarchy":{"dim":[3]}})"),
              kInvalid, "[3]");
  ExpectError(io::DecodePlacement(R"(device_tag: "cpu" device_name: "0:0-3" hierarchy { dim: 0 })"),
              kInvalid, "extent 0");
}

// ---------------------------------------------------- TensorSliceViewProto

TEST(TensorSliceViewProtoTest, Fields) {
  const Shape shape{10, 6};
  const Placement p = P("cpu:0,2,4,6 [2,2]");
  for (const char* nd_text : {"(S(0), S(1))", "(S(0), P)"}) {
    const NdSbp nd = Nd(nd_text);
    const std::vector<TensorSlice> slices = *AllRankSlices(shape, nd, p);
    const oneflow::TensorSliceViewProto proto =
        io::ToProto(shape, DataType::kFloat64, nd, p, slices);
    EXPECT_EQ(proto.data_type(), oneflow::kDouble);
    EXPECT_EQ(io::FromProto(proto.logical_shape())->ToString(), "[10,6]");
    EXPECT_EQ(*io::FromProto(proto.parallel_conf()), p);
    EXPECT_EQ(*io::FromProto(proto.nd_sbp()), nd);
    ASSERT_EQ(proto.rank_slice_size(), 4);
    const oneflow::RankSliceProto& r = proto.rank_slice(3);
    EXPECT_EQ(r.parallel_id(), 3);
    EXPECT_EQ(r.rank(), 6);
    EXPECT_THAT(r.mesh_coordinate(), ::testing::ElementsAre(1, 1));
    ASSERT_EQ(r.range_size(), 2);
    EXPECT_EQ(r.range(0).begin(), 5);
    EXPECT_EQ(r.range(0).end(), 10);
    EXPECT_EQ(r.elem_cnt(), slices[3].elem_cnt());
    EXPECT_EQ(r.is_partial(), nd.any_partial_sum());
  }
}

}  // namespace
}  // namespace oneflow_sbp
