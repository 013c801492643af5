// Indexing and "like" ops (ops/index_ops.cc): golden 1-D candidate lists
// (emission order, without the appended all-B), shape-function errors, and
// end-to-end choices worked out by hand from SPEC.md §2 (1-D) and §3/§4
// (N-D).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// --- golden candidate lists ---------------------------------------------------

TEST(IndexOpRules, Embedding) {
  // OneFlow's indices splits, then ours: column-parallel and vocab-parallel.
  EXPECT_EQ(CandidatesToString("embedding", {"f32[10,4]", "i64[3,5]"}),
            "weight_0:B indices_0:S(0) -> out_0:S(0) | "
            "weight_0:B indices_0:S(1) -> out_0:S(1) | "
            "weight_0:S(1) indices_0:B -> out_0:S(2) | "
            "weight_0:S(0) indices_0:B -> out_0:P");
  // OneFlow drops the indices splits with scale_grad_by_freq; ours stay.
  EXPECT_EQ(CandidatesToString("embedding", {"f32[10,4]", "i32[3]"},
                               {"scale_grad_by_freq=true"}),
            "weight_0:S(1) indices_0:B -> out_0:S(1) | "
            "weight_0:S(0) indices_0:B -> out_0:P");
  // Scalar index: out is [4], the embedding dim is out's dim 0.
  EXPECT_EQ(CandidatesToString("embedding", {"f32[10,4]", "i64[]"}),
            "weight_0:S(1) indices_0:B -> out_0:S(0) | "
            "weight_0:S(0) indices_0:B -> out_0:P");
}

TEST(IndexOpRules, EmbeddingGrad) {
  EXPECT_EQ(CandidatesToString("embedding_grad", {"f32[3,5,4]", "f32[10,4]", "i64[3,5]"}),
            "dy_0:S(0) weight_0:B indices_0:S(0) -> dx_0:P | "
            "dy_0:S(1) weight_0:B indices_0:S(1) -> dx_0:P | "
            "dy_0:S(2) weight_0:S(1) indices_0:B -> dx_0:S(1) | "
            "dy_0:P weight_0:B indices_0:B -> dx_0:P | "
            "dy_0:B weight_0:S(0) indices_0:B -> dx_0:S(0)");
  EXPECT_EQ(CandidatesToString("embedding_grad", {"f32[3,4]", "f32[10,4]", "i64[3]"},
                               {"scale_grad_by_freq=true", "padding_idx=0"}),
            "dy_0:S(1) weight_0:S(1) indices_0:B -> dx_0:S(1) | "
            "dy_0:P weight_0:B indices_0:B -> dx_0:P | "
            "dy_0:B weight_0:S(0) indices_0:B -> dx_0:S(0)");
}

TEST(IndexOpRules, Gather) {
  // axis 1, nd(indices) = 2: indices dims become out dims 1, 2; in dim 2
  // becomes out dim 3.
  EXPECT_EQ(CandidatesToString("gather", {"f32[6,7,8]", "i64[2,3]"}, {"axis=1"}),
            "in_0:B indices_0:S(0) -> out_0:S(1) | in_0:B indices_0:S(1) -> out_0:S(2) | "
            "in_0:S(0) indices_0:B -> out_0:S(0) | in_0:S(1) indices_0:B -> out_0:P | "
            "in_0:S(2) indices_0:B -> out_0:S(3) | in_0:P indices_0:B -> out_0:P");
  // Scalar indices remove the gathered dim.
  EXPECT_EQ(CandidatesToString("gather", {"f32[6,7]", "i32[]"}),
            "in_0:S(0) indices_0:B -> out_0:P | in_0:S(1) indices_0:B -> out_0:S(0) | "
            "in_0:P indices_0:B -> out_0:P");
  // Negative axis wraps.
  EXPECT_EQ(CandidatesToString("gather", {"f32[6,7]", "i64[4]"}, {"axis=-1"}),
            "in_0:B indices_0:S(0) -> out_0:S(1) | in_0:S(0) indices_0:B -> out_0:S(0) | "
            "in_0:S(1) indices_0:B -> out_0:P | in_0:P indices_0:B -> out_0:P");
}

