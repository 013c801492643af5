// cat, stack, split, narrow(_grad), slice(_grad), slice_update, expand:
// golden 1-D candidate lists (emission order, without the appended all-B),
// shape functions and their errors, and end-to-end choices worked out by
// hand from SPEC.md §2 (1-D) and §3 (N-D).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;


// ------------------------------------------------------------------ cat ----

TEST(ConcatSliceOps, CatCandidatesThreeInputs) {
  // SPEC.md §6: every dim but axis, then all P.
  EXPECT_EQ(CandidatesToString("cat", {"f32[4,6]", "f32[4,2]", "f32[4,3]"}, {"axis=1"}),
            "in_0:S(0) in_1:S(0) in_2:S(0) -> out_0:S(0) | "
            "in_0:P in_1:P in_2:P -> out_0:P");
  // Negative axis: -3 is dim 0 of a rank-3 input.
  EXPECT_EQ(CandidatesToString("cat", {"f32[2,3,4]", "f32[5,3,4]"}, {"axis=-3"}),
            "in_0:S(1) in_1:S(1) -> out_0:S(1) | in_0:S(2) in_1:S(2) -> out_0:S(2) | "
            "in_0:P in_1:P -> out_0:P");
}

TEST(ConcatSliceOps, CatShape) {
  EXPECT_EQ(OutputDescs("cat", {"f32[4,6]", "f32[4,2]", "f32[4,3]"}, {"axis=1"}),
            "f32[4,11]");
  EXPECT_EQ(OutputDescs("cat", {"bf16[2,3]", "bf16[5,3]"}), "bf16[7,3]");
  // A positive max_dim_size is checked as OneFlow does; 0 (default) is not.
  EXPECT_EQ(OutputDescs("cat", {"f32[4,6]", "f32[4,2]"}, {"axis=1", "max_dim_size=8"}),
            "f32[4,8]");
}

TEST(ConcatSliceOps, CatShapeErrors) {
  EXPECT_THAT(OutputDescs("cat", {"f32[4,6]", "f32[4,2]"}, {"axis=2"}),
              HasSubstr("cat: attribute axis 2 is out of range for rank 2"));
  EXPECT_THAT(OutputDescs("cat", {"f32[4,6]", "f32[4,2]"}, {"axis=-3"}),
              HasSubstr("attribute axis -3 is out of range"));
  EXPECT_THAT(OutputDescs("cat", {"f32[4,6]", "f32[5,2]", "f32[4,1]"}, {"axis=1"}),
              HasSubstr("in_1 f32[5,2] and in_0 f32[4,6] differ on dim 0 (5 vs 4)"));
  EXPECT_THAT(OutputDescs("cat", {"f32[4,6]", "f32[4,2]", "f32[4,1,1]"}, {"axis=1"}),
              HasSubstr("in_2 f32[4,1,1] has rank 3 but in_0 f32[4,6] has rank 2"));
  EXPECT_THAT(OutputDescs("cat", {"f32[4,6]", "f16[4,2]"}, {"axis=1"}),
              HasSubstr("in_1 is f16[4,2]; dtypes must match"));
  EXPECT_THAT(OutputDescs("cat", {"f32[]", "f32[]"}), HasSubstr("in_0 f32[] must have rank >= 1"));
  EXPECT_THAT(OutputDescs("cat", {"f32[4,6]", "f32[4,2]"}, {"axis=1", "max_dim_size=7"}),
              HasSubstr("out_0 would have extent 8 on dim 1, above attribute max_dim_size 7"));
}

// ---------------------------------------------------------------- stack ----

TEST(ConcatSliceOps, StackCandidates) {
  // OneFlow: every dim, those from axis on shifted up by one, then P
  // (OneFlow 0.9.0 answers S(2) for S(1) inputs stacked on axis 1).
  EXPECT_EQ(CandidatesToString("stack", {"f32[4,6]", "f32[4,6]"}, {"axis=1"}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0) | in_0:S(1) in_1:S(1) -> out_0:S(2) | "
            "in_0:P in_1:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("stack", {"f32[4,6]", "f32[4,6]", "f32[4,6]"}),
            "in_0:S(0) in_1:S(0) in_2:S(0) -> out_0:S(1) | "
            "in_0:S(1) in_1:S(1) in_2:S(1) -> out_0:S(2) | in_0:P in_1:P in_2:P -> out_0:P");
  // axis -1 is the new last dim: OneFlow's list alone.
  EXPECT_EQ(CandidatesToString("stack", {"f32[4,6]", "f32[4,6]"}, {"axis=-1"}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0) | in_0:S(1) in_1:S(1) -> out_0:S(1) | "
            "in_0:P in_1:P -> out_0:P");
}

