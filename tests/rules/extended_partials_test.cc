// P(max) and P(min) (ops/extended_partials.h): the extended rules' golden
// lists, OneFlow's lists and choices untouched, inference under `planned`,
// and the layouts run end to end on real in-process ranks.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "eager/apply.h"
#include "eager/eager_context.h"
#include "eager/tensor_layout.h"
#include "engine/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "comm/inprocess_world.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExtendedPartials, GoldenLists) {
  EXPECT_EQ(ExtendedCandidatesToString("reduce_max", {"f32[4,6]"}, {"axis=1"}),
            "input_tensor_0:S(1) -> output_tensor_0:P(max) | "
            "input_tensor_0:P(max) -> output_tensor_0:P(max)");
  EXPECT_EQ(ExtendedCandidatesToString("reduce_min", {"f32[4,6,2]"}, {"axis=0,2"}),
            "input_tensor_0:S(0) -> output_tensor_0:P(min) | "
            "input_tensor_0:S(2) -> output_tensor_0:P(min) | "
            "input_tensor_0:P(min) -> output_tensor_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("relu", {"f32[4,6]"}),
            "x_0:P(max) -> y_0:P(max) | x_0:P(min) -> y_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("identity", {"f32[4]"}),
            "in_0:P(max) -> out_0:P(max) | in_0:P(min) -> out_0:P(min)");
  // Nonincreasing: the kinds swap.
  EXPECT_EQ(ExtendedCandidatesToString("negative", {"f32[4,6]"}),
            "x_0:P(max) -> y_0:P(min) | x_0:P(min) -> y_0:P(max)");
  EXPECT_EQ(ExtendedCandidatesToString("scalar_mul", {"f32[4]"}, {"float_operand=-2"}),
            "in_0:P(max) -> out_0:P(min) | in_0:P(min) -> out_0:P(max)");
  EXPECT_EQ(ExtendedCandidatesToString(
                "scalar_mul", {"f32[4]"},
                {"has_int_operand=true", "has_float_operand=false", "int_operand=3"}),
            "in_0:P(max) -> out_0:P(max) | in_0:P(min) -> out_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("scalar_add", {"f32[4]"}, {"float_operand=-2"}),
            "in_0:P(max) -> out_0:P(max) | in_0:P(min) -> out_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("broadcast_sub", {"f32[4,6]", "f32[6]"}),
            "x_0:P(max) y_0:B -> z_0:P(max) | x_0:B y_0:P(max) -> z_0:P(min) | "
            "x_0:P(min) y_0:B -> z_0:P(min) | x_0:B y_0:P(min) -> z_0:P(max)");
  // With a B operand either kind passes: max(b, min_r a_r) = min_r max(b, a_r).
  EXPECT_EQ(ExtendedCandidatesToString("broadcast_maximum", {"f32[4,6]", "f32[4,6]"}),
            "x_0:P(max) y_0:P(max) -> z_0:P(max) | x_0:P(max) y_0:B -> z_0:P(max) | "
            "x_0:B y_0:P(max) -> z_0:P(max) | x_0:P(min) y_0:B -> z_0:P(min) | "
            "x_0:B y_0:P(min) -> z_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("broadcast_minimum", {"f32[4,6]", "f32[4,6]"}),
            "x_0:P(min) y_0:P(min) -> z_0:P(min) | x_0:P(min) y_0:B -> z_0:P(min) | "
            "x_0:B y_0:P(min) -> z_0:P(min) | x_0:P(max) y_0:B -> z_0:P(max) | "
            "x_0:B y_0:P(max) -> z_0:P(max)");
  // Value-moving ops keep each kind; B joins a P(k) of cat and stack.
  EXPECT_EQ(ExtendedCandidatesToString("transpose", {"f32[4,6]"}, {"perm=1,0"}),
            "input_0:P(max) -> output_0:P(max) | input_0:P(min) -> output_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("cat", {"f32[4,6]", "f32[4,2]"}, {"axis=1"}),
            "in_0:P(max) in_1:P(max) -> out_0:P(max) | in_0:P(max) in_1:B -> out_0:P(max) | "
            "in_0:B in_1:P(max) -> out_0:P(max) | in_0:P(min) in_1:P(min) -> out_0:P(min) | "
            "in_0:P(min) in_1:B -> out_0:P(min) | in_0:B in_1:P(min) -> out_0:P(min)");
  EXPECT_EQ(ExtendedCandidatesToString("split", {"f32[4,6]"}, {"axis=1", "sizes=2,4"}),
            "x_0:P(max) -> out_0:P(max) out_1:P(max) | x_0:P(min) -> out_0:P(min) out_1:P(min)");
}

