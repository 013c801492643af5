// Programs for graph-level selection: the JSON schema of docs/PLANNING.md
// (tests/testdata/plan_mlp.json and the example of the docs), the builder,
// --mesh, and every documented error naming its op, tensor or field.
#include <time.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/program.h"
#include "gtest/gtest.h"
#include "io/program_proto.h"
#include "ops/builtin_ops.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::graph {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const OpRegistry& Ops() { return ops::BuiltinOpRegistry(); }

std::string ReadTestdata(const std::string& name) {
  std::ifstream f("tests/testdata/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The example of docs/PLANNING.md, word for word.
constexpr char kDocsExample[] = R"j({"placement": "cpu:0-3 [2,2]",
 "tensors": [{"name": "x",  "shape": [64, 256],  "dtype": "f32", "nd_sbp": "(S(0),B)"},
             {"name": "w1", "shape": [256, 1024], "dtype": "f32"}],
 "ops": [{"op": "matmul", "inputs": ["x", "w1"], "outputs": ["h"], "attrs": {"transpose_b": false}}]})j";

TEST(ProgramJson, DocsExample) {
  absl::StatusOr<Program> p = io::ProgramFromJson(kDocsExample, Ops());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->placement().ToString(), "cpu:0-3 [2,2]");
  ASSERT_EQ(p->tensors().size(), 3u);
  EXPECT_EQ(p->tensors()[0].role, TensorRole::kFixed);
  EXPECT_EQ(p->tensors()[0].nd_sbp.ToString(), "(S(0), B)");
  EXPECT_EQ(p->tensors()[1].role, TensorRole::kFree);
  const ProgramTensor& h = p->tensors()[2];
  EXPECT_EQ(h.name, "h");
  EXPECT_EQ(h.role, TensorRole::kActivation);
  EXPECT_EQ(h.desc.ToString(), "f32[64,1024]");  // from matmul's shape function
  EXPECT_EQ(h.producer, 0);
  ASSERT_EQ(p->ops().size(), 1u);
  EXPECT_EQ(p->ops()[0].label, "op 0 (matmul)");
  EXPECT_EQ(p->ops()[0].call->ToString(), "matmul(a_0, b_0 -> out_0; alpha=1 transpose_a=false transpose_b=false)");
  // No output listed: h, unread, is the output, with no required layout.
  ASSERT_EQ(p->outputs().size(), 1u);
  EXPECT_EQ(p->outputs()[0].tensor, 2);
  EXPECT_FALSE(p->outputs()[0].nd_sbp.has_value());
  EXPECT_EQ(p->FreeTensors(), (std::vector<int>{1}));
}

TEST(ProgramJson, TestdataMlp) {
  const std::string json = ReadTestdata("plan_mlp.json");
  ASSERT_FALSE(json.empty());
  absl::StatusOr<Program> p = io::ProgramFromJson(json, Ops());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ops().size(), 3u);
  EXPECT_EQ(p->ops()[2].label, "fc2");
  ASSERT_EQ(p->outputs().size(), 1u);
  EXPECT_EQ(p->outputs()[0].nd_sbp->ToString(), "(S(0), B)");
  EXPECT_EQ(p->tensors()[p->FindTensor("a")].uses.size(), 1u);
  EXPECT_EQ(p->tensors()[p->FindTensor("a")].uses[0].op, 2);
}

TEST(ProgramJson, AttributesOfEveryKind) {
  absl::StatusOr<Program> p = io::ProgramFromJson(R"j({"placement": "cpu:0-1",
    "tensors": [{"name": "x", "shape": [4, 6, 8], "nd_sbp": "S(0)"}],
    "ops": [{"op": "transpose", "inputs": ["x"], "outputs": ["t"], "attrs": {"perm": [0, 2, 1]}},
            {"op": "scalar_mul", "inputs": ["t"], "outputs": ["s"],
             "attrs": {"float_operand": 0.5, "has_float_operand": true}},
            {"op": "reduce_sum", "inputs": ["s"], "outputs": ["r"],
             "attrs": {"axis": "1,2", "keepdims": false}},
            {"op": "cast", "inputs": ["r"], "outputs": ["c"], "attrs": {"dtype": "f16"}}]})j",
                                              Ops());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->tensors()[p->FindTensor("t")].desc.ToString(), "f32[4,8,6]");
  EXPECT_EQ(p->tensors()[p->FindTensor("c")].desc.ToString(), "f16[4]");
}

