// End-to-end choices of the signature engine, worked out by hand from
// SPEC.md (1-D §2, N-D §3, costs §4). Each test says why its answer wins.
#include "oneflow_sbp/inference/signature_inference.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

// --- 1-D ---------------------------------------------------------------------

TEST(Infer1D, OneFlowDocumentedExample) {
  // x:S(0) + y:S(1) on two ranks: all-S(0) and all-S(1) both keep one input
  // (order -10) and pay T for the other; the tie goes to emission order.
  EXPECT_EQ(InferToString({"add_n", "cpu:0-1", {"f32[4,4]:S(0)", "f32[4,4]:S(1)"}}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0)");
}

TEST(Infer1D, KeepsMatchingInputs) {
  // Candidate 1 keeps both inputs (order -20).
  EXPECT_EQ(InferToString({"matmul", "cpu:0-1", {"f32[8,4]:S(0)", "f32[4,6]:B"}}),
            "a_0:S(0) b_0:B -> out_0:S(0)");
  EXPECT_EQ(InferToString({"matmul", "cpu:0-1", {"f32[8,4]:S(1)", "f32[4,6]:S(0)"}}),
            "a_0:S(1) b_0:S(0) -> out_0:P");
}

TEST(Infer1D, ShapeFilterThenOrderValueDominatesCost) {
  // N = 4, a has 2 rows: a:S(0) is filtered (2 < 4). a:P b:B and all-B keep
  // b (order -10); a:P costs 2^63, all-B costs T(a) = 64, so all-B wins.
  EXPECT_EQ(InferToString({"matmul", "cpu:0-3", {"f32[2,8]:S(0)", "f32[8,16]:B"}}),
            "a_0:B b_0:B -> out_0:B");
}

TEST(Infer1D, ProducerSplitBelowPartsIsStillAnInput) {
  // The producer may hold empty ranges (S(0) of 3 rows on 4 ranks); only
  // candidates are filtered. relu's S(0) candidate is dropped, S(1) stays.
  EXPECT_EQ(InferToString({"relu", "cpu:0-3", {"f32[3,8]:S(0)"}}), "x_0:S(1) -> y_0:S(1)");
}

TEST(Infer1D, BroadcastToSplitCostsInt32Max) {
  // All-B keeps x (order -10); the split candidates match nothing.
  EXPECT_EQ(InferToString({"relu", "cpu:0-1", {"f32[8,8]:B"}}), "x_0:B -> y_0:B");
  // Two inputs, one B: all-S(0) keeps in_0 and slices in_1 (B -> S costs
  // INT32_MAX); all-B keeps in_1 and gathers in_0 (T). Both order -10. With
  // T = 256 bytes the gather is cheaper; with T = 4 GiB + 4 the slice is.
  EXPECT_EQ(InferToString({"add_n", "cpu:0-1", {"f32[8,8]:S(0)", "f32[8,8]:B"}}),
            "in_0:B in_1:B -> out_0:B");
  EXPECT_EQ(InferToString({"add_n", "cpu:0-1",
                           {"f32[1073741825]:S(0)", "f32[1073741825]:B"}}),
            "in_0:S(0) in_1:S(0) -> out_0:S(0)");
}

TEST(Infer1D, ConstraintFiltersOutputsAndZeroesOrderValues) {
  // out_0 must be S(1): only candidate 2 survives, although it matches no
  // input.
  InferSpec spec{"matmul", "cpu:0-1", {"f32[8,4]:S(0)", "f32[4,6]:B"}};
  spec.constraints = {{"out_0", "S(1)"}};
  EXPECT_EQ(InferToString(spec), "a_0:B b_0:S(1) -> out_0:S(1)");
  // With constraints every order value is 0, so cost alone ranks: a_0 must
  // be B; candidates a:B b:S(1) (cost INT32_MAX), a:B b:P (2^63), all-B
  // (cost 0 for b) -> all-B.
  spec.constraints = {{"a_0", "B"}};
  spec.inputs = {"f32[8,4]:B", "f32[4,6]:B"};
  EXPECT_EQ(InferToString(spec), "a_0:B b_0:B -> out_0:B");
}

TEST(Infer1D, UnsatisfiableConstraintIsAnError) {
  InferSpec spec{"relu", "cpu:0-1", {"f32[8,8]:S(0)"}};
  spec.constraints = {{"y_0", "P"}};
  const std::string out = InferToString(spec);
  EXPECT_THAT(out, HasSubstr("relu: no candidate satisfies the constraints y_0:P"));
  EXPECT_THAT(out, HasSubstr("x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1) | x_0:B -> y_0:B"));
}

TEST(Infer1D, ExplainRecordsEveryCandidate) {
  InferSpec spec{"matmul", "cpu:0-3", {"f32[2,8]:S(0)", "f32[8,16]:B"}};
  spec.explain = true;
  std::shared_ptr<const OpCall> call;
  absl::StatusOr<InferResult> r = Infer(spec, &call);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->candidates.size(), 6u);
  EXPECT_EQ(r->candidates[0].status, CandidateStatus::kFilteredByShape);
  EXPECT_THAT(r->candidates[0].note, HasSubstr("a_0 S(0): dim 0 has 2 < 4 parts"));
  const CandidateRecord& all_b = r->candidates[5];
  EXPECT_EQ(all_b.status, CandidateStatus::kChosen);
  EXPECT_EQ(all_b.rank, 1);
  EXPECT_EQ(all_b.order_value, -10);
  EXPECT_EQ(all_b.copy_cost.ValueOrFltMax(), 64);
  const CandidateRecord& a_partial = r->candidates[3];  // a:P b:B -> P
  EXPECT_EQ(a_partial.rank, 2);
  EXPECT_EQ(a_partial.order_value, -10);
  EXPECT_EQ(a_partial.copy_cost.ValueOrFltMax(), 9223372036854775808.0);
}