// Ops that do not commute with max or min offer none; dividing by 0 none.
TEST(ExtendedPartials, OpsThatDoNotCommuteRefuse) {
  for (const char* op : {"square", "abs", "gelu", "silu", "sin", "log", "sqrt"}) {
    EXPECT_EQ(ExtendedCandidatesToString(op, {"f32[4,6]"}), "") << op;
  }
  EXPECT_EQ(ExtendedCandidatesToString("reduce_sum", {"f32[4,6]"}, {"axis=1"}), "");
  EXPECT_EQ(ExtendedCandidatesToString("broadcast_mul", {"f32[4,6]", "f32[6]"}), "");
  EXPECT_EQ(ExtendedCandidatesToString("scalar_div", {"f32[4]"}, {"float_operand=0"}), "");
  EXPECT_EQ(ExtendedCandidatesToString("matmul", {"f32[4,6]", "f32[6,2]"}), "");
}

// OneFlow's lists and choices are OneFlow's: no P(max) anywhere.
TEST(ExtendedPartials, OneFlowPolicyNeverOffersThem) {
  EXPECT_THAT(CandidatesToString("reduce_max", {"f32[4,6]"}, {"axis=1"}), Not(HasSubstr("P(")));
  EXPECT_THAT(CandidatesToString("relu", {"f32[4,6]"}), Not(HasSubstr("P(")));
  InferSpec spec{"reduce_max", "cpu:0-3", {"f32[8,16]:S(1)"}, {"axis=1"}};
  EXPECT_EQ(InferToString(spec), "input_tensor_0:S(0) -> output_tensor_0:S(0)");
  // A P(max) producer is boxed (reduce-scattered by max), never kept.
  InferSpec relu{"relu", "cpu:0-3", {"f32[8,16]:P(max)"}};
  EXPECT_EQ(InferToString(relu), "x_0:S(0) -> y_0:S(0)");
}

TEST(ExtendedPartials, PlannedKeepsThemWhereTheyAreFree) {
  InferSpec reduce{"reduce_max", "cpu:0-3", {"f32[8,16]:S(1)"}, {"axis=1"}};
  reduce.cost = "planned";
  EXPECT_EQ(InferToString(reduce), "input_tensor_0:S(1) -> output_tensor_0:P(max)");
  InferSpec relu{"relu", "cpu:0-3 [2,2]", {"f32[8,16]:(P(max),S(0))"}};
  relu.cost = "planned";
  EXPECT_EQ(InferToString(relu), "x_0:(P(max),S(0)) -> y_0:(P(max),S(0))");
  InferSpec neg{"negative", "cpu:0-3", {"f32[8,16]:P(min)"}};
  neg.cost = "planned";
  EXPECT_EQ(InferToString(neg), "x_0:P(min) -> y_0:P(max)");
  // square does not commute with max: its input is reduced first.
  InferSpec square{"square", "cpu:0-3", {"f32[8,16]:P(max)"}};
  square.cost = "planned";
  EXPECT_THAT(InferToString(square), Not(HasSubstr("P(")));
}

// Issue 34's cases. Mixed partial kinds across inputs used to fail
// ("nd_sbp mixes partial kinds") while pricing a back-plan; now they answer.
TEST(ExtendedPartials, PlannedAnswersMixedPartialKinds) {
  const std::string mesh = "cpu:0-3 [2,2]";
  struct Case {
    std::string op;
    std::vector<std::string> inputs, attrs;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"broadcast_add", {"f32[8,12]:(B,P)", "f32[8,12]:(P(max),S(0))"}, {},
       "x_0:(S(1),S(0)) y_0:(S(1),S(0)) -> z_0:(S(1),S(0))"},
      {"broadcast_add", {"f32[8,12]:(P,B)", "f32[8,12]:(P(max),P(max))"}, {},
       "x_0:(S(0),S(0)) y_0:(S(0),S(0)) -> z_0:(S(0),S(0))"},
      {"broadcast_add", {"f32[8,12]:(P,S(1))", "f32[8,12]:(P(min),P(min))"}, {},
       "x_0:(S(0),S(0)) y_0:(S(0),S(0)) -> z_0:(S(0),S(0))"},
      {"broadcast_minimum", {"f32[8,12]:(P(min),S(0))", "f32[8,12]:(S(1),P)"}, {},
       "x_0:(S(1),S(0)) y_0:(S(1),S(0)) -> z_0:(S(1),S(0))"},
      {"broadcast_minimum", {"f32[8,12]:(S(0),P(max))", "f32[8,12]:(P(min),S(0))"}, {},
       "x_0:(S(0),S(0)) y_0:(S(0),S(0)) -> z_0:(S(0),S(0))"},
      {"cat", {"f32[8,12]:(S(1),P)", "f32[8,12]:(P(min),B)"}, {"axis=1"},
       "in_0:(S(0),S(0)) in_1:(S(0),S(0)) -> out_0:(S(0),S(0))"},
  };
  for (const Case& c : cases) {
    InferSpec spec{c.op, mesh, c.inputs, c.attrs};
    spec.cost = "planned";
    EXPECT_EQ(InferToString(spec), c.want) << c.op << " " << c.inputs[0] << " " << c.inputs[1];
  }
}