TEST(IndexOpRules, GatherPartialInputIsAppendedAfterOneFlowsList) {
  // Issue 23: gather is linear in `in`, so in:P indices:B -> out:P is exact
  // (dim_gather has it in OneFlow). It is ours, so it comes last, after
  // OneFlow's own candidates, whose order is unchanged.
  const std::string c = CandidatesToString("gather", {"f32[8,4]", "i64[5]"});
  EXPECT_EQ(c,
            "in_0:B indices_0:S(0) -> out_0:S(0) | in_0:S(0) indices_0:B -> out_0:P | "
            "in_0:S(1) indices_0:B -> out_0:S(1) | in_0:P indices_0:B -> out_0:P");
  // The rule marks where ours start (SbpContext::OursFollow()).
  absl::StatusOr<CandidateParts> parts = SplitCandidates("gather", {"f32[8,4]", "i64[5]"});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_TRUE(parts->marked);
  EXPECT_EQ(parts->oneflow,
            "in_0:B indices_0:S(0) -> out_0:S(0) | in_0:S(0) indices_0:B -> out_0:P | "
            "in_0:S(1) indices_0:B -> out_0:S(1)");
  EXPECT_EQ(parts->ours, "in_0:P indices_0:B -> out_0:P");
}

TEST(IndexOpRules, DimGatherEqualExtents) {
  EXPECT_EQ(CandidatesToString("dim_gather", {"f32[4,6]", "i64[4,6]"}, {"dim=1"}),
            "input_0:S(0) index_0:S(0) -> output_0:S(0) | "
            "input_0:B index_0:S(1) -> output_0:S(1) | "
            "input_0:P index_0:B -> output_0:P");
}

TEST(IndexOpRules, DimGatherUnequalExtentDropsTheJointSplit) {
  // SPEC.md §9 #15: index has 2 rows, input 4; OneFlow would still emit
  // index:S(0) input:S(0), reading input rows 2..3 on rank 1 instead of 1.
  EXPECT_EQ(CandidatesToString("dim_gather", {"f32[4,6]", "i64[2,6]"}, {"dim=1"}),
            "input_0:B index_0:S(1) -> output_0:S(1) | input_0:P index_0:B -> output_0:P");
  // On `dim` the extents may differ freely; off it they are equal here.
  EXPECT_EQ(CandidatesToString("dim_gather", {"f32[4,6]", "i64[9,6]"}, {"dim=0"}),
            "input_0:B index_0:S(0) -> output_0:S(0) | "
            "input_0:S(1) index_0:S(1) -> output_0:S(1) | "
            "input_0:P index_0:B -> output_0:P");
}

TEST(IndexOpRules, WhereSameShapes) {
  EXPECT_EQ(CandidatesToString("where", {"bool[4,6]", "f32[4,6]", "f32[4,6]"}),
            "condition_0:S(0) x_0:S(0) y_0:S(0) -> out_0:S(0) | "
            "condition_0:S(1) x_0:S(1) y_0:S(1) -> out_0:S(1) | "
            "condition_0:B x_0:P y_0:P -> out_0:P");
}

TEST(IndexOpRules, WhereThreeWayBroadcast) {
  // out [3,4,5]. Dim 0: only x has it. Dim 1: condition (its dim 0) and x.
  // Dim 2: x and y (its dim 0); condition has 1 there.
  EXPECT_EQ(CandidatesToString("where", {"bool[4,1]", "f32[3,4,5]", "f32[5]"}),
            "condition_0:B x_0:S(0) y_0:B -> out_0:S(0) | "
            "condition_0:S(0) x_0:S(1) y_0:B -> out_0:S(1) | "
            "condition_0:B x_0:S(2) y_0:S(0) -> out_0:S(2) | "
            "condition_0:B x_0:P y_0:P -> out_0:P");
  // A result dim of extent 1 gives nothing.
  EXPECT_EQ(CandidatesToString("where", {"bool[1,6]", "f32[1,6]", "f32[6]"}),
            "condition_0:S(1) x_0:S(1) y_0:S(0) -> out_0:S(1) | "
            "condition_0:B x_0:P y_0:P -> out_0:P");
}