// --- N-D ---------------------------------------------------------------------

TEST(InferNd, ReluOn2x3FromPartialWorkedExample) {
  // SPEC.md §3 worked example: costs in final order 960, 961, 1441, 1441,
  // 480, 1441; (S1,S1) reduces to [6]: P -> S(1).
  InferSpec spec{"relu", "cpu:0-5 [2,3]", {"f32[2,12]:(P,P)"}};
  EXPECT_EQ(InferToString(spec), "x_0:(S(1),S(1)) -> y_0:(S(1),S(1))");
  spec.explain = true;
  absl::StatusOr<InferResult> r = Infer(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->candidates.size(), 9u);
  // Product order (S0,S0) (S0,S1) (S0,B) (S1,S0) (S1,S1) (S1,B) (B,S0) (B,S1)
  // (B,B); three fail the shape walk, and swap-with-last reorders the rest.
  const std::vector<int> final_position = {-1, 1, 2, -1, 4, 5, -1, 3, 0};
  const std::vector<double> cost = {0, 961, 1441, 0, 480, 1441, 0, 1441, 960};
  for (int k = 0; k < 9; ++k) {
    EXPECT_EQ(r->candidates[k].final_position, final_position[k]) << k;
    EXPECT_EQ(r->candidates[k].copy_cost.ValueOrFltMax(), cost[k]) << k;
    EXPECT_EQ(r->candidates[k].status == CandidateStatus::kFilteredByShape,
              final_position[k] < 0)
        << k;
  }
  EXPECT_EQ(r->candidates[4].status, CandidateStatus::kChosen);
}

TEST(InferNd, FirstAllMatchingCandidateWins) {
  EXPECT_EQ(InferToString({"matmul", "cpu:0-3 [2,2]",
                           {"f32[64,32]:(S(0),B)", "f32[32,48]:(B,S(1))"}}),
            "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))");
  EXPECT_EQ(InferToString({"matmul", "cpu:0-3 [2,2]",
                           {"f32[64,32]:(S(0),B)", "f32[48,32]:(B,S(0))"},
                           {"transpose_b=true"}}),
            "a_0:(S(0),B) b_0:(B,S(0)) -> out_0:(S(0),S(1))");
}

TEST(InferNd, TiesGoToTheLatestCandidateAsInOneFlow090) {
  // relu on [2,2] from (P,P), f32[8,8] (T = 256): (S0,S0) and (S1,S1) both
  // reduce to [4]: P -> S (3T = 768), the minimum; (S1,S1) comes later and
  // wins, as real OneFlow 0.9.0 chooses (its `<=`; the earliest under the
  // source SPEC.md was written from). Likewise (S(0),P) -> (S(0),S(1)).
  EXPECT_EQ(InferToString({"relu", "cpu:0-3 [2,2]", {"f32[8,8]:(P,P)"}}),
            "x_0:(S(1),S(1)) -> y_0:(S(1),S(1))");
  EXPECT_EQ(InferToString({"relu", "cpu:0-3 [2,2]", {"f32[8,12]:(S(0),P)"}}),
            "x_0:(S(0),S(1)) -> y_0:(S(0),S(1))");
}