TEST(ConcatSliceOps, StackShapeAndErrors) {
  EXPECT_EQ(OutputDescs("stack", {"f32[4,6]", "f32[4,6]", "f32[4,6]"}, {"axis=1"}),
            "f32[4,3,6]");
  EXPECT_EQ(OutputDescs("stack", {"f32[4,6]", "f32[4,6]"}, {"axis=-1"}), "f32[4,6,2]");
  EXPECT_THAT(OutputDescs("stack", {"f32[4,6]", "f32[4,6]"}, {"axis=3"}),
              HasSubstr("attribute axis 3 is out of range for rank 3"));
  EXPECT_THAT(OutputDescs("stack", {"f32[4,6]", "f32[4,5]"}),
              HasSubstr("in_1 is f32[4,5] but in_0 is f32[4,6]"));
}

// ---------------------------------------------------------------- split ----

TEST(ConcatSliceOps, SplitCandidatesThreeOutputs) {
  EXPECT_EQ(CandidatesToString("split", {"f32[4,9]"}, {"axis=1", "sizes=2,3,4"}),
            "x_0:S(0) -> out_0:S(0) out_1:S(0) out_2:S(0) | "
            "x_0:P -> out_0:P out_1:P out_2:P");
  // A single piece is x itself: the split axis may stay split.
  EXPECT_EQ(CandidatesToString("split", {"f32[4,9]"}, {"axis=1", "sizes=9"}),
            "x_0:S(0) -> out_0:S(0) | x_0:S(1) -> out_0:S(1) | x_0:P -> out_0:P");
}

TEST(ConcatSliceOps, SplitShapeAndArity) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall("split", 1, {"axis=-1", "sizes=2,3,4"});
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ((*call)->ToString(), "split(x_0 -> out_0, out_1, out_2; axis=-1 sizes=2,3,4)");
  EXPECT_EQ(OutputDescs("split", {"f32[4,9]"}, {"axis=-1", "sizes=2,3,4"}),
            "f32[4,2] f32[4,3] f32[4,4]");
}

TEST(ConcatSliceOps, SplitErrors) {
  EXPECT_THAT(OutputDescs("split", {"f32[4,9]"}, {"axis=1", "sizes=2,3"}),
              HasSubstr("attribute sizes [2,3] must sum to 9, the extent of x_0 f32[4,9] on dim 1"));
  EXPECT_THAT(OutputDescs("split", {"f32[4,9]"}, {"axis=1", "sizes=5,0,4"}),
              HasSubstr("attribute sizes [5,0,4] has 0 at index 1"));
  EXPECT_THAT(OutputDescs("split", {"f32[4,9]"}, {"axis=2", "sizes=9"}),
              HasSubstr("attribute axis 2 is out of range for rank 2"));
  EXPECT_THAT(OutputDescs("split", {"f32[4,9]"}, {"sizes="}),
              HasSubstr("split: attribute sizes [] is empty"));
}

// ------------------------------------------------------- narrow(_grad) ----

TEST(ConcatSliceOps, NarrowCandidates) {
  // SPEC.md §6: the narrowed dim keeps S only at full length; then P.
  EXPECT_EQ(CandidatesToString("narrow", {"f32[8,6]"}, {"dim=1", "start=2", "length=3"}),
            "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("narrow", {"f32[8,6]"}, {"dim=1", "start=0", "length=6"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P");
  // Negative dim and start: dim 0, rows [4, 8).
  EXPECT_EQ(CandidatesToString("narrow", {"f32[8,6]"}, {"dim=-2", "start=-4", "length=4"}),
            "in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P");
  EXPECT_EQ(OutputDescs("narrow", {"f32[8,6]"}, {"dim=-2", "start=-4", "length=4"}),
            "f32[4,6]");
}