TEST(IndexOpRules, ReduceSumLike) {
  // keepdims form: like keeps the reduced dim as 1.
  EXPECT_EQ(CandidatesToString("reduce_sum_like", {"f32[4,6,8]", "f32[4,1,8]"}, {"axis=1"}),
            "x_0:S(0) like_0:S(0) -> y_0:S(0) | "
            "x_0:S(1) like_0:B -> y_0:P | x_0:S(1) like_0:P -> y_0:P | "
            "x_0:S(2) like_0:S(2) -> y_0:S(2) | "
            "x_0:B like_0:P -> y_0:B | x_0:P like_0:B -> y_0:P | x_0:P like_0:P -> y_0:P");
  // Dropped form: x dim 2 is like/y dim 1.
  EXPECT_EQ(CandidatesToString("reduce_sum_like", {"f32[4,6,8]", "f32[4,8]"}, {"axis=-2"}),
            "x_0:S(0) like_0:S(0) -> y_0:S(0) | "
            "x_0:S(1) like_0:B -> y_0:P | x_0:S(1) like_0:P -> y_0:P | "
            "x_0:S(2) like_0:S(1) -> y_0:S(1) | "
            "x_0:B like_0:P -> y_0:B | x_0:P like_0:B -> y_0:P | x_0:P like_0:P -> y_0:P");
}

TEST(IndexOpRules, BroadcastLike) {
  // x drops the broadcast dim: like dim 2 is x dim 1.
  EXPECT_EQ(CandidatesToString("broadcast_like", {"f32[4,8]", "f32[4,6,8]"},
                               {"broadcast_axes=1"}),
            "x_0:S(0) like_0:S(0) -> y_0:S(0) | x_0:B like_0:S(1) -> y_0:S(1) | "
            "x_0:S(1) like_0:S(2) -> y_0:S(2) | "
            "x_0:P like_0:P -> y_0:P | x_0:P like_0:B -> y_0:P | x_0:B like_0:P -> y_0:B");
  // keepdims form: x keeps it as 1, so like dim 2 is x dim 2 (OneFlow says
  // x dim 1 here, which is the size-1 dim).
  EXPECT_EQ(CandidatesToString("broadcast_like", {"f32[4,1,8]", "f32[4,6,8]"},
                               {"broadcast_axes=1"}),
            "x_0:S(0) like_0:S(0) -> y_0:S(0) | x_0:B like_0:S(1) -> y_0:S(1) | "
            "x_0:S(2) like_0:S(2) -> y_0:S(2) | "
            "x_0:P like_0:P -> y_0:P | x_0:P like_0:B -> y_0:P | x_0:B like_0:P -> y_0:B");
}

// --- shape functions ----------------------------------------------------------

std::string Error(const std::string& op, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& attrs = {}) {
  return CandidatesToString(op, inputs, attrs);
}