TEST(ProgramJson, OptionalInputsAndUnnamedOutputs) {
  absl::StatusOr<Program> p = io::ProgramFromJson(R"j({"placement": "cpu:0-3 [2,2]",
    "tensors": [{"name": "x", "shape": [8, 16], "nd_sbp": "(S(0),B)"}],
    "ops": [{"op": "rms_norm", "name": "norm", "inputs": ["x"], "outputs": ["y"],
             "attrs": {"normalized_shape": [16]}}]})j",
                                              Ops());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ops()[0].call->num_inputs(), 1);  // weight? left off
  EXPECT_GE(p->FindTensor("norm:inv_rms_0"), 0);
  // Only the named unread output is a default program output.
  ASSERT_EQ(p->outputs().size(), 1u);
  EXPECT_EQ(p->tensors()[p->outputs()[0].tensor].name, "y");
}

// "parameter" flags a marked weight a training step trains; "training"
// is read by the tool, not the builder.
TEST(ProgramJson, MarkedParameterAndTrainingField) {
  constexpr char kJson[] = R"j({"placement": "cpu:0-1", "training": true,
    "tensors": [{"name": "x", "shape": [4, 8], "nd_sbp": "(B)"},
                {"name": "w", "shape": [8, 6], "nd_sbp": "(S(1))", "parameter": true}],
    "ops": [{"op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}]})j";
  absl::StatusOr<Program> p = io::ProgramFromJson(kJson, Ops());
  ASSERT_TRUE(p.ok()) << p.status();
  const ProgramTensor& w = p->tensors()[p->FindTensor("w")];
  EXPECT_EQ(w.role, TensorRole::kFixed);
  EXPECT_TRUE(w.parameter);
  EXPECT_FALSE(p->tensors()[p->FindTensor("x")].parameter);
  absl::StatusOr<oneflow::ProgramProto> proto = io::ProgramProtoFromJson(kJson);
  ASSERT_TRUE(proto.ok()) << proto.status();
  EXPECT_TRUE(proto->training());
}

TEST(ProgramJson, MeshReplacesTheHierarchy) {
  absl::StatusOr<Program> same = io::ProgramFromJson(kDocsExample, Ops(), {4});
  ASSERT_FALSE(same.ok());  // (S(0),B) has two entries for a 1-axis mesh
  EXPECT_THAT(std::string(same.status().message()), HasSubstr("tensor 'x'"));
  const std::string one_d = R"j({"placement": "cpu:0-3 [2,2]",
    "tensors": [{"name": "x", "shape": [64, 256]}, {"name": "w", "shape": [256, 8]}],
    "ops": [{"op": "matmul", "inputs": ["x", "w"], "outputs": ["h"]}]})j";
  absl::StatusOr<Program> four = io::ProgramFromJson(one_d, Ops(), {4});
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->placement().ToString(), "cpu:0-3");
  absl::StatusOr<Program> eight = io::ProgramFromJson(one_d, Ops(), {2, 4});
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->placement().ToString(), "cpu:0-7 [2,4]");
}

struct BadCase {
  const char* name;
  std::string json;
  std::vector<std::string> mentions;
};

std::string WithOps(const std::string& ops, const std::string& extra = "") {
  return R"j({"placement": "cpu:0-3 [2,2]",
    "tensors": [{"name": "x", "shape": [64, 256], "nd_sbp": "(S(0),B)"},
                {"name": "w", "shape": [256, 32]}],
    "ops": [)j" + ops + "]" + extra + "}";
}

