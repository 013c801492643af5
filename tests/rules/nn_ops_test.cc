// nn op family (ops/nn_ops.cc): golden 1-D candidate lists (2 ranks,
// without the engine's all-B), shape functions and their errors, and
// end-to-end choices worked out by hand from SPEC.md §2/§3.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Golden candidate lists

TEST(NnOpsRules, LayerNormSplitsRowsOnly) {
  // bna = 2, bpa = -1 -> 2: rows are dims 0 and 1.
  EXPECT_EQ(CandidatesToString("layer_norm", {"f32[4,6,8]", "f32[8]", "f32[8]"},
                               {"begin_norm_axis=2"}),
            "x_0:S(0) beta_0:B gamma_0:B -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0) | "
            "x_0:S(1) beta_0:B gamma_0:B -> y_0:S(1) mean_0:S(1) inv_variance_0:S(1)");
  // min(bna, bpa) bounds the splits: bna = 2 but bpa = 1.
  EXPECT_EQ(CandidatesToString("layer_norm", {"f32[4,6,8]", "f32[6,8]", "f32[6,8]"},
                               {"begin_norm_axis=2", "begin_params_axis=1"}),
            "x_0:S(0) beta_0:B gamma_0:B -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0)");
  // Negative axes count from the end: bna = -2 -> 1.
  EXPECT_EQ(CandidatesToString("layer_norm", {"f32[4,6,8]"},
                               {"begin_norm_axis=-2", "begin_params_axis=-2"}),
            "x_0:S(0) -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0)");
  // bna = 0 normalises everything: no split survives.
  EXPECT_EQ(CandidatesToString("layer_norm", {"f32[4,6]"}, {"begin_norm_axis=0"}), "");
}

TEST(NnOpsRules, LayerNormAbsentParamsGetNoEntry) {
  // No beta, no gamma: OneFlow would still write both (SPEC.md §9 #16).
  EXPECT_EQ(CandidatesToString("layer_norm", {"f32[4,6,8]"}, {"begin_norm_axis=2"}),
            "x_0:S(0) -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0) | "
            "x_0:S(1) -> y_0:S(1) mean_0:S(1) inv_variance_0:S(1)");
  // beta only (two inputs fill the optional args in declared order).
  EXPECT_EQ(CandidatesToString("layer_norm", {"f32[4,8]", "f32[8]"}),
            "x_0:S(0) beta_0:B -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0)");
  // gamma only: built by hand, since positional inputs would fill beta.
  std::shared_ptr<const OpDef> def = Registry().Find("layer_norm");
  ASSERT_NE(def, nullptr);
  absl::StatusOr<std::shared_ptr<const OpCall>> call = OpCall::Make(def, {1, 0, 1}, AttrMap());
  ASSERT_TRUE(call.ok()) << call.status();
  const std::vector<TensorDesc> in = {*TensorDesc::Parse("f32[4,8]"), *TensorDesc::Parse("f32[8]")};
  absl::StatusOr<std::vector<TensorDesc>> out = (*call)->InferOutputDescs(in);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<std::vector<SbpSignature>> list =
      GetSbpCandidates(**call, in, *out, 2, 2, DeviceType::kCpu);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(SignatureListToString(**call, *list),
            "x_0:S(0) gamma_0:B -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0)");
}