TEST(InferNd, ThreeAxisMesh) {
  // (P,B,S1) on [2,2,2], f32[8,8] (T = 256, N = 8): every candidate pays
  // P -> S or P -> B on axis 0 (>= 7T); (S0,B,S1) adds nothing else:
  // 1 + 7T = 1793. (S1,B,S1) pays the same-dim-split surcharge T.
  EXPECT_EQ(InferToString({"relu", "cpu:0-7 [2,2,2]", {"f32[8,8]:(P,B,S(1))"}}),
            "x_0:(S(0),B,S(1)) -> y_0:(S(0),B,S(1))");
  EXPECT_EQ(InferToString({"relu", "cpu:0-7 [2,2,2]", {"f32[8,8]:(S(0),S(0),S(0))"}}),
            "x_0:(S(0),S(0),S(0)) -> y_0:(S(0),S(0),S(0))");
}

// OneFlow drops an output constraint in N-D without a word (SPEC, step 5).
// We keep its choices but refuse the request instead of dropping the
// constraint silently: the caller learns it had no effect.
TEST(InferNd, OutputConstraintsAreRefusedInputConstraintsFilter) {
  InferSpec spec{"relu", "cpu:0-3 [2,2]", {"f32[8,8]:(S(0),B)"}};
  spec.constraints = {{"y_0", "(B,B)"}};
  EXPECT_EQ(InferToString(spec),
            "error: relu: constraint on output y_0 (B, B) cannot be applied on the 2-D placement "
            "cpu:0-3 [2,2] under cost policy oneflow: OneFlow's N-D inference constrains inputs "
            "only; constrain the inputs, or use cost policy planned, which applies output "
            "constraints");
  spec.constraints = {{"x_0", "(B,B)"}};
  EXPECT_EQ(InferToString(spec), "x_0:(B,B) -> y_0:(B,B)");
}

TEST(InferNd, MeshWithUnitAxis) {
  // [1,2] is 2-D: the rule runs for hierarchy values 1 and 2.
  EXPECT_EQ(InferToString({"relu", "cpu:0-1 [1,2]", {"f32[4,4]:(B,S(1))"}}),
            "x_0:(B,S(1)) -> y_0:(B,S(1))");
}

// --- Bad requests -----------------------------------------------------------

TEST(InferErrors, NameTheOpAndBlob) {
  EXPECT_THAT(InferToString({"matmul", "cpu:0-1", {"f32[8,4]:S(0)"}}),
              HasSubstr("matmul takes at least 2 inputs (a, b); got 1"));
  EXPECT_THAT(InferToString({"relu", "cpu:0-3 [2,2]", {"f32[8,8]:S(0)"}}),
              HasSubstr("relu: input x_0 f32[8,8]: nd_sbp (S(0)) has 1 entries but the "
                        "hierarchy [2,2] has 2 mesh axes"));
  EXPECT_THAT(InferToString({"relu", "cpu:0-1", {"f32[8,8]:S(2)"}}),
              HasSubstr("relu: input x_0 f32[8,8]: nd_sbp (S(2)): S(2) on mesh axis 0 "
                        "splits dim 2 but shape [8,8] has rank 2"));
  EXPECT_THAT(InferToString({"matmul", "cpu:0-1", {"f32[8,4]:B", "f32[5,6]:B"}}),
              HasSubstr("matmul: contraction dims differ"));
  EXPECT_THAT(InferToString({"no_such_op", "cpu:0-1", {"f32[8]:B"}}),
              HasSubstr("unknown op 'no_such_op'"));
  EXPECT_THAT(InferToString({"matmul", "cpu:0-1", {"f32[8,4]:B", "f32[4,6]:B"}, {"transpose_c=true"}}),
              HasSubstr("unknown attr"));
  InferSpec bad_constraint{"relu", "cpu:0-3 [2,2]", {"f32[8,8]:(S(0),B)"}};
  bad_constraint.constraints = {{"y_0", "S(0)"}};
  EXPECT_THAT(InferToString(bad_constraint),
              HasSubstr("relu: constraint on y_0 (S(0)) has 1 entries but placement"));
  bad_constraint.constraints = {{"y_0", "(S(5),B)"}};
  EXPECT_THAT(InferToString(bad_constraint), HasSubstr("splits dim 5"));
}

TEST(InferErrors, AttrOfTheWrongType) {
  absl::StatusOr<std::shared_ptr<const OpDef>> def = Registry().Get("matmul");
  ASSERT_TRUE(def.ok());
  AttrMap attrs;
  attrs.Set("transpose_b", AttrValue(int64_t{1}));
  absl::StatusOr<std::shared_ptr<const OpCall>> call = OpCall::Make(*def, {1, 1, 0}, attrs);
  ASSERT_FALSE(call.ok());
  EXPECT_THAT(std::string(call.status().message()),
              HasSubstr("matmul: attribute 'transpose_b' is bool, got int '1'"));
}

}  // namespace
}  // namespace oneflow_sbp::testing