TEST(ConcatSliceOps, NarrowErrors) {
  EXPECT_THAT(OutputDescs("narrow", {"f32[8,6]"}, {"dim=1", "start=6", "length=1"}),
              HasSubstr("attribute start 6 is out of range for dim 1 of in_0 f32[8,6] "
                        "(valid: -6 .. 5)"));
  EXPECT_THAT(OutputDescs("narrow", {"f32[8,6]"}, {"dim=1", "start=-7", "length=1"}),
              HasSubstr("attribute start -7 is out of range"));
  EXPECT_THAT(OutputDescs("narrow", {"f32[8,6]"}, {"dim=1", "start=4", "length=3"}),
              HasSubstr("attribute length 3 is out of range for start 4 on dim 1 of in_0 "
                        "f32[8,6] (valid: 1 .. 2)"));
  // OneFlow would clamp this length to 6; we report it.
  EXPECT_THAT(OutputDescs("narrow", {"f32[8,6]"}, {"dim=1", "start=0", "length=7"}),
              HasSubstr("attribute length 7 is out of range"));
  EXPECT_THAT(OutputDescs("narrow", {"f32[8,6]"}, {"dim=1", "start=0", "length=0"}),
              HasSubstr("attribute length 0 is out of range"));
  EXPECT_THAT(OutputDescs("narrow", {"f32[8,6]"}, {"dim=2", "start=0", "length=1"}),
              HasSubstr("attribute dim 2 is out of range for rank 2"));
}

TEST(ConcatSliceOps, NarrowGradCandidates) {
  // OneFlow's narrow_grad list.
  EXPECT_EQ(CandidatesToString("narrow_grad", {"f32[8,3]", "f32[8,6]"},
                               {"dim=1", "start=2", "length=3"}),
            "dy_0:S(0) like_0:S(0) -> dx_0:S(0) | dy_0:P like_0:P -> dx_0:P | "
            "dy_0:P like_0:B -> dx_0:P | dy_0:B like_0:P -> dx_0:B");
  EXPECT_EQ(CandidatesToString("narrow_grad", {"f32[3,6]", "f32[8,6]"},
                               {"dim=0", "start=5", "length=3"}),
            "dy_0:S(1) like_0:S(1) -> dx_0:S(1) | dy_0:P like_0:P -> dx_0:P | "
            "dy_0:P like_0:B -> dx_0:P | dy_0:B like_0:P -> dx_0:B");
}

TEST(ConcatSliceOps, NarrowGradShapeAndErrors) {
  // dx: like's shape, dy's dtype.
  EXPECT_EQ(OutputDescs("narrow_grad", {"f16[8,3]", "f32[8,6]"},
                        {"dim=1", "start=2", "length=3"}),
            "f16[8,6]");
  EXPECT_THAT(OutputDescs("narrow_grad", {"f32[8,2]", "f32[8,6]"},
                          {"dim=1", "start=2", "length=3"}),
              HasSubstr("dy_0 f32[8,2] must have shape [8,3]: like_0 f32[8,6] narrowed"));
  EXPECT_THAT(OutputDescs("narrow_grad", {"f32[8,3]", "f32[8,6]"},
                          {"dim=1", "start=5", "length=3"}),
              HasSubstr("attribute length 3 is out of range for start 5 on dim 1 of like_0"));
}

// -------------------------------------------------------- slice family ----

TEST(ConcatSliceOps, SliceCandidates) {
  // Dims 0 and 2 in full keep S; dim 1 (1:5:2) gives x:S(1) -> y:P.
  EXPECT_EQ(CandidatesToString("slice", {"f32[8,6,4]"},
                               {"start=0,1,0", "stop=8,5,4", "step=1,2,1"}),
            "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:P | x_0:S(2) -> y_0:S(2) | "
            "x_0:P -> y_0:P");
  // A step other than 1 is never full, even over the whole dim.
  EXPECT_EQ(CandidatesToString("slice", {"f32[8]"}, {"start=0", "stop=8", "step=2"}),
            "x_0:S(0) -> y_0:P | x_0:P -> y_0:P");
  // Python normalisation: stop past the end clamps (dim 0 is full), -3:-1
  // is 3:5.
  EXPECT_EQ(CandidatesToString("slice", {"f32[8,6]"},
                               {"start=-100,-3", "stop=9223372036854775807,-1", "step=1,1"}),
            "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:P | x_0:P -> y_0:P");
}