TEST(NnOpsRules, LayerNormGrad) {
  EXPECT_EQ(CandidatesToString("layer_norm_grad",
                               {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[4,6]", "f32[8]"},
                               {"begin_norm_axis=2"}),
            "dy_0:S(0) x_0:S(0) mean_0:S(0) inv_variance_0:S(0) gamma_0:B -> dx_0:S(0) | "
            "dy_0:S(1) x_0:S(1) mean_0:S(1) inv_variance_0:S(1) gamma_0:B -> dx_0:S(1)");
  EXPECT_EQ(CandidatesToString("layer_norm_grad",
                               {"f32[4,8]", "f32[4,8]", "f32[4]", "f32[4]"}),
            "dy_0:S(0) x_0:S(0) mean_0:S(0) inv_variance_0:S(0) -> dx_0:S(0)");
}

TEST(NnOpsRules, LayerNormParamGradBatchGivesPartialParamDimsGiveSplits) {
  // i < bpa: OneFlow's P; j >= bpa: ours, params split at j - bpa.
  EXPECT_EQ(CandidatesToString("layer_norm_param_grad",
                               {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[4,6]"},
                               {"begin_params_axis=2"}),
            "dy_0:S(0) x_0:S(0) mean_0:S(0) inv_variance_0:S(0) -> gamma_diff_0:P beta_diff_0:P | "
            "dy_0:S(1) x_0:S(1) mean_0:S(1) inv_variance_0:S(1) -> gamma_diff_0:P beta_diff_0:P | "
            "dy_0:S(2) x_0:S(2) mean_0:B inv_variance_0:B -> gamma_diff_0:S(0) beta_diff_0:S(0)");
  // Stats reach past bpa (bna = 2, bpa = 1): a param dim covered by the
  // stats splits them too; the dim past them leaves them whole.
  EXPECT_EQ(CandidatesToString("layer_norm_param_grad",
                               {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[4,6]"},
                               {"begin_params_axis=1"}),
            "dy_0:S(0) x_0:S(0) mean_0:S(0) inv_variance_0:S(0) -> gamma_diff_0:P beta_diff_0:P | "
            "dy_0:S(1) x_0:S(1) mean_0:S(1) inv_variance_0:S(1) -> "
            "gamma_diff_0:S(0) beta_diff_0:S(0) | "
            "dy_0:S(2) x_0:S(2) mean_0:B inv_variance_0:B -> gamma_diff_0:S(1) beta_diff_0:S(1)");
}

TEST(NnOpsRules, RmsNorm) {
  EXPECT_EQ(CandidatesToString("rms_norm", {"f32[4,6,8]", "f32[8]"}, {"normalized_shape=8"}),
            "x_0:S(0) weight_0:B -> y_0:S(0) inv_rms_0:S(0) | "
            "x_0:S(1) weight_0:B -> y_0:S(1) inv_rms_0:S(1)");
  EXPECT_EQ(CandidatesToString("rms_norm", {"f32[4,6,8]"}, {"normalized_shape=6,8"}),
            "x_0:S(0) -> y_0:S(0) inv_rms_0:S(0)");
  EXPECT_EQ(CandidatesToString("rms_norm", {"f32[6,8]"}, {"normalized_shape=6,8"}), "");
}

TEST(NnOpsRules, RmsNormGrads) {
  EXPECT_EQ(CandidatesToString("rms_norm_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[8]"}),
            "dy_0:S(0) x_0:S(0) inv_rms_0:S(0) weight_0:B -> dx_0:S(0) | "
            "dy_0:S(1) x_0:S(1) inv_rms_0:S(1) weight_0:B -> dx_0:S(1)");
  EXPECT_EQ(CandidatesToString("rms_norm_grad", {"f32[4,8]", "f32[4,8]", "f32[4]"}),
            "dy_0:S(0) x_0:S(0) inv_rms_0:S(0) -> dx_0:S(0)");
  EXPECT_EQ(CandidatesToString("rms_norm_param_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4]"}),
            "dy_0:S(0) x_0:S(0) inv_rms_0:S(0) -> weight_grad_0:P | "
            "dy_0:S(1) x_0:S(1) inv_rms_0:B -> weight_grad_0:S(0) | "
            "dy_0:S(2) x_0:S(2) inv_rms_0:B -> weight_grad_0:S(1)");
}

TEST(NnOpsRules, SoftmaxGradsKeepTheLastDimWhole) {
  EXPECT_EQ(CandidatesToString("softmax_grad", {"f32[4,6,8]", "f32[4,6,8]"}),
            "y_0:S(0) dy_0:S(0) -> dx_0:S(0) | y_0:S(1) dy_0:S(1) -> dx_0:S(1)");
  EXPECT_EQ(CandidatesToString("log_softmax_grad", {"f32[4,6]", "f32[4,6]"}),
            "prob_0:S(0) dy_0:S(0) -> dx_0:S(0)");
}

TEST(NnOpsRules, ActivationGradsSplitEverythingAndPassPartialDy) {
  EXPECT_EQ(CandidatesToString("relu_grad", {"f32[4,6]", "f32[4,6]"}),
            "y_0:S(0) dy_0:S(0) -> dx_0:S(0) | y_0:S(1) dy_0:S(1) -> dx_0:S(1) | "
            "y_0:B dy_0:P -> dx_0:P");
  EXPECT_EQ(CandidatesToString("gelu_grad", {"f32[4,6]", "f32[4,6]"}),
            "x_0:S(0) dy_0:S(0) -> dx_0:S(0) | x_0:S(1) dy_0:S(1) -> dx_0:S(1) | "
            "x_0:B dy_0:P -> dx_0:P");
  EXPECT_EQ(CandidatesToString("silu_grad", {"f32[5]", "f32[5]"}),
            "x_0:S(0) dy_0:S(0) -> dx_0:S(0) | x_0:B dy_0:P -> dx_0:P");
}

TEST(NnOpsRules, Dropout) {
  EXPECT_EQ(CandidatesToString("dropout", {"f32[4,6]"}),
            "in_0:S(0) -> out_0:S(0) mask_0:S(0) | in_0:S(1) -> out_0:S(1) mask_0:S(1)");
  EXPECT_EQ(CandidatesToString("dropout", {"f32[4,6]", "f32[4,6]"}, {"rate=0.1"}),
            "in_0:S(0) _add_to_output_0:S(0) -> out_0:S(0) mask_0:S(0) | "
            "in_0:S(1) _add_to_output_0:S(1) -> out_0:S(1) mask_0:S(1)");
  EXPECT_EQ(CandidatesToString("dropout_grad", {"f32[4,6]", "bool[4,6]"}, {"scale=2"}),
            "dy_0:S(0) mask_0:S(0) -> dx_0:S(0) | dy_0:S(1) mask_0:S(1) -> dx_0:S(1) | "
            "dy_0:P mask_0:B -> dx_0:P");
}

TEST(NnOpsRules, SparseSoftmaxCrossEntropy) {
  EXPECT_EQ(CandidatesToString("sparse_softmax_cross_entropy", {"f32[4,6,10]", "i64[4,6]"},
                               {"depth=10"}),
            "prediction_0:S(0) label_0:S(0) -> prob_0:S(0) out_0:S(0)");
  EXPECT_EQ(CandidatesToString("sparse_softmax_cross_entropy_ms", {"f32[4,6,10]", "i32[4,6]"},
                               {"depth=10"}),
            "prediction_0:S(0) label_0:S(0) -> prob_0:S(0) out_0:S(0) | "
            "prediction_0:S(2) label_0:B -> prob_0:S(2) out_0:P");
  EXPECT_EQ(CandidatesToString("sparse_softmax_cross_entropy_grad",
                               {"f32[4]", "i64[4]", "f32[4,10]"}, {"depth=10"}),
            "dy_0:S(0) label_0:S(0) prob_0:S(0) -> prediction_diff_0:S(0)");
  EXPECT_EQ(CandidatesToString("sparse_softmax_cross_entropy_ms_grad",
                               {"f32[4]", "i64[4]", "f32[4,10]"}, {"depth=10"}),
            "dy_0:S(0) label_0:S(0) prob_0:S(0) -> prediction_diff_0:S(0) | "
            "dy_0:B label_0:B prob_0:S(1) -> prediction_diff_0:S(1)");
}

TEST(NnOpsRules, BiasAdd) {
  EXPECT_EQ(CandidatesToString("bias_add", {"f32[4,6,8]", "f32[6]"}),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:S(2) b_0:B -> out_0:S(2) | "
            "a_0:S(1) b_0:S(0) -> out_0:S(1) | a_0:P b_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("bias_add", {"f32[4,6]", "f32[6]"}, {"axis=-1"}),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:S(1) b_0:S(0) -> out_0:S(1) | "
            "a_0:P b_0:P -> out_0:P");
}

TEST(NnOpsRules, Conv2d) {
  const std::vector<std::string> attrs = {"filters=6", "kernel_size=3,3"};
  EXPECT_EQ(CandidatesToString("conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]", "f32[6]"}, attrs),
            "in_0:S(0) weight_0:B bias_0:B -> out_0:S(0) | "
            "in_0:B weight_0:S(0) bias_0:S(0) -> out_0:S(1) | "
            "in_0:S(1) weight_0:S(1) bias_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]"}, attrs),
            "in_0:S(0) weight_0:B -> out_0:S(0) | in_0:B weight_0:S(0) -> out_0:S(1) | "
            "in_0:S(1) weight_0:S(1) -> out_0:P");
  EXPECT_EQ(CandidatesToString("conv2d",
                               {"f32[4,3,8,8]", "f32[6,3,3,3]", "f32[6]", "f32[4,6,6,6]"}, attrs),
            "in_0:S(0) weight_0:B bias_0:B _add_to_output_0:S(0) -> out_0:S(0) | "
            "in_0:B weight_0:S(0) bias_0:S(0) _add_to_output_0:S(1) -> out_0:S(1) | "
            "in_0:S(1) weight_0:S(1) bias_0:P _add_to_output_0:P -> out_0:P");
  // Grouped convolutions keep OneFlow's data-parallel candidate only.
  EXPECT_EQ(CandidatesToString("conv2d", {"f32[4,4,8,8]", "f32[6,2,3,3]"},
                               {"filters=6", "kernel_size=3,3", "groups=2"}),
            "in_0:S(0) weight_0:B -> out_0:S(0)");
}

