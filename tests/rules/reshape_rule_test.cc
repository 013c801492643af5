// Reshape-class rules: the dim-transform analysis, OneFlow's 1-D pairs,
// the N-D enumeration on OneFlow's own unit-test cases (SPEC.md §6.3,
// R1-R25 and B1), and end-to-end choices.
#include "ops/reshape_rule.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ops::AnalyzeReshape;
using ops::DimTransformToString;
using ops::MeshAssignment;
using ops::MeshSplitGroup;

std::string GroupsString(const Shape& in, const Shape& out, const std::vector<int64_t>& h) {
  std::vector<std::string> parts;
  for (const MeshSplitGroup& g : ops::ReshapeNdGroups(in, out, h)) {
    parts.push_back(absl::StrCat(
        "{", absl::StrJoin(g, ",", [](std::string* s, const auto& e) {
          absl::StrAppend(s, e.first, ":(", e.second.first, ",", e.second.second, ")");
        }), "}"));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, "; ");
}

int FilteredCount(const Shape& in, const Shape& out, const std::vector<int64_t>& h) {
  int n = 0;
  for (const MeshAssignment& a : ops::ReshapeNdAssignments(in, out, h)) {
    n += ops::PassesDivisibilityFilter(a, in, out, h) ? 1 : 0;
  }
  return n;
}

TEST(DimTransform, GroupsAndKinds) {
  EXPECT_EQ(DimTransformToString(*AnalyzeReshape(Shape{2, 3, 4}, Shape{6, 2, 2})),
            "out0=flatten(in0,in1) (out1,out2)=split(in2)");
  EXPECT_EQ(DimTransformToString(*AnalyzeReshape(Shape{2, 1, 6}, Shape{2, 3, 2, 1})),
            "out0=in0 (out1,out2)=split(in2)");
  EXPECT_EQ(DimTransformToString(*AnalyzeReshape(Shape{4, 6}, Shape{3, 8})),
            "(out0,out1)=regroup(in0,in1)");
  EXPECT_EQ(DimTransformToString(*AnalyzeReshape(Shape{1, 1}, Shape{1})), "");
  absl::StatusOr<std::vector<ops::DimGroup>> bad = AnalyzeReshape(Shape{4, 6}, Shape{5, 5});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("cannot reshape [4,6] (24 elements) to [5,5] (25 elements)"));
}

