// Golden 1-D candidate lists, one line per op (SPEC.md §6), in emission
// order and without the all-B signature the engine appends. A rule change
// shows up as a one-line diff here.
#include <string>

#include "gtest/gtest.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

TEST(OpRules, AddN) {
  EXPECT_EQ(CandidatesToString("add_n", {"f32[4,6]", "f32[4,6]"}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0) | in_0:S(1) in_1:S(1) -> out_0:S(1) | "
            "in_0:P in_1:P -> out_0:P");
}

TEST(OpRules, UnaryKeepsSplitsOnly) {
  EXPECT_EQ(CandidatesToString("relu", {"f32[4,6]"}),
            "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)");
  EXPECT_EQ(CandidatesToString("gelu", {"f32[4,6]"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)");
  EXPECT_EQ(CandidatesToString("tanh", {"f32[5]"}), "x_0:S(0) -> y_0:S(0)");
  EXPECT_EQ(CandidatesToString("scalar_add", {"f32[4,6]"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)");
  // A scalar has no axis to split: only the appended all-B remains.
  EXPECT_EQ(CandidatesToString("exp", {"f32[]"}), "");
}

TEST(OpRules, LinearUnaryOpsPassPartialSums) {
  // `negative` is linear; OneFlow forgot its P -> P (ours, SPEC.md §9 #17).
  EXPECT_EQ(CandidatesToString("negative", {"f32[4,6]"}),
            "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1) | x_0:P -> y_0:P");
  EXPECT_EQ(CandidatesToString("scalar_mul", {"f32[4,6]"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("identity", {"f32[4]"}),
            "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("cast", {"f32[4]"}, {"dtype=f16"}),
            "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P");
}

TEST(OpRules, Matmul) {
  EXPECT_EQ(CandidatesToString("matmul", {"f32[8,4]", "f32[4,6]"}),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:B b_0:S(1) -> out_0:S(1) | "
            "a_0:S(1) b_0:S(0) -> out_0:P | a_0:P b_0:B -> out_0:P | "
            "a_0:B b_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("matmul", {"f32[8,4]", "f32[6,4]"}, {"transpose_b=true"}),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:B b_0:S(0) -> out_0:S(1) | "
            "a_0:S(1) b_0:S(1) -> out_0:P | a_0:P b_0:B -> out_0:P | "
            "a_0:B b_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("matmul", {"f32[4,8]", "f32[4,6]"}, {"transpose_a=true"}),
            "a_0:S(1) b_0:B -> out_0:S(0) | a_0:B b_0:S(1) -> out_0:S(1) | "
            "a_0:S(0) b_0:S(0) -> out_0:P | a_0:P b_0:B -> out_0:P | "
            "a_0:B b_0:P -> out_0:P");
}

TEST(OpRules, MatmulAddToOutputFollowsOut) {
  EXPECT_EQ(CandidatesToString("matmul", {"f32[8,4]", "f32[4,6]", "f32[8,6]"}),
            "a_0:S(0) b_0:B _add_to_output_0:S(0) -> out_0:S(0) | "
            "a_0:B b_0:S(1) _add_to_output_0:S(1) -> out_0:S(1) | "
            "a_0:S(1) b_0:S(0) _add_to_output_0:P -> out_0:P | "
            "a_0:P b_0:B _add_to_output_0:P -> out_0:P | "
            "a_0:B b_0:P _add_to_output_0:P -> out_0:P");
}

TEST(OpRules, BatchMatmul) {
  EXPECT_EQ(CandidatesToString("batch_matmul", {"f32[3,8,4]", "f32[3,4,6]"}),
            "a_0:S(0) b_0:S(0) -> out_0:S(0) | a_0:S(1) b_0:B -> out_0:S(1) | "
            "a_0:B b_0:S(2) -> out_0:S(2) | a_0:S(2) b_0:S(1) -> out_0:P | "
            "a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
}

TEST(OpRules, BroadcastMatmul) {
  // b has no batch dims: batch dim 0 splits a only.
  EXPECT_EQ(CandidatesToString("broadcast_matmul", {"f32[3,8,4]", "f32[4,6]"}),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:S(1) b_0:B -> out_0:S(1) | "
            "a_0:B b_0:S(1) -> out_0:S(2) | a_0:S(2) b_0:S(0) -> out_0:P | "
            "a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
  // Size-1 batch dim on a: b carries the split.
  EXPECT_EQ(CandidatesToString("broadcast_matmul", {"f32[1,8,4]", "f32[5,4,6]"}),
            "a_0:B b_0:S(0) -> out_0:S(0) | a_0:S(1) b_0:B -> out_0:S(1) | "
            "a_0:B b_0:S(2) -> out_0:S(2) | a_0:S(2) b_0:S(1) -> out_0:P | "
            "a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
}

TEST(OpRules, ReduceSumRepeatsPartialPairPerReducedAxis) {
  EXPECT_EQ(CandidatesToString("reduce_sum", {"f32[4,6,8]"}, {"axis=1"}),
            "input_tensor_0:S(0) -> output_tensor_0:S(0) | "
            "input_tensor_0:S(1) -> output_tensor_0:P | "
            "input_tensor_0:P -> output_tensor_0:P | "
            "input_tensor_0:S(2) -> output_tensor_0:S(1)");
  EXPECT_EQ(CandidatesToString("reduce_sum", {"f32[4,6,8]"}, {"axis=0,-1", "keepdims=true"}),
            "input_tensor_0:S(0) -> output_tensor_0:P | "
            "input_tensor_0:P -> output_tensor_0:P | "
            "input_tensor_0:S(1) -> output_tensor_0:S(1) | "
            "input_tensor_0:S(2) -> output_tensor_0:P | "
            "input_tensor_0:P -> output_tensor_0:P");
  EXPECT_EQ(CandidatesToString("reduce_sum", {"f32[]"}, {"axis="}),
            "input_tensor_0:P -> output_tensor_0:P");
}

TEST(OpRules, ReduceMaxHasNoPartial) {
  EXPECT_EQ(CandidatesToString("reduce_max", {"f32[4,6,8]"}, {"axis=1"}),
            "input_tensor_0:S(0) -> output_tensor_0:S(0) | "
            "input_tensor_0:S(2) -> output_tensor_0:S(1)");
}

TEST(OpRules, SoftmaxNeverSplitsTheLastDim) {
  EXPECT_EQ(CandidatesToString("softmax", {"f32[4,6,8]"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)");
  EXPECT_EQ(CandidatesToString("log_softmax", {"f32[4,6]"}), "in_0:S(0) -> prob_0:S(0)");
}

TEST(OpRules, Transpose) {
  EXPECT_EQ(CandidatesToString("transpose", {"f32[4,6,8]"}, {"perm=2,0,1"}),
            "input_0:S(2) -> output_0:S(0) | input_0:S(0) -> output_0:S(1) | "
            "input_0:S(1) -> output_0:S(2) | input_0:P -> output_0:P");
  EXPECT_EQ(CandidatesToString("transpose", {"f32[4,6]"}, {"perm=-1,0"}),
            "input_0:S(1) -> output_0:S(0) | input_0:S(0) -> output_0:S(1) | "
            "input_0:P -> output_0:P");
}

TEST(OpRules, BroadcastBinaryEqualRanks) {
  EXPECT_EQ(CandidatesToString("broadcast_add", {"f32[4,1]", "f32[4,6]"}),
            "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(1) -> z_0:S(1) | "
            "x_0:P y_0:P -> z_0:P");
  EXPECT_EQ(CandidatesToString("broadcast_sub", {"f32[4,6]", "f32[1,6]"}),
            "x_0:S(0) y_0:B -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1) | "
            "x_0:P y_0:P -> z_0:P");
  // Both size 1: nothing to split on that dim.
  EXPECT_EQ(CandidatesToString("broadcast_maximum", {"f32[1,6]", "f32[1,6]"}),
            "x_0:S(1) y_0:S(1) -> z_0:S(1)");
}

TEST(OpRules, BroadcastBinaryDifferentRanksHandlesSizeOne) {
  // OneFlow would pair x dim 1 (size 1) with y dim 2 as S/S, which the shape
  // filter drops, so y:S(2) could never be kept; ours gives x:B y:S(2).
  EXPECT_EQ(CandidatesToString("broadcast_mul", {"f32[3,1]", "f32[2,3,4]"}),
            "x_0:B y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(2) -> z_0:S(2) | "
            "x_0:S(0) y_0:S(1) -> z_0:S(1) | x_0:B y_0:P -> z_0:P | "
            "x_0:P y_0:B -> z_0:P");
  EXPECT_EQ(CandidatesToString("broadcast_div", {"f32[2,3,4]", "f32[4]"}),
            "x_0:S(0) y_0:B -> z_0:S(0) | x_0:S(1) y_0:B -> z_0:S(1) | "
            "x_0:S(2) y_0:S(0) -> z_0:S(2) | x_0:P y_0:B -> z_0:P");
  // A scalar operand broadcasts against every split.
  EXPECT_EQ(CandidatesToString("broadcast_greater", {"f32[]", "f32[4,6]"}),
            "x_0:B y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(1) -> z_0:S(1)");
}

}  // namespace
}  // namespace oneflow_sbp::testing
