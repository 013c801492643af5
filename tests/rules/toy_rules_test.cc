// The toy family's rules layer alone (tests/rules/toy_ops.toml, op_family()'s
// :toy_rules): its golden candidate lines and inference, in a binary that
// links no kernels and no autograd, as `sbp infer` links the rules.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

// The golden lines, as op_catalog_test pins the built-in ops'.
TEST(ToyOp, GoldenCandidateLines) {
  EXPECT_EQ(CandidatesToString("toy_scale", {"f32[4,6]"}),
            "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1) | x_0:P -> y_0:P");
  EXPECT_EQ(CandidatesToString("toy_clamp_min", {"f32[4,6]"}),
            "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)");
  EXPECT_EQ(OutputDescs("toy_scale", {"f64[4,6]"}), "f64[4,6]");
  EXPECT_EQ(OutputDescs("toy_clamp_min", {"f32[3,5,2]"}), "f32[3,5,2]");
  // The einsum rule's shape function checks the rank its spec names.
  EXPECT_THAT(OutputDescs("toy_scale", {"f32[4]"}), HasSubstr("error"));
}

TEST(ToyOp, InferenceChoosesFromTheRecordsRule) {
  EXPECT_EQ(InferToString({.op = "toy_scale", .placement = "cpu:0-1", .inputs = {"f32[8,4]:S(1)"}}),
            "x_0:S(1) -> y_0:S(1)");
  EXPECT_EQ(InferToString({.op = "toy_scale", .placement = "cpu:0-1", .inputs = {"f32[8,4]:P"}}),
            "x_0:P -> y_0:P");
}

}  // namespace
}  // namespace oneflow_sbp::testing