TEST(ProgramJson, ErrorsNameTheirOpTensorOrField) {
  const std::vector<BadCase> cases = {
      {"unknown op", WithOps(R"j({"op": "matmull", "inputs": ["x", "w"], "outputs": ["h"]})j"),
       {"op 0 (matmull)", "unknown op 'matmull'"}},
      {"used before defined",
       WithOps(R"j({"op": "relu", "name": "r", "inputs": ["h"], "outputs": ["y"]},
                  {"op": "matmul", "inputs": ["x", "w"], "outputs": ["h"]})j"),
       {"r: input 0 'h' is not defined"}},
      {"shape error", WithOps(R"j({"op": "matmul", "name": "mm", "inputs": ["w", "x"], "outputs": ["h"]})j"),
       {"mm:", "matmul"}},
      {"attribute kind",
       WithOps(R"j({"op": "matmul", "name": "mm", "inputs": ["x", "w"], "outputs": ["h"],
                   "attrs": {"transpose_b": 3}})j"),
       {"mm: attribute 'transpose_b': expected bool, got 3"}},
      {"undeclared attribute",
       WithOps(R"j({"op": "matmul", "name": "mm", "inputs": ["x", "w"], "outputs": ["h"],
                   "attrs": {"transpose": true}})j"),
       {"mm:", "transpose"}},
      {"too many outputs",
       WithOps(R"j({"op": "relu", "name": "r", "inputs": ["x"], "outputs": ["y", "z"]})j"),
       {"r: names 2 outputs but relu has 1"}},
      {"redefined tensor", WithOps(R"j({"op": "relu", "name": "r", "inputs": ["x"], "outputs": ["w"]})j"),
       {"r: output 'w' is already defined"}},
      {"no op type", WithOps(R"j({"inputs": ["x"], "outputs": ["y"]})j"), {"op 0 ()", "\"op\""}},
      {"unknown output",
       WithOps(R"j({"op": "relu", "inputs": ["x"], "outputs": ["y"]})j", R"j(, "outputs": [{"name": "q"}])j"),
       {"output 'q' is not a tensor"}},
      {"bad output layout",
       WithOps(R"j({"op": "relu", "inputs": ["x"], "outputs": ["y"]})j",
               R"j(, "outputs": [{"name": "y", "nd_sbp": "(S(5),B)"}])j"),
       {"output 'y'", "S(5)"}},
      {"no ops", R"j({"placement": "cpu:0-1", "tensors": [], "ops": []})j", {"no ops"}},
      {"no placement", R"j({"ops": []})j", {"placement", "missing"}},
      {"bad placement", R"j({"placement": "tpu:0-3", "ops": []})j", {"placement"}},
      {"unknown field", R"j({"placement": "cpu:0-1", "opz": []})j", {"opz"}},
      {"bad nd_sbp", R"j({"placement": "cpu:0-3 [2,2]",
          "tensors": [{"name": "x", "shape": [4], "nd_sbp": "(S(0),Q)"}], "ops": []})j",
       {"tensor 'x'", "nd_sbp"}},
      {"nd_sbp length", R"j({"placement": "cpu:0-3 [2,2]",
          "tensors": [{"name": "x", "shape": [4], "nd_sbp": "S(0)"}], "ops": []})j",
       {"tensor 'x'"}},
      {"split beyond rank", R"j({"placement": "cpu:0-3 [2,2]",
          "tensors": [{"name": "x", "shape": [4], "nd_sbp": "(S(1),B)"}], "ops": []})j",
       {"tensor 'x'", "S(1)"}},
      {"bad dtype", R"j({"placement": "cpu:0-1",
          "tensors": [{"name": "x", "shape": [4], "dtype": "f33"}], "ops": []})j",
       {"tensor 'x'", "dtype", "f33"}},
      {"negative dim", R"j({"placement": "cpu:0-1",
          "tensors": [{"name": "x", "shape": [-4]}], "ops": []})j",
       {"tensor 'x'", "shape"}},
      {"nameless tensor", R"j({"placement": "cpu:0-1", "tensors": [{"shape": [4]}], "ops": []})j",
       {"tensors[0]", "name"}},
      {"duplicate tensor", R"j({"placement": "cpu:0-1",
          "tensors": [{"name": "x", "shape": [4]}, {"name": "x", "shape": [4]}], "ops": []})j",
       {"tensor 'x' is defined twice"}},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<Program> p = io::ProgramFromJson(c.json, Ops());
    ASSERT_FALSE(p.ok()) << c.name;
    EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument)) << c.name;
    for (const std::string& m : c.mentions) {
      EXPECT_THAT(std::string(p.status().message()), HasSubstr(m)) << c.name;
    }
  }
}