TEST(IndexOpShapes, OutputDescs) {
  EXPECT_EQ(OutputDescs("embedding", {"bf16[10,4]", "i32[3,5]"}), "bf16[3,5,4]");
  EXPECT_EQ(OutputDescs("embedding", {"f32[10,4]", "i64[]"}), "f32[4]");
  EXPECT_EQ(OutputDescs("embedding_grad", {"f32[3,5,4]", "f32[10,4]", "i64[3,5]"}),
            "f32[10,4]");
  EXPECT_EQ(OutputDescs("gather", {"f16[6,7,8]", "i64[2,3]"}, {"axis=1"}), "f16[6,2,3,8]");
  EXPECT_EQ(OutputDescs("gather", {"f32[6,7]", "i64[]"}, {"axis=-1"}), "f32[6]");
  EXPECT_EQ(OutputDescs("dim_gather", {"f64[4,6]", "i32[2,9]"}, {"dim=1"}), "f64[2,9]");
  EXPECT_EQ(OutputDescs("where", {"bool[4,1]", "i32[3,4,5]", "i32[5]"}), "i32[3,4,5]");
  EXPECT_EQ(OutputDescs("reduce_sum_like", {"f32[4,6,8]", "f32[4,8]"}, {"axis=1"}), "f32[4,8]");
  EXPECT_EQ(OutputDescs("reduce_sum_like", {"f32[4,6]", "f32[4,6]"}, {"axis="}), "f32[4,6]");
  EXPECT_EQ(OutputDescs("broadcast_like", {"f32[8]", "f32[4,6,8]"}, {"broadcast_axes=0,1"}),
            "f32[4,6,8]");
}

TEST(IndexOpShapes, EmbeddingErrors) {
  EXPECT_THAT(Error("embedding", {"f32[10,4]", "f32[3]"}),
              HasSubstr("embedding: indices_0 is f32[3] but must be an integer index tensor"));
  EXPECT_THAT(Error("embedding", {"f32[10]", "i64[3]"}),
              HasSubstr("weight_0 f32[10] must have rank 2"));
  EXPECT_THAT(Error("embedding", {"f32[10,4]", "i64[3]"}, {"padding_idx=10"}),
              HasSubstr("attribute padding_idx 10 is out of range for weight_0 f32[10,4] "
                        "(valid: -1 for none, or 0 .. 9)"));
  EXPECT_THAT(Error("embedding", {"f32[10,4]", "i64[3]"}, {"padding_idx=-2"}),
              HasSubstr("attribute padding_idx -2 is out of range"));
  EXPECT_THAT(Error("embedding_grad", {"f32[3,5,5]", "f32[10,4]", "i64[3,5]"}),
              HasSubstr("dy_0 f32[3,5,5] does not match the embedding output [3,5,4]"));
  EXPECT_THAT(Error("embedding_grad", {"f16[3,4]", "f32[10,4]", "i64[3]"}),
              HasSubstr("dy_0 is f16[3,4] but weight_0 is f32[10,4]"));
  EXPECT_THAT(Error("embedding_grad", {"f32[3,4]", "f32[10,4]", "u8[3]"}),
              HasSubstr("indices_0 is u8[3] but must be an integer index tensor"));
}

TEST(IndexOpShapes, GatherErrors) {
  EXPECT_THAT(Error("gather", {"f32[4,5]", "i64[3]"}, {"axis=2"}),
              HasSubstr("gather: in_0 f32[4,5]: attribute axis 2 is out of range for rank 2"));
  EXPECT_THAT(Error("gather", {"f32[4,5]", "i64[3]"}, {"axis=-3"}),
              HasSubstr("attribute axis -3 is out of range"));
  EXPECT_THAT(Error("gather", {"f32[4,5]", "f32[3]"}),
              HasSubstr("indices_0 is f32[3] but must be an integer index tensor"));
  EXPECT_THAT(Error("gather", {"f32[]", "i64[3]"}), HasSubstr("in_0 f32[] must have rank >= 1"));
}