TEST(ConcatSliceOps, SliceShape) {
  EXPECT_EQ(OutputDescs("slice", {"f32[8,6,4]"}, {"start=0,1,0", "stop=8,5,4", "step=1,2,1"}),
            "f32[8,2,4]");
  EXPECT_EQ(OutputDescs("slice", {"f32[8,6]"},
                        {"start=-100,-3", "stop=9223372036854775807,-1", "step=1,1"}),
            "f32[8,2]");
  EXPECT_EQ(OutputDescs("slice", {"i64[10]"}, {"start=1", "stop=10", "step=3"}), "i64[3]");
}

TEST(ConcatSliceOps, SliceErrors) {
  EXPECT_THAT(OutputDescs("slice", {"f32[8,6]"}, {"start=0,0", "stop=8,6", "step=1,0"}),
              HasSubstr("slice: attribute step [1,0] has 0 on dim 1; steps must be > 0"));
  EXPECT_THAT(OutputDescs("slice", {"f32[8,6]"}, {"start=0,0", "stop=8,6", "step=-1,1"}),
              HasSubstr("attribute step [-1,1] has -1 on dim 0"));
  EXPECT_THAT(OutputDescs("slice", {"f32[8,6]"}, {"start=0", "stop=8,6", "step=1,1"}),
              HasSubstr("attribute start [0] has 1 entries but x_0 f32[8,6] has rank 2"));
  EXPECT_THAT(OutputDescs("slice", {"f32[8,6]"}, {"start=0,4", "stop=8,-2", "step=1,1"}),
              HasSubstr("slice 4:-2:1 selects nothing on dim 1 of x_0 f32[8,6]"));
}

TEST(ConcatSliceOps, SliceGradCandidates) {
  EXPECT_EQ(CandidatesToString("slice_grad", {"f32[8,2]", "f32[8,6]"},
                               {"start=0,3", "stop=8,5", "step=1,1"}),
            "dy_0:S(0) like_0:S(0) -> dx_0:S(0) | dy_0:P like_0:P -> dx_0:P | "
            "dy_0:P like_0:B -> dx_0:P | dy_0:B like_0:P -> dx_0:B");
}

TEST(ConcatSliceOps, SliceGradShapeAndErrors) {
  EXPECT_EQ(OutputDescs("slice_grad", {"f32[8,2]", "f32[8,6]"},
                        {"start=0,3", "stop=8,5", "step=1,1"}),
            "f32[8,6]");
  EXPECT_THAT(OutputDescs("slice_grad", {"f32[8,3]", "f32[8,6]"},
                          {"start=0,3", "stop=8,5", "step=1,1"}),
              HasSubstr("dy_0 f32[8,3] must have shape [8,2], the slice of like_0 f32[8,6]"));
}

TEST(ConcatSliceOps, SliceUpdateCandidates) {
  // SPEC.md §6, judged on ref: ref:S(i) value:B for every i, plus S/S for
  // full dims; then P.
  EXPECT_EQ(CandidatesToString("slice_update", {"f32[8,6]", "f32[8,2]"},
                               {"start=0,3", "stop=8,5", "step=1,1"}),
            "ref_0:S(0) value_0:B -> y_0:S(0) | ref_0:S(0) value_0:S(0) -> y_0:S(0) | "
            "ref_0:S(1) value_0:B -> y_0:S(1) | ref_0:P value_0:P -> y_0:P");
}

TEST(ConcatSliceOps, SliceUpdateShapeAndErrors) {
  EXPECT_EQ(OutputDescs("slice_update", {"f32[8,6]", "f32[8,2]"},
                        {"start=0,3", "stop=8,5", "step=1,1"}),
            "f32[8,6]");
  EXPECT_THAT(OutputDescs("slice_update", {"f32[8,6]", "f32[8,3]"},
                          {"start=0,3", "stop=8,5", "step=1,1"}),
              HasSubstr("value_0 f32[8,3] must have shape [8,2], the slice of ref_0 f32[8,6]"));
  EXPECT_THAT(OutputDescs("slice_update", {"f32[8,6]", "f16[8,2]"},
                          {"start=0,3", "stop=8,5", "step=1,1"}),
              HasSubstr("value_0 is f16[8,2]; dtypes must match"));
  EXPECT_THAT(OutputDescs("slice_update", {"f32[8,6]", "f32[8,2]"},
                          {"start=0,3", "stop=8,5", "step=1"}),
              HasSubstr("attribute step [1] has 1 entries but ref_0 f32[8,6] has rank 2"));
}