// The reader is strict JSON (issue 24): protobuf's parser alone took
// single quotes and trailing commas, and read [[64, 256]] as [64, 256].
TEST(ProgramJson, OnlyStrictJsonIsRead) {
  const std::string good = R"j({"placement": "cpu:0-1",
    "tensors": [{"name": "x", "shape": [8, 4]}],
    "ops": [{"op": "relu", "name": "r", "inputs": ["x"], "outputs": ["y"]}]})j";
  ASSERT_TRUE(io::ProgramFromJson(good, Ops()).ok());
  const std::vector<BadCase> cases = {
      {"single-quoted key", R"j({'placement': "cpu:0-1", "ops": []})j", {"double-quoted key"}},
      {"single-quoted value", R"j({"placement": 'cpu:0-1', "ops": []})j", {"expected a value"}},
      {"trailing comma in an array",
       R"j({"placement": "cpu:0-1", "tensors": [{"name": "x", "shape": [8, 4,]}], "ops": []})j",
       {"expected a value"}},
      {"trailing comma in an object", R"j({"placement": "cpu:0-1", "ops": [],})j",
       {"double-quoted key"}},
      {"nested array as a shape",
       R"j({"placement": "cpu:0-1", "tensors": [{"name": "x", "shape": [[8, 4]]}], "ops": []})j",
       {"an element of shape, not an array"}},
      {"nested array as inputs",
       R"j({"placement": "cpu:0-1", "tensors": [{"name": "x", "shape": [8]}],
           "ops": [{"op": "relu", "inputs": [["x"]], "outputs": ["y"]}]})j",
       {"an element of inputs, not an array"}},
      {"unquoted key", R"j({placement: "cpu:0-1", "ops": []})j", {"double-quoted key"}},
      {"comment", "{\"placement\": \"cpu:0-1\", /* c */ \"ops\": []}", {"double-quoted key"}},
      {"raw newline in a string", "{\"placement\": \"cpu:0-1\n\", \"ops\": []}",
       {"control character"}},
      {"bad escape", R"j({"placement": "cpu:0-1\q", "ops": []})j", {"an escape"}},
      {"leading zero", R"j({"placement": "cpu:0-1", "tensors": [{"name": "x", "shape": [08]}]})j",
       {"byte"}},
      {"text after the object", R"j({"placement": "cpu:0-1", "ops": []} x)j", {"end of input"}},
      {"unclosed", R"j({"placement": "cpu:0-1", "ops": [)j", {"the end of input"}},
      {"nesting bomb",
       R"j({"ops": [{"attrs": {"a": )j" + std::string(5000, '[') + std::string(5000, ']') + "}}]}",
       // The depth bound (32 levels, checked first in linear time) refuses
       // it before the strict reader's own 100-level limit.
       {"nested more than 32 levels deep"}},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<oneflow::ProgramProto> p = io::ProgramProtoFromJson(c.json);
    ASSERT_FALSE(p.ok()) << c.name;
    EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument)) << c.name;
    EXPECT_THAT(std::string(p.status().message()), HasSubstr("malformed JSON")) << c.name;
    for (const std::string& m : c.mentions) {
      EXPECT_THAT(std::string(p.status().message()), HasSubstr(m)) << c.name;
    }
  }
  // Attribute values are google.protobuf.Value: free-form JSON, where an
  // array of arrays is a list of lists.
  EXPECT_TRUE(io::ProgramProtoFromJson(R"j({"placement": "cpu:0-1", "ops": [{"op": "relu",
      "attrs": {"table": [[1, 2], [3]]}}]})j").ok());
}

