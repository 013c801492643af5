// The DTensor spelling of a plan: placements, axis names, the file written
// for a program, and every refusal when a plan file is read back.
#include "io/dtensor_plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/program.h"
#include "ops/builtin_ops.h"
#include "tests/support/status_matchers.h"

namespace oneflow_sbp::io {
namespace {

using ::oneflow_sbp::matchers::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

graph::Program Mlp() {
  graph::ProgramBuilder b(ops::BuiltinOpRegistry(), *Placement::Parse("cpu:0-3 [2,2]"));
  EXPECT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[8,4]"), *NdSbp::Parse("(B,B)")).ok());
  EXPECT_TRUE(b.AddParameter("fc.weight", *TensorDesc::Parse("f32[4,6]")).ok());
  EXPECT_TRUE(b.AddOp("matmul", {"x", "fc.weight"}, {"y"}, AttrMap()).ok());
  EXPECT_TRUE(b.MarkOutput("y", std::nullopt).ok());
  absl::StatusOr<graph::Program> p = std::move(b).Build();
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

// x read split on rows over both axes, the weight column-split on axis 1.
graph::Assignment Megatron() {
  graph::Assignment a;
  a.op_signatures.push_back(
      {*NdSbp::Parse("(S(0),B)"), *NdSbp::Parse("(B,S(1))"), *NdSbp::Parse("(S(0),S(1))")});
  a.free_layouts.push_back(*NdSbp::Parse("(B,S(1))"));
  return a;
}

TEST(DtensorPlanTest, PlacementsInDtensorSpelling) {
  EXPECT_THAT(DtensorPlacements(*NdSbp::Parse("(S(1),B)")),
              ElementsAre("Shard(1)", "Replicate()"));
  EXPECT_THAT(DtensorPlacements(*NdSbp::Parse("(P,P(max))")),
              ElementsAre("Partial()", "Partial(\"max\")"));
}

TEST(DtensorPlanTest, DefaultNamesSayWhatEachAxisDoes) {
  EXPECT_THAT(DefaultMeshDimNames({"data parallel", "Megatron"}), ElementsAre("dp", "tp"));
  EXPECT_THAT(DefaultMeshDimNames({"data parallel", "data parallel"}), ElementsAre("dp0", "dp1"));
  EXPECT_THAT(DefaultMeshDimNames({"ZeRO", "Megatron + ZeRO"}), ElementsAre("fsdp", "tp_fsdp"));
}

TEST(DtensorPlanTest, WritesEveryWeightInputAndOutput) {
  const graph::Program p = Mlp();
  const std::string json = DtensorPlanJson(p, Megatron(), {"dp", "tp"}, "Megatron");
  EXPECT_EQ(json,
            "{\n  \"mesh_shape\": [2, 2],\n  \"mesh_dim_names\": [\"dp\", \"tp\"],\n"
            "  \"parameters\": {\n    \"fc.weight\": [\"Replicate()\", \"Shard(1)\"]\n  },\n"
            "  \"inputs\": {\n    \"x\": [\"Shard(0)\", \"Replicate()\"]\n  },\n"
            "  \"outputs\": {\n    \"y\": [\"Shard(0)\", \"Shard(1)\"]\n  },\n"
            "  \"strategy\": \"Megatron\"\n}\n");
  // Read back: the free tensor's layout.
  absl::StatusOr<std::vector<NdSbp>> back = FreeLayoutsFromDtensorPlan(json, "plan.json", p);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(*back, ElementsAre(*NdSbp::Parse("(B,S(1))")));
}

TEST(DtensorPlanTest, RefusesPlansThatDoNotFit) {
  const graph::Program p = Mlp();
  auto read = [&](const std::string& json) { return FreeLayoutsFromDtensorPlan(json, "plan.json", p); };
  EXPECT_THAT(read(R"j({"mesh_shape": [4], "parameters": {}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("plan.json: mesh_shape [4] is not the program's mesh [2, 2]")));
  EXPECT_THAT(read(R"j({"mesh_shape": [2, 2], "parameters": {}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("parameter 'fc.weight' has no layout in the plan")));
  EXPECT_THAT(read(R"j({"mesh_shape": [2, 2], "parameters": {"fc.bias": ["Replicate()", "Replicate()"]}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("parameter 'fc.bias' is not a weight of the program")));
  EXPECT_THAT(read(R"j({"mesh_shape": [2, 2], "parameters": {"fc.weight": ["Shard(0)"]}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected an array of 2 placements (one per mesh axis), got 1 entries")));
  EXPECT_THAT(read(R"j({"mesh_shape": [2, 2], "parameters": {"fc.weight": ["Shard(2)", "Replicate()"]}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'Shard(2)' but the tensor is f32[4,6]")));
  EXPECT_THAT(read(R"j({"mesh_shape": [2, 2], "parameters": {"fc.weight": ["Partial()", "Replicate()"]}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not partial sums")));
  EXPECT_THAT(read(R"j({"mesh_shape": [2, 2], "parameters": {"fc.weight": ["Half()", "Replicate()"]}})j"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("parameter 'fc.weight': ")));
  EXPECT_THAT(read("{\"mesh_shape\": [2, 2],}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("plan.json: byte")));
}

}  // namespace
}  // namespace oneflow_sbp::io