TEST(IndexOpShapes, DimGatherErrors) {
  EXPECT_THAT(Error("dim_gather", {"f32[4,6]", "i64[4,6]"}, {"dim=2"}),
              HasSubstr("input_0 f32[4,6]: attribute dim 2 is out of range for rank 2"));
  EXPECT_THAT(Error("dim_gather", {"f32[4,6]", "i64[4]"}, {"dim=0"}),
              HasSubstr("index_0 i64[4] must have the rank of input_0 f32[4,6] (1 vs 2)"));
  EXPECT_THAT(Error("dim_gather", {"f32[4,6]", "i64[5,6]"}, {"dim=1"}),
              HasSubstr("index_0 i64[5,6] is larger than input_0 f32[4,6] on dim 0 (5 > 4)"));
  EXPECT_THAT(Error("dim_gather", {"f32[4,6]", "f64[4,6]"}, {"dim=1"}),
              HasSubstr("index_0 is f64[4,6] but must be an integer index tensor"));
  // `dim` has no default.
  EXPECT_THAT(Error("dim_gather", {"f32[4,6]", "i64[4,6]"}), StartsWith("error: "));
}

TEST(IndexOpShapes, WhereErrors) {
  EXPECT_THAT(Error("where", {"i32[4]", "f32[4]", "f32[4]"}),
              HasSubstr("where: condition_0 is i32[4] but must be bool"));
  EXPECT_THAT(Error("where", {"bool[4]", "f32[4]", "f64[4]"}),
              HasSubstr("x_0 is f32[4] but y_0 is f64[4]"));
  EXPECT_THAT(Error("where", {"bool[4]", "f32[3]", "f32[4]"}),
              HasSubstr("condition_0 bool[4], x_0 f32[3] and y_0 f32[4] do not broadcast: "
                        "dim 0 of the result would be 4 vs 3 vs 4"));
}

TEST(IndexOpShapes, ReduceSumLikeErrors) {
  EXPECT_THAT(Error("reduce_sum_like", {"f32[4,6,8]", "f32[4,1,8]"}, {"axis=3"}),
              HasSubstr("x_0 f32[4,6,8]: attribute axis 3 is out of range for rank 3"));
  EXPECT_THAT(Error("reduce_sum_like", {"f32[4,6,8]", "f32[4,6]"}, {"axis=1"}),
              HasSubstr("like_0 f32[4,6] is not x_0 f32[4,6,8] reduced over attribute axis "
                        "[1]: expected [4,1,8] or [4,8]"));
  EXPECT_THAT(Error("reduce_sum_like", {"f32[4,6]", "f32[4,5]"}, {"axis="}),
              HasSubstr("like_0 f32[4,5] is not x_0 f32[4,6] reduced over attribute axis []: "
                        "expected [4,6]"));
  EXPECT_THAT(Error("reduce_sum_like", {"f32[4,6]", "f16[1,6]"}, {"axis=0"}),
              HasSubstr("x_0 is f32[4,6] but like_0 is f16[1,6]"));
  EXPECT_THAT(Error("reduce_sum_like", {"f32[4,6]", "f32[1,6]"}, {"axis=0,-2"}),
              HasSubstr("names axis 0 twice"));
}

TEST(IndexOpShapes, BroadcastLikeErrors) {
  EXPECT_THAT(Error("broadcast_like", {"f32[4,8]", "f32[4,6,8]"}, {"broadcast_axes=3"}),
              HasSubstr("like_0 f32[4,6,8]: attribute broadcast_axes 3 is out of range"));
  EXPECT_THAT(Error("broadcast_like", {"f32[4,8]", "f32[4,6,8]"}, {"broadcast_axes="}),
              HasSubstr("attribute broadcast_axes [] must not be empty"));
  EXPECT_THAT(Error("broadcast_like", {"f32[4,7]", "f32[4,6,8]"}, {"broadcast_axes=1"}),
              HasSubstr("x_0 f32[4,7] is not like_0 f32[4,6,8] reduced over attribute "
                        "broadcast_axes [1]: expected [4,1,8] or [4,8]"));
  // keepdims form needs 1 on the broadcast dim.
  EXPECT_THAT(Error("broadcast_like", {"f32[4,6,8]", "f32[4,6,8]"}, {"broadcast_axes=1"}),
              HasSubstr("x_0 f32[4,6,8] is not like_0 f32[4,6,8]"));
}