// Names from the program are echoed escaped and cut (issue 24): a NUL,
// a newline or an ANSI escape cannot cut the message or drive a terminal.
TEST(ProgramJson, NamesInMessagesAreEscapedAndCut) {
  const std::string evil = R"j({"placement": "cpu:0-1",
    "tensors": [{"name": "x", "shape": [8]}],
    "ops": [{"op": "relu", "name": "r\u001b[31m\u0000", "inputs": ["h\n\u009b2J"],
             "outputs": ["y"]}]})j";
  absl::StatusOr<Program> p = io::ProgramFromJson(evil, Ops());
  ASSERT_FALSE(p.ok());
  const std::string m(p.status().message());
  EXPECT_THAT(m, HasSubstr("r\\x1b[31m\\x00: input 0 'h\\n\\u009b2J' is not defined"));
  for (char c : m) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << m;
  const std::string long_name(1000, 'w');
  const std::string json = R"j({"placement": "cpu:0-1", "tensors": [{"name": ")j" + long_name +
                           R"j(", "shape": [4]}, {"name": ")j" + long_name +
                           R"j(", "shape": [4]}], "ops": []})j";
  absl::StatusOr<Program> twice = io::ProgramFromJson(json, Ops());
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(std::string(twice.status().message()),
              HasSubstr("tensor '" + std::string(64, 'w') + "...' (1000 characters) is defined twice"));
  EXPECT_LT(twice.status().message().size(), 200u);
}

TEST(ProgramBuilder, BuildsInCode) {
  ProgramBuilder b(Ops(), *Placement::Parse("cpu:0-1"));
  ASSERT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[8,4]"), *NdSbp::Parse("S(0)")).ok());
  ASSERT_TRUE(b.AddParameter("w", *TensorDesc::Parse("f32[4,4]")).ok());
  ASSERT_TRUE(b.AddOp("matmul", {"x", "w"}, {"h"}, AttrMap()).ok());
  ASSERT_TRUE(b.AddOp("add_n", {"h", "h"}, {"y"}, AttrMap(), "twice").ok());
  ASSERT_TRUE(b.MarkOutput("y", NdSbp::Parse("B").value()).ok());
  EXPECT_THAT(b.MarkOutput("y", std::nullopt), StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<Program> p = std::move(b).Build();
  ASSERT_TRUE(p.ok()) << p.status();
  // A tensor read twice by one op has two uses.
  EXPECT_EQ(p->tensors()[p->FindTensor("h")].uses.size(), 2u);
  EXPECT_EQ(p->ops()[1].label, "twice");
}

TEST(ProgramBuilder, DuplicateLabels) {
  ProgramBuilder b(Ops(), *Placement::Parse("cpu:0-1"));
  ASSERT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[8]"), *NdSbp::Parse("S(0)")).ok());
  ASSERT_TRUE(b.AddOp("relu", {"x"}, {"y"}, AttrMap(), "act").ok());
  EXPECT_THAT(std::string(b.AddOp("relu", {"y"}, {"z"}, AttrMap(), "act").message()),
              AllOf(HasSubstr("act"), HasSubstr("another op has this name")));
}

// Issue 24 (docs/RELIABILITY.md, "Issue 24 probe"): bounded work and memory.

// CPU time of this thread, so a loaded CI machine does not fail a bound on
// work; the bound catches quadratic blow-ups, not speed.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kSlowdown = 10;
#else
constexpr double kSlowdown = 1;
#endif

// A chain of `n` named relu ops, every one a marked output.
std::string ReluChain(int n) {
  std::string ops, outputs;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&ops, i ? "," : "", R"({"op":"relu","name":"r)", i, R"(","inputs":["t)", i,
                    R"("],"outputs":["t)", i + 1, R"("]})");
    absl::StrAppend(&outputs, i ? "," : "", R"({"name":"t)", i + 1, R"("})");
  }
  return absl::StrCat(R"j({"placement":"cpu:0-3 [2,2]","tensors":[{"name":"t0","shape":[8,8],)j",
                      R"j("nd_sbp":"(S(0),B)"}],"ops":[)j", ops, R"j(],"outputs":[)j", outputs,
                      "]}");
}