TEST(ReshapeRule1D, LeadingPairsOfEachGroup) {
  // (2,3,4) -> (6,2,2) on 2 parts: group (in0,in1)->(out0): 2 and 6 both
  // divide by 2; group in2 -> (out1,out2): 4 and 2 both divide.
  EXPECT_EQ(CandidatesToString("reshape", {"f32[2,3,4]"}, {"shape=6,2,2"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(2) -> out_0:S(1) | in_0:P -> out_0:P");
  // On 3 parts only the first group qualifies (6 and ... 2 does not divide).
  EXPECT_EQ(CandidatesToString("reshape", {"f32[2,3,4]"}, {"shape=6,2,2"}, 3),
            "in_0:P -> out_0:P");
  // Equal leading extents always qualify; size-1 dims are skipped; -1 inferred.
  EXPECT_EQ(CandidatesToString("reshape", {"f32[5,1,7]"}, {"shape=5,7,-1"}, 4),
            "in_0:S(0) -> out_0:S(0) | in_0:S(2) -> out_0:S(1) | in_0:P -> out_0:P");
  // A scalar input has no candidates at all (SPEC.md §6.3 step 1).
  EXPECT_EQ(CandidatesToString("reshape", {"f32[]"}, {"shape=1"}), "");
  EXPECT_EQ(CandidatesToString("flatten", {"f32[4,3,2]"}, {"start_dim=1"}),
            "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("flatten", {"f32[4,2,3]"}),
            "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P");
}

TEST(ViewOps, ExpandDimsAndSqueezeKeepOneFlowsLists) {
  EXPECT_EQ(CandidatesToString("expand_dims", {"f32[3,4]"}, {"axis=1"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(2) | in_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("expand_dims", {"f32[3,4]"}, {"axis=-1"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P");
  // squeeze gains P -> P (ours).
  EXPECT_EQ(CandidatesToString("squeeze", {"f32[3,1,4,1]"}, {"axes=1,-1"}),
            "in_0:S(0) -> out_0:S(0) | in_0:S(2) -> out_0:S(1) | in_0:P -> out_0:P");
}

TEST(ViewOps, ShapeErrors) {
  EXPECT_THAT(InferToString({"reshape", "cpu:0-1", {"f32[4,6]:S(0)"}, {"shape=5,5"}}),
              ::testing::HasSubstr("reshape: cannot reshape in_0 [4,6] (24 elements) to [5,5]"));
  EXPECT_THAT(InferToString({"reshape", "cpu:0-1", {"f32[4,6]:S(0)"}, {"shape=-1,-1"}}),
              ::testing::HasSubstr("more than one -1"));
  EXPECT_THAT(InferToString({"reshape", "cpu:0-1", {"f32[4,6]:S(0)"}, {"shape=5,-1"}}),
              ::testing::HasSubstr("cannot reshape [4,6] (24 elements) to [5,-1]"));
  EXPECT_THAT(InferToString({"reshape", "cpu:0-1", {"f32[4,6]:S(0)"}, {"shape=0,24"}}),
              ::testing::HasSubstr("attribute shape [0,24] has extent 0 at dim 0"));
  EXPECT_THAT(InferToString({"squeeze", "cpu:0-1", {"f32[4,6]:S(0)"}, {"axes=1"}}),
              ::testing::HasSubstr("names dim 1 of in_0 [4,6], which has extent 6, not 1"));
  // A scalar has no dim 0 to squeeze (it read past the dims; fuzz/infer_fuzzer).
  EXPECT_THAT(InferToString({"squeeze", "cpu:0-1", {"f32[]:B"}, {"axes=0"}}),
              ::testing::HasSubstr("names dim 0 of in_0 [], which has only 0 dims"));
  EXPECT_THAT(InferToString({"expand_dims", "cpu:0-1", {"f32[4,6]:S(0)"}, {"axis=4"}}),
              ::testing::HasSubstr("attribute axis 4 is out of range for rank 3"));
  EXPECT_THAT(InferToString({"flatten", "cpu:0-1", {"f32[4,6]:S(0)"}, {"start_dim=1", "end_dim=0"}}),
              ::testing::HasSubstr("start_dim 1 is after end_dim 0"));
}

struct EnumCase {
  std::string name;
  Shape in;
  Shape out;
  std::vector<int64_t> mesh;
  std::string groups;
  int count;
};

// OneFlow's reshape_user_op_util_test.cpp cases, as SPEC.md §6.3 lists them.
TEST(ReshapeNd, OneFlowEnumerationCases) {
  const std::vector<EnumCase> cases = {
      {"R1", {4}, {2, 2}, {2, 2}, "{0:(0,0)}; {0:(0,0),1:(0,1)}; {1:(0,0)}", 9},
      {"R2", {12}, {2, 2, 3}, {2, 2}, "{0:(0,0)}; {0:(0,0),1:(0,1)}; {1:(0,0)}", 9},
      {"R3", {2, 4}, {8}, {2, 2}, "{0:(0,0)}; {0:(0,0),1:(1,0)}; {1:(0,0)}", 9},
      {"R4", {2, 1, 4}, {8}, {2, 2}, "{0:(0,0)}; {0:(0,0),1:(2,0)}; {1:(0,0)}", 9},
      {"R5", {8, 2}, {2, 4, 2}, {2, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(1,2)}; {1:(0,0)}; {1:(1,2)}", 15},
      {"R6", {8, 1, 2}, {2, 1, 4, 2}, {2, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,2)}; {0:(2,3)}; {1:(0,0)}; {1:(2,3)}", 15},
      {"R7", {3, 2, 3, 5}, {3, 30}, {2, 3}, "{0:(1,1)}; {0:(1,1),1:(2,1)}; {1:(0,0)}", 10},
      {"R8", {2, 4}, {4, 2}, {2, 2}, "{0:(0,0)}; {0:(0,0),1:(1,0)}; {1:(0,0)}", 9},
      {"R9", {4, 2}, {2, 4}, {2, 2}, "{0:(0,0)}; {0:(0,0),1:(0,1)}; {1:(0,0)}", 9},
      {"R10", {4, 3}, {3, 4}, {2, 3}, "none", 4},
      {"R11", {2, 6}, {4, 3}, {2, 3}, "{0:(0,0)}", 6},
      {"R12", {2, 2, 5, 4}, {4, 5, 2, 2}, {2, 2},
       "{0:(0,0)}; {0:(0,0),1:(1,0)}; {0:(3,2)}; {0:(3,2),1:(3,3)}; {1:(0,0)}; {1:(3,2)}", 16},
      {"R13", {24}, {2, 4, 3}, {2, 2, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(0,0),1:(0,1),2:(0,1)}; {0:(0,0),2:(0,1)}; "
       "{1:(0,0)}; {1:(0,0),2:(0,1)}; {2:(0,0)}",
       27},
      {"R14", {3, 24}, {3, 2, 2, 6}, {2, 2, 2},
       "{0:(1,1)}; {0:(1,1),1:(1,2)}; {0:(1,1),1:(1,2),2:(1,3)}; {0:(1,1),2:(1,2)}; "
       "{1:(1,1)}; {1:(1,1),2:(1,2)}; {2:(1,1)}",
       27},
      {"R15", {4, 77, 3}, {2, 2, 77, 3}, {2, 2, 3},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {1:(0,0)}; {2:(2,3)}", 27},
      {"R16", {2, 3, 2, 5}, {12, 5}, {2, 3, 2},
       "{0:(0,0)}; {0:(0,0),1:(1,0)}; {0:(0,0),1:(1,0),2:(2,0)}; {2:(0,0)}", 19},
      {"R17", {2, 1, 3, 2, 5}, {12, 1, 5}, {2, 3, 2},
       "{0:(0,0)}; {0:(0,0),1:(2,0)}; {0:(0,0),1:(2,0),2:(3,0)}; {2:(0,0)}", 19},
      {"R18", {8, 4}, {2, 2, 8}, {2, 2, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(0,0),1:(0,1),2:(0,2)}; {0:(0,0),2:(0,1)}; "
       "{1:(0,0)}; {1:(0,0),2:(0,1)}; {2:(0,0)}",
       27},
      {"R19", {8, 2, 2}, {2, 2, 4, 2}, {2, 2, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(0,0),1:(0,1),2:(0,2)}; {0:(0,0),2:(0,1)}; "
       "{0:(2,3)}; {1:(0,0)}; {1:(0,0),2:(0,1)}; {1:(2,3)}; {2:(0,0)}; {2:(2,3)}",
       54},
      {"R20", {8, 2, 1, 2}, {2, 2, 1, 4, 2}, {2, 2, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(0,0),1:(0,1),2:(0,3)}; {0:(0,0),2:(0,1)}; "
       "{0:(3,4)}; {1:(0,0)}; {1:(0,0),2:(0,1)}; {1:(3,4)}; {2:(0,0)}; {2:(3,4)}",
       54},
      {"R21", {6, 4}, {2, 3, 2, 2}, {2, 3, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(1,2)}; {0:(1,2),2:(1,3)}; {2:(0,0)}; {2:(1,2)}", 33},
      {"R22", {6, 4, 1}, {2, 1, 3, 2, 2}, {2, 3, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,2)}; {0:(1,3)}; {0:(1,3),2:(1,4)}; {2:(0,0)}; {2:(1,3)}", 33},
      {"R23", {6, 3, 4}, {2, 3, 3, 2, 2}, {2, 3, 2},
       "{0:(0,0)}; {0:(0,0),1:(0,1)}; {0:(2,3)}; {0:(2,3),2:(2,4)}; {1:(1,2)}; {2:(0,0)}; "
       "{2:(2,3)}",
       48},
      {"R24", {2, 8}, {2, 2, 2, 2}, {2, 2, 2},
       "{0:(0,0)}; {0:(1,1)}; {0:(1,1),1:(1,2)}; {0:(1,1),1:(1,2),2:(1,3)}; "
       "{0:(1,1),2:(1,2)}; {1:(0,0)}; {1:(1,1)}; {1:(1,1),2:(1,2)}; {2:(0,0)}; {2:(1,1)}",
       54},
  };
  for (const EnumCase& c : cases) {
    EXPECT_EQ(GroupsString(c.in, c.out, c.mesh), c.groups) << c.name;
    EXPECT_EQ(FilteredCount(c.in, c.out, c.mesh), c.count) << c.name;
  }
}

TEST(ReshapeNd, R25FourAxisMesh) {
  const Shape in{4, 77, 8};
  const Shape out{2, 2, 77, 2, 4};
  const std::vector<int64_t> mesh = {2, 2, 2, 2};
  const std::vector<MeshSplitGroup> groups = ops::ReshapeNdGroups(in, out, mesh);
  EXPECT_EQ(groups.size(), 24u);
  int first = 0;
  int second = 0;
  for (const MeshSplitGroup& g : groups) {
    const int in_axis = g.begin()->second.first;
    if (in_axis == 0) {
      ++first;
      EXPECT_LE(g.size(), 2u);
      EXPECT_EQ(g.begin()->second, (std::pair<int, int>{0, 0}));
      if (g.size() == 2) {
        EXPECT_EQ(std::next(g.begin())->second, (std::pair<int, int>{0, 1}));
      }
    } else {
      ++second;
      EXPECT_EQ(g.begin()->second, (std::pair<int, int>{2, 3}));
      for (auto it = std::next(g.begin()); it != g.end(); ++it) {
        EXPECT_EQ(it->second, (std::pair<int, int>{2, 4}));
      }
    }
  }
  EXPECT_EQ(first, 10);
  EXPECT_EQ(second, 14);
  EXPECT_EQ(FilteredCount(in, out, mesh), 242);
}

TEST(ReshapeNd, R1FullListAfterTheFilter) {
  std::vector<std::string> kept;
  const Shape in{4};
  const Shape out{2, 2};
  for (const MeshAssignment& a : ops::ReshapeNdAssignments(in, out, {2, 2})) {
    const auto [i, o] = ops::AssignmentToNdSbps(a);
    const std::string s = absl::StrCat(i.ToLongString(), "->", o.ToLongString());
    if (ops::PassesDivisibilityFilter(a, in, out, {2, 2})) {
      kept.push_back(s);
    } else {
      EXPECT_EQ(s, "S(0),S(0)->S(0),S(0)");
    }
  }
  EXPECT_EQ(absl::StrJoin(kept, " | "),
            "P,P->P,P | P,B->P,B | P,S(0)->P,S(0) | B,P->B,P | B,B->B,B | B,S(0)->B,S(0) | "
            "S(0),P->S(0),P | S(0),B->S(0),B | S(0),S(0)->S(0),S(1)");
}

// B1: OneFlow's sbp_infer_util_test order, from any shuffled, duplicated input.
TEST(ReshapeNd, DedupAndSortByMeasure) {
  const std::vector<std::string> expected = {
      "(B,B)->(B,B)",   "(B,P)->(B,P)",   "(B,S0)->(B,S0)",  "(B,S1)->(B,S1)",
      "(B,S3)->(B,S2)", "(P,B)->(P,B)",   "(P,P)->(P,P)",    "(P,S0)->(P,S0)",
      "(P,S1)->(P,S1)", "(P,S3)->(P,S2)", "(S0,B)->(S0,B)",  "(S0,P)->(S0,P)",
      "(S0,S0)->(S0,S0)", "(S0,S1)->(S0,S1)", "(S0,S3)->(S0,S2)", "(S1,B)->(S1,B)",
      "(S1,P)->(S1,P)", "(S1,S0)->(S1,S0)", "(S1,S1)->(S1,S1)", "(S1,S3)->(S1,S2)",
      "(S3,B)->(S2,B)", "(S3,P)->(S2,P)", "(S3,S0)->(S2,S0)", "(S3,S1)->(S2,S1)",
      "(S3,S3)->(S2,S2)"};
  auto parse = [](const std::string& s) {
    std::string t;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == 'S') {
        absl::StrAppend(&t, "S(", s.substr(i + 1, 1), ")");
        ++i;
      } else {
        t += s[i];
      }
    }
    const size_t arrow = t.find("->");
    return NdSbpSignature{Nd(t.substr(0, arrow)), Nd(t.substr(arrow + 2))};
  };
  auto print = [](const NdSbpSignature& sig) {
    std::string s = absl::StrCat(CompactNdSbpString(sig[0]), "->", CompactNdSbpString(sig[1]));
    std::string t;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 2, "S(") == 0) {
        t += "S";
        t += s[i + 2];
        i += 3;
      } else {
        t += s[i];
      }
    }
    return t;
  };
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::vector<NdSbpSignature> list;
    for (const std::string& e : expected) list.push_back(parse(e));
    for (int d = 0; d < 10; ++d) list.push_back(parse(expected[rng() % expected.size()]));
    std::shuffle(list.begin(), list.end(), rng);
    ops::DedupAndSortByMeasure(&list);
    std::vector<std::string> got;
    for (const NdSbpSignature& sig : list) got.push_back(print(sig));
    EXPECT_EQ(got, expected) << "round " << round;
  }
}

TEST(ReshapeNd, MeasureKeyCollidesOnThreeAxisMeshes) {
  // SPEC.md §6.3: both keys are 39125; the later candidate is dropped.
  const NdSbpSignature a{Nd("(S(0),S(0),S(0))"), Nd("(S(0),S(2),S(1))")};
  const NdSbpSignature b{Nd("(S(0),S(0),P)"), Nd("(S(1),S(0),P)")};
  EXPECT_EQ(ops::OneFlowSbpMeasure(a), 39125u);
  EXPECT_EQ(ops::OneFlowSbpMeasure(b), 39125u);
  std::vector<NdSbpSignature> list = {b, a};
  ops::DedupAndSortByMeasure(&list);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0][1].ToString(), "(S(1), S(0), P)");
}

TEST(ReshapeNd, EndToEndChoices) {
  // The N-D enumeration offers (S(0),S(0)) -> (S(0),S(1)) for [4] -> [2,2]
  // on [2,2]: a producer (S(0),S(0)) keeps its layout.
  EXPECT_EQ(InferToString({"reshape", "cpu:0-3 [2,2]", {"f32[4]:(S(0),S(0))"}, {"shape=2,2"}}),
            "in_0:(S(0),S(0)) -> out_0:(S(0),S(1))");
  // (8,6) -> (2,4,6) from (S(0),S(1)): the product already pairs S(0)->S(0)
  // on axis 0 (8 and 2 divide by 2) and S(1)->S(2) on axis 1.
  EXPECT_EQ(InferToString({"reshape", "cpu:0-3 [2,2]", {"f32[8,6]:(S(0),S(1))"}, {"shape=2,4,6"}}),
            "in_0:(S(0),S(1)) -> out_0:(S(0),S(2))");
  // 1-D: flatten keeps a batch split.
  EXPECT_EQ(InferToString({"flatten", "cpu:0-1", {"f32[4,3,2]:S(0)"}, {"start_dim=1"}}),
            "in_0:S(0) -> out_0:S(0)");
  // squeeze's P -> P is ours (OneFlow lists splits only): `oneflow`
  // reduce-scatters the partial axis, `planned` passes it through.
  InferSpec squeeze{"squeeze", "cpu:0-3 [2,2]", {"f32[4,1,6]:(P,S(2))"}, {"axes=1"}};
  EXPECT_EQ(InferToString(squeeze), "in_0:(S(0),S(2)) -> out_0:(S(0),S(1))");
  squeeze.cost = "planned";
  EXPECT_EQ(InferToString(squeeze), "in_0:(P,S(2)) -> out_0:(P,S(1))");
}

// Issue 23: the nested-split filter must not touch a dim the reshape maps
// to itself (a 1 -> 1 group of equal extent): both sides split it into the
// same slices whatever the part counts, so every rank's local reshape is
// exactly its output slice. Dims that merge or split keep the filter.
TEST(ReshapeNd, IdentityDimsKeepUnevenSplits) {
  struct Case {
    const char* placement;
    const char* input;
    const char* shape;
    const char* chosen;
  };
  const std::vector<Case> cases = {
      // 1000 over 3 is uneven, but dim 1 maps to itself: no boxing.
      {"cpu:0-5 [2,3]", "f32[6,1000,64]:(S(0),S(1))", "shape=6,1000,8,8",
       "in_0:(S(0),S(1)) -> out_0:(S(0),S(1))"},
      // Nested splits of one identity dim: 1000 -> 500 -> 167/167/166.
      {"cpu:0-5 [2,3]", "f32[6,1000,64]:(S(1),S(1))", "shape=6,1000,8,8",
       "in_0:(S(1),S(1)) -> out_0:(S(1),S(1))"},
      // Size-1 dims are in no group: 5 -> 5 is still identity (axis 2 -> 2).
      {"cpu:0-3 [2,2]", "f32[6,6,5]:(S(2),S(2))", "shape=36,1,5",
       "in_0:(S(2),S(2)) -> out_0:(S(2),S(2))"},
      // The soundness fix stays for merged dims: [6,6] -> [36] as
      // (S(0),S(0)) would give rank 0 input rows [0,2) but output [0,9),
      // so that candidate is not offered and the producer is boxed.
      {"cpu:0-3 [2,2]", "f32[6,6,5]:(S(0),S(0))", "shape=36,1,5",
       "in_0:(S(0),S(2)) -> out_0:(S(0),S(2))"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(InferToString({"reshape", c.placement, {c.input}, {c.shape}}), c.chosen) << c.input;
  }
}

TEST(ReshapeNd, NestedSplitFilterExemptsOnlyIdentityDims) {
  const std::vector<int64_t> h = {2, 3};
  const Shape in{6, 1000, 64};
  const Shape out{6, 1000, 8, 8};
  // Identity dim 1, uneven over 3 (and nested): kept.
  EXPECT_TRUE(ops::PassesNestedSplitFilter({{0, 0}, {1, 1}}, in, out, h));
  EXPECT_TRUE(ops::PassesNestedSplitFilter({{1, 1}, {1, 1}}, in, out, h));
  // OneFlow's unit-test filter rejects both.
  EXPECT_FALSE(ops::PassesDivisibilityFilter({{0, 0}, {1, 1}}, in, out, h));
  // Merged dims: [6,6] -> [36] on [2,2], the second split of 3 rows.
  EXPECT_FALSE(ops::PassesNestedSplitFilter({{0, 0}, {0, 0}}, Shape{6, 6}, Shape{36}, {2, 2}));
  // Split dims: [36] -> [6,6] mirrors it.
  EXPECT_FALSE(ops::PassesNestedSplitFilter({{0, 0}, {0, 0}}, Shape{36}, Shape{6, 6}, {2, 2}));
  // A pair that is not the group's own (in 2 -> out 2 is inside a split
  // group here) is judged by divisibility: 64 / 3 fails.
  EXPECT_FALSE(ops::PassesNestedSplitFilter({{-1, -1}, {2, 2}}, in, out, h));
}

}  // namespace
}  // namespace oneflow_sbp::testing
