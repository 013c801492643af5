// End-to-end choices of the signature engine, worked out by hand from
// SPEC.md (1-D §2, N-D §3, costs §4).
#include "oneflow_sbp/signature_inference.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

TEST(Infer1D, OneFlowDocumentedExample) {
  // x:S(0) + y:S(1) on two ranks: all-S(0) and all-S(1) both keep one input
  // (order -10) and pay T for the other; the tie goes to emission order.
  EXPECT_EQ(InferToString({"add_n", "cpu:0-1", {"f32[4,4]:S(0)", "f32[4,4]:S(1)"}}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0)");
}

TEST(InferNd, ReluOn2x3FromPartial) {
  // SPEC.md §3 worked example.
  EXPECT_EQ(InferToString({"relu", "cpu:0-5 [2,3]", {"f32[2,12]:(P,P)"}}),
            "x_0:(S(1),S(1)) -> y_0:(S(1),S(1))");
}

}  // namespace
}  // namespace oneflow_sbp::testing