// ---------------------------------------------------------------------------
// Shape functions

TEST(NnOpsShapes, Outputs) {
  // Statistics keep the leading dims; f32 for half inputs.
  EXPECT_EQ(OutputDescs("layer_norm", {"f16[4,6,8]", "f16[8]", "f16[8]"}, {"begin_norm_axis=2"}),
            "f16[4,6,8] f32[4,6] f32[4,6]");
  EXPECT_EQ(OutputDescs("layer_norm_param_grad",
                        {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[4,6]"},
                        {"begin_params_axis=1"}),
            "f32[6,8] f32[6,8]");
  EXPECT_EQ(OutputDescs("rms_norm", {"bf16[4,6,8]"}, {"normalized_shape=6,8"}),
            "bf16[4,6,8] f32[4]");
  EXPECT_EQ(OutputDescs("rms_norm_param_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4]"}),
            "f32[6,8]");
  EXPECT_EQ(OutputDescs("dropout", {"f16[4,6]"}), "f16[4,6] bool[4,6]");
  EXPECT_EQ(OutputDescs("sparse_softmax_cross_entropy", {"f32[4,6,10]", "i32[4,6]"},
                        {"depth=10"}),
            "f32[4,6,10] f32[4,6]");
  // (8 + 2*1 - 3) / 2 + 1 = 4; dilation 2 widens the window to 5: 8 - 5 + 1.
  EXPECT_EQ(OutputDescs("conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]"},
                        {"filters=6", "kernel_size=3,3", "strides=2,1", "padding_before=1,0",
                         "dilation_rate=1,2"}),
            "f32[4,6,4,4]");
}