// --------------------------------------------------------------- expand ----

TEST(ConcatSliceOps, ExpandCandidates) {
  // lpad 1: in dim 0 (4 == 4) keeps S as out dim 1; dim 1 (1 -> 3) cannot.
  EXPECT_EQ(CandidatesToString("expand", {"f32[4,1]"}, {"expand_shape=2,4,3"}),
            "in_0:S(0) -> out_0:S(1) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("expand", {"f32[4,1]"}, {"expand_shape=2,-1,3"}),
            "in_0:S(0) -> out_0:S(1) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("expand", {"f32[4,5]"}, {"expand_shape=4,5"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("expand", {"f32[]"}, {"expand_shape=3"}), "in_0:P -> out_0:P");
}

TEST(ConcatSliceOps, ExpandShapeAndErrors) {
  EXPECT_EQ(OutputDescs("expand", {"f32[4,1]"}, {"expand_shape=2,-1,3"}), "f32[2,4,3]");
  // SPEC.md §9 #18: OneFlow's lpad is unsigned; ours is an error.
  EXPECT_THAT(OutputDescs("expand", {"f32[2,3]"}, {"expand_shape=3"}),
              HasSubstr("expand: attribute expand_shape [3] has 1 entries, fewer than the rank 2 "
                        "of in_0 f32[2,3] (lpad -1 < 0)"));
  EXPECT_THAT(OutputDescs("expand", {"f32[2,3]"}, {"expand_shape=4,3"}),
              HasSubstr("in_0 f32[2,3] has extent 2 on dim 0, which cannot expand to 4"));
  EXPECT_THAT(OutputDescs("expand", {"f32[2,3]"}, {"expand_shape=-1,2,3"}),
              HasSubstr("attribute expand_shape [-1,2,3] has -1 at index 0, a new leading dim"));
  EXPECT_THAT(OutputDescs("expand", {"f32[2,3]"}, {"expand_shape=2,0"}),
              HasSubstr("attribute expand_shape [2,0] has 0 at index 1"));
}

// ---------------------------------------------------- end to end, 1-D ----

TEST(ConcatSliceOps, InferCatSpecWorkedExample) {
  // SPEC.md §2: candidates all-S(0), all-P, [+B]. all-S(0): order -10,
  // cost 0 + 48 + 2147483647; all-P: order 0; all-B: order -10 (in_2),
  // cost 96 + 48 + 0 = 144 -> chosen.
  EXPECT_EQ(InferToString({"cat", "cpu:0-2", {"f32[6,4]:S(0)", "f32[6,2]:S(1)", "f32[6,5]:B"},
                           {"axis=1"}}),
            "in_0:B in_1:B in_2:B -> out_0:B");
}

TEST(ConcatSliceOps, InferSliceKeepsCutSplitAsPartial) {
  // N=2, dim 1 cut to 1:5. Candidates x:S(0)->S(0), x:S(1)->P, x:P->P,
  // [+B]; only x:S(1)->y:P matches the producer (order -10).
  EXPECT_EQ(InferToString({"slice", "cpu:0-1", {"f32[8,6]:S(1)"},
                           {"start=0,1", "stop=8,5", "step=1,1"}}),
            "x_0:S(1) -> y_0:P");
}

TEST(ConcatSliceOps, InferNarrowCutDimTiesGoToEmissionOrder) {
  // N=2, dim 1 narrowed: candidates S(0)->S(0), P->P, [+B]; none matches
  // S(1) (all order 0). Costs: S(1)->S(0) T=192, S(1)->P 2^63, S(1)->B 192:
  // the tie goes to the earlier S(0).
  EXPECT_EQ(InferToString({"narrow", "cpu:0-1", {"f32[8,6]:S(1)"},
                           {"dim=1", "start=0", "length=3"}}),
            "in_0:S(0) -> out_0:S(0)");
}

TEST(ConcatSliceOps, InferSplitThreeOutputs) {
  // Candidates x:S(0)->S(0)^3, x:P->P^3, [+B]; producer S(1) matches none;
  // S(1)->S(0) and S(1)->B both cost T=144, so emission order picks S(0).
  EXPECT_EQ(InferToString({"split", "cpu:0-1", {"f32[4,9]:S(1)"}, {"axis=1", "sizes=2,3,4"}}),
            "x_0:S(0) -> out_0:S(0) out_1:S(0) out_2:S(0)");
}

TEST(ConcatSliceOps, InferSliceUpdateKeepsRefSplitWithBroadcastValue) {
  // Candidates ref:S(0) value:B, ref:S(0) value:S(0), ref:S(1) value:B,
  // P/P, [+B]; ref:S(1) value:B matches both inputs (order -20).
  EXPECT_EQ(InferToString({"slice_update", "cpu:0-1", {"f32[8,6]:S(1)", "f32[8,2]:B"},
                           {"start=0,3", "stop=8,5", "step=1,1"}}),
            "ref_0:S(1) value_0:B -> y_0:S(1)");
}

TEST(ConcatSliceOps, InferStackUsesTheShiftedSplit) {
  // in_*:S(1) -> out:S(2) for axis 0 matches both inputs (order -20); it
  // is OneFlow's (the oracle), so both policies keep it.
  InferSpec spec{"stack", "cpu:0-1", {"f32[4,6]:S(1)", "f32[4,6]:S(1)"}, {"axis=0"}};
  EXPECT_EQ(InferToString(spec), "in_0:S(1) in_1:S(1) -> out_0:S(2)");
  spec.cost = "planned";
  EXPECT_EQ(InferToString(spec), "in_0:S(1) in_1:S(1) -> out_0:S(2)");
}

TEST(ConcatSliceOps, InferExpandRenumbersSplit) {
  EXPECT_EQ(InferToString({"expand", "cpu:0-1", {"f32[4,1]:S(0)"}, {"expand_shape=2,4,3"}}),
            "in_0:S(0) -> out_0:S(1)");
}

// ---------------------------------------------------- end to end, N-D ----

TEST(ConcatSliceOps, InferCatOnMeshAfterFilterReorder) {
  // h=(2,2), axis 1. L_2 = [S0, P, B] for every bn; the product is
  // (S0,S0) (S0,P) (S0,B) (P,S0) (P,P) (P,B) (B,S0) (B,P) (B,B).
  // Dim 0 has extent 2, so (S0,S0) fails (2 -> 1 < 2) and (B,B) moves into
  // slot 0. No candidate equals in_0's (S0,S1). T(in_0)=32, T(in_1)=16, N=4:
  //   (B,B):  in_0 1 + 3T + 3T = 193, in_1 1 + 3T = 49          -> 242
  //   (S0,B): in_0 1 + 0 + 3T = 97,   in_1 equal = 0             -> 97
  //   (B,S0): in_0 1 + 96 + T*3/4 = 121, in_1 1 + 48 + 1 = 50    -> 171
  //   anything with P pays the penalty 4T(N+N) twice             -> > 1000
  // Without the filter (S0,S0) would have won (25 + 2).
  EXPECT_EQ(InferToString({"cat", "cpu:0-3 [2,2]", {"f32[2,4]:(S(0),S(1))", "f32[2,2]:(S(0),B)"},
                           {"axis=1"}}),
            "in_0:(S(0),B) in_1:(S(0),B) -> out_0:(S(0),B)");
}

TEST(ConcatSliceOps, InferSliceOnMeshFirstFullMatch) {
  // h=(2,2), dim 0 full, dim 1 cut. L_2 = [S0->S0, S1->P, P->P, B->B]; the
  // product has 16 candidates, all splittable for [8,6]. Producer (S1,S0)
  // first matches at index 4 = (S1->P, S0->S0): the first all-match wins.
  EXPECT_EQ(InferToString({"slice", "cpu:0-3 [2,2]", {"f32[8,6]:(S(1),S(0))"},
                           {"start=0,2", "stop=8,6", "step=1,1"}}),
            "x_0:(S(1),S(0)) -> y_0:(P,S(0))");
}

}  // namespace
}  // namespace oneflow_sbp::testing