// Value-moving ops pass P(max)/P(min) through at 0 bytes (DTensor keeps
// them too), and the maximum of B and P(min) is P(min).
TEST(ExtendedPartials, PlannedPassesThemThroughValueMovingOps) {
  InferSpec transpose{"transpose", "cpu:0-3", {"f32[8,12]:P(max)"}, {"perm=1,0"}};
  transpose.cost = "planned";
  EXPECT_EQ(InferToString(transpose), "input_0:P(max) -> output_0:P(max)");
  InferSpec reshape{"reshape", "cpu:0-3", {"f32[8,12]:P(max)"}, {"shape=12,8"}};
  reshape.cost = "planned";
  EXPECT_EQ(InferToString(reshape), "in_0:P(max) -> out_0:P(max)");
  InferSpec nd{"transpose", "cpu:0-3 [2,2]", {"f32[8,12]:(P(min),S(0))"}, {"perm=1,0"}};
  nd.cost = "planned";
  EXPECT_EQ(InferToString(nd), "input_0:(P(min),S(0)) -> output_0:(P(min),S(1))");
  InferSpec maximum{"broadcast_maximum", "cpu:0-3", {"f32[8,12]:B", "f32[8,12]:P(min)"}};
  maximum.cost = "planned";
  EXPECT_EQ(InferToString(maximum), "x_0:B y_0:P(min) -> z_0:P(min)");
  // OneFlow's policy never offers them.
  InferSpec oneflow{"transpose", "cpu:0-3", {"f32[8,12]:P(max)"}, {"perm=1,0"}};
  EXPECT_THAT(InferToString(oneflow), Not(HasSubstr("P(")));
}

// reduce_max over a split dim makes P(max) without moving a byte; relu
// and adding a broadcast bias keep it; the logical values are right on
// real ranks, and reading them back all-reduces by max.
TEST(ExtendedPartials, RunOnRealRanks) {
  absl::StatusOr<engine::Engine*> engine = EngineFor();
  ASSERT_TRUE(engine.ok()) << engine.status();
  const Placement p = *Placement::Parse("cpu:0-3");
  LocalTensor x = *LocalTensor::Empty(DataType::kFloat32, {4, 8});
  for (int64_t i = 0; i < x.elem_cnt(); ++i) x.SetDouble(i, static_cast<double>((i * 7) % 11) - 5);
  LocalTensor bias = *LocalTensor::Empty(DataType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) bias.SetDouble(i, 0.5 * static_cast<double>(i));
  eager::EagerOptions options;
  options.cost_policy = PolicyName::Planned();
  absl::StatusOr<std::vector<absl::Status>> ran =
      comm::RunRanks(4, [&](comm::Communicator& world) -> absl::Status {
        eager::EagerContext ctx(**engine, world, options);
        absl::StatusOr<eager::GlobalTensor> gx = eager::FromFull(ctx, x, p, *NdSbp::Parse("S(1)"));
        absl::StatusOr<eager::GlobalTensor> gb = eager::FromFull(ctx, bias, p, *NdSbp::Parse("B"));
        if (!gx.ok() || !gb.ok()) return absl::InternalError("FromFull");
        absl::StatusOr<eager::GlobalTensor> m = eager::Apply1(
            ctx, "reduce_max", {*gx}, eager::Attrs({{"axis", AttrValue(std::vector<int64_t>{1})}}));
        if (!m.ok()) return m.status();
        if (m->nd_sbp().ToString() != "(P(max))") {
          return absl::InternalError("reduce_max gave " + m->nd_sbp().ToString());
        }
        absl::StatusOr<eager::GlobalTensor> r = eager::Apply1(ctx, "relu", {*m});
        if (!r.ok()) return r.status();
        absl::StatusOr<eager::GlobalTensor> y = eager::Apply1(ctx, "broadcast_add", {*r, *gb});
        if (!y.ok()) return y.status();
        if (y->nd_sbp().ToString() != "(P(max))") {
          return absl::InternalError("relu + bias gave " + y->nd_sbp().ToString());
        }
        absl::StatusOr<LocalTensor> full = eager::ToFull(ctx, *y);
        if (!full.ok()) return full.status();
        for (int64_t row = 0; row < 4; ++row) {
          double want = -std::numeric_limits<double>::infinity();
          for (int64_t c = 0; c < 8; ++c) want = std::max(want, x.GetDouble(row * 8 + c));
          want = std::max(want, 0.0) + bias.GetDouble(row);
          if (full->GetDouble(row) != want) {
            return absl::InternalError("row " + std::to_string(row) + ": got " +
                                       std::to_string(full->GetDouble(row)) + ", want " +
                                       std::to_string(want));
          }
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(ran.ok()) << ran.status();
  for (size_t r = 0; r < ran->size(); ++r) EXPECT_TRUE((*ran)[r].ok()) << "rank " << r << ": " << (*ran)[r];
}

}  // namespace
}  // namespace oneflow_sbp::testing
