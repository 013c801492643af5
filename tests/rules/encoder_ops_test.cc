// The ops a BERT sentence encoder adds to the catalog (ops/encoder_ops.cc
// and the key_padding_mask of ops/attention_ops.cc): 1-D candidate lists
// derived by hand (2 ranks, without the engine's all-B), shape functions
// and their errors, and choices of the engine on a 2-D mesh.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kQkv = {"f32[2,4,6,8]", "f32[2,4,6,8]", "f32[2,4,6,8]"};

std::vector<std::string> With(std::vector<std::string> v, const std::string& extra) {
  v.push_back(extra);
  return v;
}

// ------------------------------------------------------------ attention

TEST(EncoderOpsRules, AttentionMaskSplitsWithTheBatchAndIsWholeOtherwise) {
  // The mask [B, Sk] has no head dim and every rank needs all Sk keys:
  // S(0) with the batch, B for the head split, the query-row split and
  // value:P.
  EXPECT_EQ(CandidatesToString("scaled_dot_product_attention", With(kQkv, "i64[2,6]")),
            "query_0:S(0) key_0:S(0) value_0:S(0) key_padding_mask_0:S(0) -> out_0:S(0) | "
            "query_0:S(1) key_0:S(1) value_0:S(1) key_padding_mask_0:B -> out_0:S(1) | "
            "query_0:S(2) key_0:B value_0:B key_padding_mask_0:B -> out_0:S(2) | "
            "query_0:B key_0:B value_0:P key_padding_mask_0:B -> out_0:P");
  EXPECT_EQ(CandidatesToString("scaled_dot_product_attention_grad",
                               With(With(kQkv, "f32[2,4,6,8]"), "bool[2,6]")),
            "dout_0:S(0) query_0:S(0) key_0:S(0) value_0:S(0) key_padding_mask_0:S(0) -> "
            "dquery_0:S(0) dkey_0:S(0) dvalue_0:S(0) | "
            "dout_0:S(1) query_0:S(1) key_0:S(1) value_0:S(1) key_padding_mask_0:B -> "
            "dquery_0:S(1) dkey_0:S(1) dvalue_0:S(1) | "
            "dout_0:S(2) query_0:S(2) key_0:B value_0:B key_padding_mask_0:B -> "
            "dquery_0:S(2) dkey_0:P dvalue_0:P | "
            "dout_0:P query_0:B key_0:B value_0:B key_padding_mask_0:B -> "
            "dquery_0:P dkey_0:P dvalue_0:P");
}

TEST(EncoderOpsRules, AttentionWithoutMaskKeepsItsList) {
  EXPECT_EQ(CandidatesToString("scaled_dot_product_attention", kQkv),
            "query_0:S(0) key_0:S(0) value_0:S(0) -> out_0:S(0) | "
            "query_0:S(1) key_0:S(1) value_0:S(1) -> out_0:S(1) | "
            "query_0:S(2) key_0:B value_0:B -> out_0:S(2) | "
            "query_0:B key_0:B value_0:P -> out_0:P");
}

TEST(EncoderOpsShapes, AttentionMaskMustBeBatchByKeysOfAnIntegerOrBoolDtype) {
  const std::string op = "scaled_dot_product_attention";
  EXPECT_EQ(OutputDescs(op, With(kQkv, "bool[2,6]")), "f32[2,4,6,8]");
  EXPECT_EQ(OutputDescs(op, With(kQkv, "i32[2,6]")), "f32[2,4,6,8]");
  EXPECT_THAT(OutputDescs(op, With(kQkv, "i64[2,5]")),
              HasSubstr("key_padding_mask_0 i64[2,5] must be [B, Sk] = [2,6] for key_0 "
                        "f32[2,4,6,8]"));
  EXPECT_THAT(OutputDescs(op, With(kQkv, "i64[6]")), HasSubstr("must be [B, Sk] = [2,6]"));
  EXPECT_THAT(OutputDescs(op, With(kQkv, "i64[4,6]")), HasSubstr("must be [B, Sk] = [2,6]"));
  EXPECT_THAT(OutputDescs(op, With(kQkv, "f32[2,6]")),
              HasSubstr("key_padding_mask_0 f32[2,6] must be bool, i32 or i64"));
  EXPECT_THAT(OutputDescs(op, With(kQkv, "f32[2,6]")), HasSubstr(op));
  EXPECT_THAT(OutputDescs("scaled_dot_product_attention_grad",
                          With(With(kQkv, "f32[2,4,6,8]"), "u8[2,6]")),
              HasSubstr("key_padding_mask_0 u8[2,6] must be bool, i32 or i64"));
}

TEST(EncoderOpsRules, MaskedAttentionOnAMeshKeepsDataParallelAndHeadSplits) {
  // Batch on mesh axis 0, heads on axis 1: the mask follows the batch and
  // is whole along the heads, so nothing is boxed.
  EXPECT_EQ(InferToString({"scaled_dot_product_attention", "cpu:0-3 [2,2]",
                           {"f32[4,4,6,8]:(S(0),S(1))", "f32[4,4,6,8]:(S(0),S(1))",
                            "f32[4,4,6,8]:(S(0),S(1))", "i64[4,6]:(S(0),B)"}}),
            "query_0:(S(0),S(1)) key_0:(S(0),S(1)) value_0:(S(0),S(1)) "
            "key_padding_mask_0:(S(0),B) -> out_0:(S(0),S(1))");
}

