// `sbp demo` end to end on in-process ranks: a LLaMA-style block trains
// through the eager interpreter (every kernel, backward rule and boxing
// step on the way), its loss goes down, and the loss and every gradient
// match the single-rank run; --record writes the training step for
// `sbp plan`; bad options are refused.
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/program_proto.h"
#include "io/proto_io.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"
#include "cli/cmd_demo.h"
#include "cli/cmd_plan.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

using ::testing::HasSubstr;

engine::Engine& Eng() { return **testing::EngineFor(); }

TEST(SbpDemo, DefaultMeshTrainsAndMatchesOneRank) {
  DemoOptions o;  // [2,2], 1 layer, 3 steps
  o.all_ops = true;
  int exit_code = 0;  // RunDemo sets 1 on a mismatch
  absl::StatusOr<std::string> out = RunDemo(o, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("loss matches"));
  EXPECT_THAT(*out, HasSubstr("12 gradients match"));
  EXPECT_THAT(*out, HasSubstr("loss went down"));
  // The new ops ran, forward and backward, and Adam updated the weights.
  for (const char* op : {"rotary_embedding ", "rotary_embedding_grad",
                         "scaled_dot_product_attention ", "scaled_dot_product_attention_grad"}) {
    EXPECT_THAT(*out, HasSubstr(op));
  }
}