// CPU seconds to load ReluChain(n).
double LoadSeconds(int n) {
  const std::string json = ReluChain(n);
  const double start = ThreadCpuSeconds();
  absl::StatusOr<Program> p = io::ProgramFromJson(json, Ops(), {});
  const double cpu = ThreadCpuSeconds() - start;
  EXPECT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ops().size(), static_cast<size_t>(n));
  EXPECT_EQ(p->outputs().size(), static_cast<size_t>(n));
  return cpu;
}

TEST(ProgramLimits, FortyThousandOpsLoadInLinearTime) {
  // Duplicate labels and outputs were found by scanning every earlier op
  // and output: loading was quadratic in the op count. Four times the ops
  // must take well under 16 times as long (linear: ~4).
  const double small = LoadSeconds(10000);
  const double large = LoadSeconds(40000);
  std::printf("load: 10,000 ops %.3f s, 40,000 ops %.3f s of CPU\n", small, large);
  EXPECT_LT(large, 8 * small + 0.05 * kSlowdown);
  EXPECT_LT(large, 3.0 * kSlowdown);
}

TEST(ProgramLimits, HugeMeshIsRefusedBeforeBuildingRanks) {
  // 4 x 10^9 ranks would allocate 32 GB of rank ids before the check.
  for (const std::vector<int64_t>& mesh :
       {std::vector<int64_t>{4000000000}, {65536, 65536, 65536, 65536}, {65537},
        {int64_t{1} << 62, 4}}) {
    absl::StatusOr<Program> p = io::ProgramFromJson(kDocsExample, Ops(), mesh);
    ASSERT_FALSE(p.ok());
    EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(p.status().message()),
                AllOf(HasSubstr("mesh"), HasSubstr("65536 ranks")));
  }
  EXPECT_TRUE(io::ProgramFromJson(kDocsExample, Ops(), {256, 256}).status().message().find(
                  "65536 ranks") == absl::string_view::npos);
}

TEST(ProgramLimits, DeeplyNestedAttrsAreRefusedInLinearTime) {
  // Deep attrs went into protobuf's Value conversion, which aborted at 33
  // levels of lists (while printing the value) and slowed down on others.
  const std::vector<std::pair<std::string, std::string>> levels = {
      {"[", "]"}, {"{\"a\":", "}"}, {"{\"a\":[", "]}"}};
  for (const auto& [open, shut] : levels) {
    for (int depth : {33, 100, 20000}) {
      std::string value, close;
      for (int i = 0; i < depth; ++i) {
        value += open;
        close += shut;
      }
      const std::string json = WithOps(
          absl::StrCat(R"({"op":"matmul","inputs":["x","w"],"attrs":{"transpose_b":)", value, "1",
                       close, "}}"));
      const double start = ThreadCpuSeconds();
      absl::StatusOr<Program> p = io::ProgramFromJson(json, Ops(), {});
      EXPECT_LT(ThreadCpuSeconds() - start, 0.5 * kSlowdown);
      ASSERT_FALSE(p.ok()) << open << " x " << depth;
      EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument));
      EXPECT_THAT(std::string(p.status().message()), HasSubstr("nested more than 32 levels"));
    }
  }
  // Brackets inside strings do not count.
  const std::string in_string = WithOps(absl::StrCat(
      R"({"op":"matmul","inputs":["x","w"],"name":")", std::string(100, '['), R"("})"));
  EXPECT_TRUE(io::ProgramFromJson(in_string, Ops(), {}).ok());
}

}  // namespace
}  // namespace oneflow_sbp::graph