// ------------------------------------------------------ masked_mean_pool

TEST(EncoderOpsRules, MaskedMeanPoolNeverSplitsTheSequence) {
  EXPECT_EQ(CandidatesToString("masked_mean_pool", {"f32[4,6,8]", "bool[4,6]"}),
            "x_0:S(0) mask_0:S(0) -> y_0:S(0) | x_0:S(2) mask_0:B -> y_0:S(1) | "
            "x_0:P mask_0:B -> y_0:P");
  EXPECT_EQ(CandidatesToString("masked_mean_pool_grad", {"f16[4,8]", "f32[4,6]"}),
            "dy_0:S(0) mask_0:S(0) -> dx_0:S(0) | dy_0:S(1) mask_0:B -> dx_0:S(2) | "
            "dy_0:P mask_0:B -> dx_0:P");
}

TEST(EncoderOpsShapes, MaskedMeanPool) {
  EXPECT_EQ(OutputDescs("masked_mean_pool", {"bf16[4,6,8]", "i64[4,6]"}), "bf16[4,8]");
  EXPECT_EQ(OutputDescs("masked_mean_pool_grad", {"f32[4,8]", "bool[4,6]"}), "f32[4,6,8]");
  EXPECT_THAT(OutputDescs("masked_mean_pool", {"f32[4,6,8]", "i64[4,5]"}),
              HasSubstr("mask_0 i64[4,5] must be [B, S] = [4,6] for x_0 f32[4,6,8] [B,S,H]"));
  EXPECT_THAT(OutputDescs("masked_mean_pool", {"f32[4,6,8]", "i64[4,6,1]"}),
              HasSubstr("mask_0 i64[4,6,1] must be [B, S] = [4,6]"));
  EXPECT_THAT(OutputDescs("masked_mean_pool", {"f32[4,6]", "i64[4,6]"}), HasSubstr("x_0"));
  EXPECT_THAT(OutputDescs("masked_mean_pool", {"i32[4,6,8]", "i64[4,6]"}),
              HasSubstr("x_0 i32[4,6,8] must have a floating-point dtype"));
  EXPECT_THAT(OutputDescs("masked_mean_pool_grad", {"f32[3,8]", "i64[4,6]"}),
              HasSubstr("mask_0 i64[4,6] must be [B, S] = [3,6] for dy_0 f32[3,8] [B,H]"));
  EXPECT_THAT(OutputDescs("masked_mean_pool_grad", {"f32[4,8]", "i64[4]"}), HasSubstr("mask_0"));
}

TEST(EncoderOpsRules, PooledEncoderOutputStaysDataParallel) {
  // [2,2]: batch on axis 0, hidden on axis 1 (a Megatron-split layer's
  // output): no boxing, y keeps both splits.
  EXPECT_EQ(InferToString({"masked_mean_pool", "cpu:0-3 [2,2]",
                           {"f32[4,6,8]:(S(0),S(2))", "i64[4,6]:(S(0),B)"}}),
            "x_0:(S(0),S(2)) mask_0:(S(0),B) -> y_0:(S(0),S(1))");
}

// ---------------------------------------------------------- l2_normalize

TEST(EncoderOpsRules, L2NormalizeSplitsEveryDimButTheAxis) {
  EXPECT_EQ(CandidatesToString("l2_normalize", {"f32[4,6]"}), "x_0:S(0) -> y_0:S(0)");
  EXPECT_EQ(CandidatesToString("l2_normalize", {"f32[4,6,8]"}, {"axis=0"}),
            "x_0:S(1) -> y_0:S(1) | x_0:S(2) -> y_0:S(2)");
  EXPECT_EQ(CandidatesToString("l2_normalize", {"f32[6]"}), "");
  EXPECT_EQ(CandidatesToString("l2_normalize_grad", {"f32[4,6]", "f32[4,6]"}, {"axis=-1"}),
            "dy_0:S(0) x_0:S(0) -> dx_0:S(0) | dy_0:P x_0:B -> dx_0:P");
}

TEST(EncoderOpsShapes, L2Normalize) {
  EXPECT_EQ(OutputDescs("l2_normalize", {"f16[4,6]"}), "f16[4,6]");
  EXPECT_EQ(OutputDescs("l2_normalize_grad", {"f32[4,6]", "f32[4,6]"}, {"axis=0"}), "f32[4,6]");
  EXPECT_THAT(OutputDescs("l2_normalize", {"f32[4,6]"}, {"axis=2"}),
              HasSubstr("attribute axis 2 is out of range for rank 2"));
  EXPECT_THAT(OutputDescs("l2_normalize", {"f32[4,6]"}, {"epsilon=-1"}),
              HasSubstr("attribute epsilon -1 must be finite and >= 0"));
  EXPECT_THAT(OutputDescs("l2_normalize", {"i64[4,6]"}),
              HasSubstr("x_0 i64[4,6] must have a floating-point dtype"));
  EXPECT_THAT(OutputDescs("l2_normalize", {"f32[]"}), HasSubstr("x_0"));
  EXPECT_THAT(OutputDescs("l2_normalize_grad", {"f32[4,5]", "f32[4,6]"}), HasSubstr("dy_0"));
}

}  // namespace
}  // namespace oneflow_sbp::testing