TEST(NnOpsShapes, NormErrors) {
  EXPECT_THAT(OutputDescs("layer_norm", {"f32[4,6]"}, {"begin_norm_axis=2"}),
              HasSubstr("x_0 f32[4,6]: attribute begin_norm_axis 2 is out of range"));
  EXPECT_THAT(OutputDescs("layer_norm", {"f32[4,6]"}, {"begin_params_axis=-3"}),
              HasSubstr("attribute begin_params_axis -3 is out of range"));
  EXPECT_THAT(OutputDescs("layer_norm", {"f32[4,6]", "f32[4]", "f32[6]"}),
              HasSubstr("beta_0 is f32[4] but must have shape [6]"));
  EXPECT_THAT(OutputDescs("layer_norm", {"f32[4,6]", "f32[6]", "f16[6]"}),
              HasSubstr("gamma_0 is f16[6]"));
  EXPECT_THAT(OutputDescs("layer_norm_grad", {"f32[4,6]", "f32[4,6]", "f32[6]", "f32[4]"}),
              HasSubstr("mean_0 is f32[6] but must be f32[4]"));
  EXPECT_THAT(OutputDescs("layer_norm_grad", {"f32[4,6]", "f32[4,7]", "f32[4]", "f32[4]"}),
              HasSubstr("dy_0 is f32[4,6] but x_0 is f32[4,7]"));
  EXPECT_THAT(OutputDescs("layer_norm_grad",
                          {"f32[4,6]", "f32[4,6]", "f32[4]", "f32[4]", "f32[5]"}),
              HasSubstr("gamma_0 is f32[5] but must have shape [6]"));
  // half inputs keep f32 statistics
  EXPECT_THAT(OutputDescs("layer_norm_param_grad", {"f16[4,6]", "f16[4,6]", "f16[4]", "f16[4]"}),
              HasSubstr("mean_0 is f16[4] but must be f32[4]"));
  EXPECT_THAT(OutputDescs("layer_norm_param_grad", {"f32[4,6]", "f32[4,6]", "f32[4]", "f32[4,6]"}),
              HasSubstr("inv_variance_0 is f32[4,6] but mean_0 is f32[4]"));
  EXPECT_THAT(OutputDescs("rms_norm", {"f32[4,6]"}, {"normalized_shape=4"}),
              HasSubstr("attribute normalized_shape [4] is not the trailing dims of x_0 f32[4,6]"));
  EXPECT_THAT(OutputDescs("rms_norm", {"f32[4,6]"}, {"normalized_shape=1,4,6"}),
              HasSubstr("attribute normalized_shape [1,4,6]"));
  EXPECT_THAT(OutputDescs("rms_norm", {"f32[4,6]", "f32[4,6]"}, {"normalized_shape=6"}),
              HasSubstr("weight_0 is f32[4,6] but must have shape [6]"));
  EXPECT_THAT(OutputDescs("rms_norm_grad", {"f32[4,6]", "f32[4,6]", "f32[5]"}),
              HasSubstr("inv_rms_0 is f32[5] but must be f32[4]"));
  EXPECT_THAT(OutputDescs("rms_norm_param_grad", {"f32[4,6]", "f32[4,6]", "f32[4,6,1]"}),
              HasSubstr("inv_rms_0 is f32[4,6,1]"));
}