// --- end-to-end ---------------------------------------------------------------

TEST(IndexOpInfer, Gather1DKeepsBothInputsWithPartialOutput) {
  // N = 2, axis 0. Candidates: in:B idx:S(0) -> S(0) (order 0: neither
  // input matches), in:S(0) idx:B -> P (-20), in:S(1) idx:B -> S(1) (-10),
  // all-B (-10). The -20 wins outright.
  EXPECT_EQ(InferToString({"gather", "cpu:0-1", {"f32[8,4]:S(0)", "i64[5]:B"}}),
            "in_0:S(0) indices_0:B -> out_0:P");
}

TEST(IndexOpInfer, Gather1DPartialTableStaysPartial) {
  // N = 2. OneFlow's list has no in:P; its in:S(0) idx:B -> P wins
  // (OneFlow 0.9.0 answers P too: tests/testdata/oneflow_oracle_golden.txt).
  // Only our appended in:P indices:B -> out:P keeps both inputs, and only
  // `planned` offers it.
  EXPECT_EQ(InferToString({"gather", "cpu:0-1", {"f32[8,4]:P", "i64[5]:B"}}),
            "in_0:S(0) indices_0:B -> out_0:P");
  InferSpec planned{"gather", "cpu:0-1", {"f32[8,4]:P", "i64[5]:B"}};
  planned.cost = "planned";
  EXPECT_EQ(InferToString(planned), "in_0:P indices_0:B -> out_0:P");
}

TEST(IndexOpInfer, Where1DOrderValueBeatsCost) {
  // N = 2. all-S(0) keeps y (-10); all-S(1) keeps none (0); cond:B x:P y:P
  // keeps cond and x (-20) although y pays S -> P (2^63); all-B keeps cond
  // (-10). The order value decides (SPEC.md §2).
  EXPECT_EQ(InferToString({"where", "cpu:0-1",
                           {"bool[8,4]:B", "f32[8,4]:P", "f32[8,4]:S(0)"}}),
            "condition_0:B x_0:P y_0:P -> out_0:P");
}

TEST(IndexOpInfer, Embedding1DColumnParallelKeepsBoth) {
  // Only our weight:S(1) candidate keeps both inputs; OneFlow lacks it, so
  // under `oneflow` all-B (-10, gathering the table) wins, and `planned`
  // keeps the column split.
  EXPECT_EQ(InferToString({"embedding", "cpu:0-3", {"f32[16,8]:S(1)", "i64[4,6]:B"}}),
            "weight_0:B indices_0:B -> out_0:B");
  InferSpec planned{"embedding", "cpu:0-3", {"f32[16,8]:S(1)", "i64[4,6]:B"}};
  planned.cost = "planned";
  EXPECT_EQ(InferToString(planned), "weight_0:S(1) indices_0:B -> out_0:S(2)");
}

TEST(IndexOpInfer, Embedding2DMeshKeepsBothLayouts) {
  // h = (2,2): one per-value list L = [w:B i:S0 -> S0, w:B i:S1 -> S1,
  // w:S1 i:B -> S2, w:S0 i:B -> P, all-B]; 25 products, none removed (every
  // input NdSbp fits [16,8] and [4,6]). weight (B,S1) needs axis 0 in
  // {0,1,4} and axis 1 = 2; indices (S0,B) needs axis 0 = 0, axis 1 in
  // {2,3,4}: only product (0,2) matches both, and the first all-matching
  // candidate wins (SPEC.md §3).
  // Under `oneflow` the list lacks w:S1 (ours), so no product keeps both
  // and axis 1 gathers the table; `planned` keeps both layouts.
  EXPECT_EQ(InferToString({"embedding", "cpu:0-3 [2,2]",
                           {"f32[16,8]:(B,S(1))", "i64[4,6]:(S(0),B)"}}),
            "weight_0:(B,B) indices_0:(S(0),B) -> out_0:(S(0),B)");
  InferSpec planned{"embedding", "cpu:0-3 [2,2]", {"f32[16,8]:(B,S(1))", "i64[4,6]:(S(0),B)"}};
  planned.cost = "planned";
  EXPECT_EQ(InferToString(planned), "weight_0:(B,S(1)) indices_0:(S(0),B) -> out_0:(S(0),S(2))");
}