// The JSON report times every step (tools/bench/dtensor_llama_step.py
// compares them with DTensor's); only that they are there and positive is
// checked, never a speed.
TEST(SbpDemo, JsonTimesEveryStep) {
  DemoOptions o;  // [2,2], 1 layer
  o.steps = 2;
  o.json = true;
  absl::StatusOr<std::string> out = RunDemo(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  const size_t at = out->find("\"step_seconds\": [");
  ASSERT_NE(at, std::string::npos) << *out;
  const size_t end = out->find(']', at);
  std::vector<std::string> times =
      absl::StrSplit(out->substr(at + 17, end - at - 17), ", ");
  ASSERT_EQ(times.size(), 2u) << out->substr(at, end - at);
  for (const std::string& t : times) {
    double v = 0;
    EXPECT_TRUE(absl::SimpleAtod(t, &v)) << t;
    EXPECT_GT(v, 0);
  }
}

TEST(SbpDemo, OneAxisMeshAndTwoLayers) {
  DemoOptions o;
  o.mesh = "2";
  o.model.layers = 2;
  o.model.seq = 8;
  int exit_code = 0;  // RunDemo sets 1 on a mismatch
  absl::StatusOr<std::string> out = RunDemo(o, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("21 gradients match"));
}

// Bytes received by all ranks over the run: the sum of the report's
// "collectives" lines.
int64_t TotalBytes(const std::string& report) {
  static const std::regex line(R"(steps, +([0-9]+) bytes received)");
  int64_t total = 0;
  for (auto it = std::sregex_iterator(report.begin(), report.end(), line);
       it != std::sregex_iterator(); ++it) {
    total += std::stoll((*it)[1].str());
  }
  return total;
}

// OneFlow's eager rules, op by op, reshuffle the Megatron-marked weights
// (all-to-all S(1) -> S(0)) before every projection. Ranking by real plans
// keeps them where they are (column-parallel matmuls gather the activation
// instead) and moves fewer bytes in all, with the same losses.
TEST(SbpDemo, PlannedPolicyKeepsTheMegatronSplitAndMovesLess) {
  DemoOptions oneflow;
  int exit_code = 0;
  absl::StatusOr<std::string> base = RunDemo(oneflow, Eng(), &exit_code);
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_EQ(exit_code, 0) << *base;
  EXPECT_THAT(*base, HasSubstr("boxing b_0    all_to_all S(1)->S(0)"));

  DemoOptions planned;
  planned.cost = "planned";
  absl::StatusOr<std::string> out = RunDemo(planned, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("(cost policy planned)"));
  EXPECT_THAT(*out, HasSubstr("a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(2))"));
  EXPECT_THAT(*out, ::testing::Not(HasSubstr("boxing b_0")));
  EXPECT_THAT(*out, HasSubstr("loss per step:        5.058768  3.804368  2.724005"));
  const int64_t before = TotalBytes(*base), after = TotalBytes(*out);
  EXPECT_GT(before, 0);
  EXPECT_LT(after, before) << "planned " << after << " B vs oneflow " << before << " B";
}

std::string ReadFile(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// --record writes the training step: both programs say "training": true,
// the Megatron twin flags its marked weights as parameters, and `sbp plan`
// plans each as a whole step with one Adam update per weight.
TEST(SbpDemo, RecordsTheTrainingStep) {
  DemoOptions o;
  o.steps = 2;
  o.record = ::testing::TempDir() + "/demo.json";
  int exit_code = 0;
  absl::StatusOr<std::string> out = RunDemo(o, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  for (const std::string& path : {*o.record, ::testing::TempDir() + "/demo.marked.json"}) {
    const std::string json = ReadFile(path);
    absl::StatusOr<oneflow::ProgramProto> proto = io::ProgramProtoFromJson(json);
    ASSERT_TRUE(proto.ok()) << path << ": " << proto.status();
    EXPECT_TRUE(proto->training()) << path;
    int flagged = 0;
    for (const oneflow::ProgramTensorProto& t : proto->tensors()) flagged += t.parameter();
    EXPECT_EQ(flagged, absl::EndsWith(path, ".marked.json") ? 12 : 0) << path;
    PlanOptions plan;
    plan.program = json;
    absl::StatusOr<std::string> text = RunPlan(plan, Eng());
    ASSERT_TRUE(text.ok()) << path << ": " << text.status();
    EXPECT_THAT(*text, HasSubstr("12 updates; loss ")) << path;
  }
}

// The committed recordings (tests/testdata/demo_mesh*.json, the commands
// in tests/testdata/README.md) are what `sbp demo --record` writes today,
// compared as parsed programs (the tool writes pretty JSON; formatting
// does not count, and nothing in a recording varies between runs), so
// they cannot go stale silently.
TEST(SbpDemo, RecordingsEqualTheFixtures) {
  struct Recording {
    const char* mesh;
    int64_t batch;
    const char* stem;
  };
  for (const Recording& r : {Recording{"2,2", 4, "demo_mesh22"}, Recording{"2,4", 4, "demo_mesh24"},
                             Recording{"8", 8, "demo_mesh8"}}) {
    DemoOptions o;
    o.mesh = r.mesh;
    o.model.batch = r.batch;
    o.steps = 2;  // the recording is step 0's
    o.record = ::testing::TempDir() + "/" + r.stem + ".json";
    absl::StatusOr<std::string> out = RunDemo(o, Eng());
    ASSERT_TRUE(out.ok()) << r.stem << ": " << out.status();
    for (const std::string suffix : {".json", ".marked.json"}) {
      const std::string name = std::string(r.stem) + suffix;
      absl::StatusOr<oneflow::ProgramProto> fixture =
          io::ProgramProtoFromJson(ReadFile("tests/testdata/" + name));
      ASSERT_TRUE(fixture.ok()) << name << ": " << fixture.status();
      absl::StatusOr<oneflow::ProgramProto> recorded =
          io::ProgramProtoFromJson(ReadFile(::testing::TempDir() + "/" + name));
      ASSERT_TRUE(recorded.ok()) << name << ": " << recorded.status();
      EXPECT_EQ(io::ToJson(*fixture, /*pretty=*/true), io::ToJson(*recorded, /*pretty=*/true))
          << name << " is stale: re-record it (tests/testdata/README.md)";
    }
  }
}

TEST(SbpDemo, BadOptionsAreRefused) {
  DemoOptions o;
  o.steps = 1;
  EXPECT_THAT(std::string(RunDemo(o, Eng()).status().message()), HasSubstr("--steps"));
  o = DemoOptions();
  o.mesh = "2,2,2";
  EXPECT_THAT(std::string(RunDemo(o, Eng()).status().message()), HasSubstr("--mesh=2,2,2"));
  o = DemoOptions();
  o.model.heads = 3;  // 64 does not split into 3 heads
  EXPECT_THAT(std::string(RunDemo(o, Eng()).status().message()), HasSubstr("--heads=3"));
  o = DemoOptions();
  o.cost = "cheapest";
  const absl::Status unknown = RunDemo(o, Eng()).status();
  EXPECT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("cheapest"));
}

}  // namespace
}  // namespace oneflow_sbp::cli