TEST(NnOpsShapes, ActivationAndDropoutErrors) {
  EXPECT_THAT(OutputDescs("relu_grad", {"f32[4,6]", "f32[4,5]"}),
              HasSubstr("dy_0 is f32[4,5] but y_0 is f32[4,6]"));
  EXPECT_THAT(OutputDescs("softmax_grad", {"f32[4,6]", "f16[4,6]"}),
              HasSubstr("dy_0 is f16[4,6] but y_0 is f32[4,6]"));
  EXPECT_THAT(OutputDescs("silu_grad", {"f32[4]", "f32[5]"}), HasSubstr("x_0 is f32[4]"));
  EXPECT_THAT(OutputDescs("dropout", {"f32[4,6]"}, {"rate=1.5"}),
              HasSubstr("attribute rate 1.5 must be in [0, 1]"));
  EXPECT_THAT(OutputDescs("dropout", {"f32[4,6]", "f32[4,5]"}),
              HasSubstr("_add_to_output_0 is f32[4,5] but in_0 is f32[4,6]"));
  EXPECT_THAT(OutputDescs("dropout_grad", {"f32[4,6]", "i8[4,6]"}, {"scale=2"}),
              HasSubstr("mask_0 is i8[4,6] but must be bool[4,6]"));
  EXPECT_THAT(OutputDescs("dropout_grad", {"f32[4,6]", "bool[4,6]"}, {"scale=0.5"}),
              HasSubstr("attribute scale 0.5 must be >= 1"));
}

TEST(NnOpsShapes, SparseCrossEntropyErrors) {
  EXPECT_THAT(OutputDescs("sparse_softmax_cross_entropy", {"f32[4,10]", "f32[4]"}, {"depth=10"}),
              HasSubstr("label_0 is f32[4] but must be an integer label tensor (i32 or i64)"));
  EXPECT_THAT(OutputDescs("sparse_softmax_cross_entropy_ms", {"f32[4,10]", "i64[5]"},
                          {"depth=10"}),
              HasSubstr("label_0 is i64[5] but must have shape [4]"));
  EXPECT_THAT(OutputDescs("sparse_softmax_cross_entropy", {"f32[4,10]", "i64[4]"}, {"depth=12"}),
              HasSubstr("attribute depth 12 does not match the class dim of "
                        "prediction_0 f32[4,10]"));
  EXPECT_THAT(OutputDescs("sparse_softmax_cross_entropy", {"f32[10]", "i64[]"}, {"depth=10"}),
              HasSubstr("prediction_0 f32[10] must have rank >= 2"));
  EXPECT_THAT(OutputDescs("sparse_softmax_cross_entropy_grad",
                          {"f32[5]", "i64[4]", "f32[4,10]"}, {"depth=10"}),
              HasSubstr("dy_0 is f32[5] but must be f32[4]"));
  EXPECT_THAT(OutputDescs("sparse_softmax_cross_entropy_ms_grad",
                          {"f32[4]", "u8[4]", "f32[4,10]"}, {"depth=10"}),
              HasSubstr("label_0 is u8[4]"));
}