TEST(IndexOpInfer, ReduceSumLike2DMesh) {
  // L = [x:S0 like:B -> P, x:S0 like:P -> P, x:S1 like:S1 -> S1,
  // x:B like:P -> B, x:P like:B -> P, x:P like:P -> P, all-B] (7; 49
  // products). No input NdSbp is unsplittable (like is never S(0)). x
  // (S0,S1) and like (B,S1) match only product (0,2).
  EXPECT_EQ(InferToString({"reduce_sum_like", "cpu:0-3 [2,2]",
                           {"f32[8,6]:(S(0),S(1))", "f32[1,6]:(B,S(1))"},
                           {"axis=0"}}),
            "x_0:(S(0),S(1)) like_0:(B,S(1)) -> y_0:(P,S(1))");
}

TEST(IndexOpInfer, DimGather2DMeshUnequalExtentsPaysTheCheapestBoxing) {
  // input f32[8,6] (T = 192), index i64[4,6] (T = 192), both (S0,B), dim 1,
  // h = (2,2), N = 4. OneFlow would keep both as they are and read wrong
  // rows (SPEC.md §9 #15). Ours: L = [input:B index:S1 -> S1, input:P
  // index:B -> P, all-B]; nothing matches, so the greedy cost rule picks
  // (SPEC.md §4.4; every pair stays 2-D, c1 uses n = N = 4, +1 per pair):
  //   input (S0,B)->(B,B): 1 + 3T = 577;  ->(P,*) pays penalties (> 12000)
  //   index (S0,B)->(S1,S1): 1 + T*3/4 + 1 = 146; ->(S1,B): 1 + 144 = 145;
  //         ->(B,S1): 1 + 3T + 1 = 578; ->(B,B): 577
  // Products in order: (0,0) 577+146 = 723, (0,1) P, (0,2) 577+145 = 722,
  // (2,0) 577+578, (2,2) 577+577, ... The minimum is product (0,2).
  EXPECT_EQ(InferToString({"dim_gather", "cpu:0-3 [2,2]",
                           {"f32[8,6]:(S(0),B)", "i64[4,6]:(S(0),B)"},
                           {"dim=1"}}),
            "input_0:(B,B) index_0:(S(1),B) -> output_0:(S(1),B)");
  InferSpec spec{"dim_gather", "cpu:0-3 [2,2]", {"f32[8,6]:(S(0),B)", "i64[4,6]:(S(0),B)"},
                 {"dim=1"}};
  spec.explain = true;
  absl::StatusOr<InferResult> r = Infer(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->candidates.size(), 9u);
  EXPECT_EQ(r->candidates[0].copy_cost.ValueOrFltMax(), 723);
  EXPECT_EQ(r->candidates[2].copy_cost.ValueOrFltMax(), 722);
  EXPECT_EQ(r->candidates[6].copy_cost.ValueOrFltMax(), 577 + 578);
  EXPECT_EQ(r->candidates[8].copy_cost.ValueOrFltMax(), 577 + 577);
  EXPECT_GT(r->candidates[1].copy_cost.ValueOrFltMax(), 12000);
  // Equal extents: the joint split exists and keeps both as they are.
  EXPECT_EQ(InferToString({"dim_gather", "cpu:0-3 [2,2]",
                           {"f32[4,6]:(S(0),B)", "i64[4,6]:(S(0),B)"},
                           {"dim=1"}}),
            "input_0:(S(0),B) index_0:(S(0),B) -> output_0:(S(0),B)");
}

}  // namespace
}  // namespace oneflow_sbp::testing