TEST(NnOpsShapes, BiasAddErrors) {
  EXPECT_THAT(OutputDescs("bias_add", {"f32[4,6]", "f32[6]"}, {"axis=2"}),
              HasSubstr("a_0 f32[4,6]: attribute axis 2 is out of range"));
  EXPECT_THAT(OutputDescs("bias_add", {"f32[4,6]", "f32[4]"}),
              HasSubstr("b_0 is f32[4] but must be 1-D with extent 6"));
  EXPECT_THAT(OutputDescs("bias_add", {"f32[4,6]", "f32[1,6]"}),
              HasSubstr("b_0 is f32[1,6]"));
}

TEST(NnOpsShapes, Conv2dErrors) {
  const std::vector<std::string> k3 = {"filters=6", "kernel_size=3,3"};
  std::vector<std::string> nhwc = k3;
  nhwc.push_back("data_format=channels_last");
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,8,8,3]", "f32[6,3,3,3]"}, nhwc),
              HasSubstr("attribute data_format \"channels_last\" is not supported"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,4,8,8]", "f32[6,3,3,3]"}, k3),
              HasSubstr("weight_0 is f32[6,3,3,3] but must have shape [6,4,3,3]"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,3,2,8]", "f32[6,3,3,3]"}, k3),
              HasSubstr("kernel_size[0]=3 (dilated to 3) is larger than the padded input "
                        "extent 2"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]"},
                          {"filters=6", "kernel_size=3,3", "strides=0,1"}),
              HasSubstr("attribute strides [0,1] must have 2 entries, each >= 1"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,3,8,8]", "f32[6,3,3]"}, {"filters=6", "kernel_size=3"}),
              HasSubstr("weight_0 f32[6,3,3] must have rank 4"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,3,8,8]", "f32[6,1,3,3]"},
                          {"filters=6", "kernel_size=3,3", "groups=2"}),
              HasSubstr("filters 6 and groups 2"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]", "f32[3]"}, k3),
              HasSubstr("bias_0 is f32[3] but must be f32[6]"));
  EXPECT_THAT(OutputDescs("conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]", "f32[6]", "f32[4,6,8,8]"},
                          k3),
              HasSubstr("_add_to_output_0 is f32[4,6,8,8] but out_0 is f32[4,6,6,6]"));
}

// ---------------------------------------------------------------------------
// End-to-end choices (SPEC.md §2 for 1-D, §3 for N-D)

TEST(NnOpsInfer, LayerNormKeepsADataParallelProducerOnA2dMesh) {
  // Per-value list (v = 2): [x:S0 -> S0, all-B]. Product: (S0,S0) (S0,B)
  // (B,S0) (B,B); all pass (x dim 0: 8 -> 4 -> 2). (S0,B) is the first
  // candidate where every input matches its producer: chosen.
  EXPECT_EQ(InferToString({"layer_norm", "cpu:0-3 [2,2]",
                           {"f32[8,16]:(S(0),B)", "f32[16]:(B,B)", "f32[16]:(B,B)"}}),
            "x_0:(S(0),B) beta_0:(B,B) gamma_0:(B,B) -> "
            "y_0:(S(0),B) mean_0:(S(0),B) inv_variance_0:(S(0),B)");
}

TEST(NnOpsInfer, LayerNormOnAColumnSplitTiesToEmissionOrder) {
  // N = 2, x S(1) (T = 512). x:S0 -> ...: order -20 (beta, gamma match),
  // cost S1->S0 = 512. all-B: order -20, cost S1->B = 512. Tie -> the
  // earlier candidate.
  EXPECT_EQ(InferToString({"layer_norm", "cpu:0-1", {"f32[8,16]:S(1)", "f32[16]:B", "f32[16]:B"}}),
            "x_0:S(0) beta_0:B gamma_0:B -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0)");
}

TEST(NnOpsInfer, Conv2dPicksTheOutChannelSplitForASplitWeight) {
  // N = 2, in B, weight S(0). OneFlow's conv lists data parallel only
  // (order 0) and all-B (-10): all-B. Our out-channel split (-20) is
  // offered under `planned`, where it boxes nothing.
  const std::vector<std::string> attrs = {"filters=6", "kernel_size=3,3"};
  EXPECT_EQ(InferToString({"conv2d", "cpu:0-1", {"f32[4,3,8,8]:B", "f32[6,3,3,3]:S(0)"}, attrs}),
            "in_0:B weight_0:B -> out_0:B");
  InferSpec planned{"conv2d", "cpu:0-1", {"f32[4,3,8,8]:B", "f32[6,3,3,3]:S(0)"}, attrs};
  planned.cost = "planned";
  EXPECT_EQ(InferToString(planned), "in_0:B weight_0:S(0) -> out_0:S(1)");
  // With bias B the out-channel split (order -20, cost B->S(0) = 2^31 - 1)
  // ties with all-B (order -20, cost S(0)->B = T(weight) = 648): all-B.
  EXPECT_EQ(InferToString({"conv2d", "cpu:0-1",
                           {"f32[4,3,8,8]:B", "f32[6,3,3,3]:S(0)", "f32[6]:B"}, attrs}),
            "in_0:B weight_0:B bias_0:B -> out_0:B");
  // bias S(0) too: OneFlow's list still gives all-B; `planned` keeps all.
  EXPECT_EQ(InferToString({"conv2d", "cpu:0-1",
                           {"f32[4,3,8,8]:B", "f32[6,3,3,3]:S(0)", "f32[6]:S(0)"}, attrs}),
            "in_0:B weight_0:B bias_0:B -> out_0:B");
  planned.inputs = {"f32[4,3,8,8]:B", "f32[6,3,3,3]:S(0)", "f32[6]:S(0)"};
  EXPECT_EQ(InferToString(planned), "in_0:B weight_0:S(0) bias_0:S(0) -> out_0:S(1)");
}

TEST(NnOpsInfer, PartialGradientsFlowThroughOurAdditions) {
  // relu_grad, N = 4: y B, dy P. OneFlow's list: splits (order 0, dy
  // P != S) and all-B (-10): all-B. Ours y:B dy:P -> P (-20) boxes
  // nothing, under `planned`.
  EXPECT_EQ(InferToString({"relu_grad", "cpu:0-3", {"f32[8,8]:B", "f32[8,8]:P"}}),
            "y_0:B dy_0:B -> dx_0:B");
  InferSpec planned{"relu_grad", "cpu:0-3", {"f32[8,8]:B", "f32[8,8]:P"}};
  planned.cost = "planned";
  EXPECT_EQ(InferToString(planned), "y_0:B dy_0:P -> dx_0:P");
  // bias_add a:P b:P -> out:P is ours too; OneFlow's a:S(0) b:B wins
  // there (order -10, the earlier of two ties).
  EXPECT_EQ(InferToString({"bias_add", "cpu:0-1", {"f32[4,6]:P", "f32[6]:P"}}),
            "a_0:S(0) b_0:B -> out_0:S(0)");
  planned = InferSpec{"bias_add", "cpu:0-1", {"f32[4,6]:P", "f32[6]:P"}};
  planned.cost = "planned";
  EXPECT_EQ(InferToString(planned), "a_0:P b_0:P -> out_0:P");
}

TEST(NnOpsInfer, ModelParallelCrossEntropyKeepsClassSplitLogits) {
  // N = 2: prediction S(1), label B. [S0,S0]: order 0; [S1,B -> prob S1,
  // out P]: -20; all-B: -10.
  EXPECT_EQ(InferToString({"sparse_softmax_cross_entropy_ms", "cpu:0-1",
                           {"f32[8,10]:S(1)", "i64[8]:B"}, {"depth=10"}}),
            "prediction_0:S(1) label_0:B -> prob_0:S(1) out_0:P");
}

TEST(NnOpsInfer, LayerNormParamGradKeepsAHiddenSplit) {
  // N = 2, dy and x S(2) (tensor-parallel hidden dim), stats B. OneFlow's
  // list: batch splits (order 0) and all-B (-20): all-B. Ours dy,x:S(2)
  // stats:B (-40) is `planned`'s.
  InferSpec spec{"layer_norm_param_grad", "cpu:0-1",
                 {"f32[4,6,8]:S(2)", "f32[4,6,8]:S(2)", "f32[4,6]:B", "f32[4,6]:B"},
                 {"begin_params_axis=2"}};
  EXPECT_EQ(InferToString(spec),
            "dy_0:B x_0:B mean_0:B inv_variance_0:B -> gamma_diff_0:B beta_diff_0:B");
  spec.cost = "planned";
  EXPECT_EQ(InferToString(spec),
            "dy_0:S(2) x_0:S(2) mean_0:B inv_variance_0:B -> "
            "gamma_diff_0:S(0) beta_diff_0:S(0)");
}

}  // namespace
}  // namespace oneflow_sbp::testing
