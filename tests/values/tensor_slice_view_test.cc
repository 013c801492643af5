// TensorSliceView: balanced splits (SPEC.md §1.5), per-rank slices on 1-D,
// 2-D and 3-D meshes, the partition property of split-only layouts, and
// validation errors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using testing::Nd;

using testing::P;

// Every rank's slice printed, indexed by parallel_id.
std::vector<std::string> SliceStrings(const Shape& shape, const std::string& nd_sbp,
                                      const std::string& placement) {
  absl::StatusOr<std::vector<TensorSlice>> slices =
      AllRankSlices(shape, Nd(nd_sbp), P(placement));
  EXPECT_TRUE(slices.ok()) << slices.status();
  std::vector<std::string> out;
  if (slices.ok()) {
    for (const TensorSlice& s : *slices) out.push_back(s.ToString());
  }
  return out;
}

std::vector<int64_t> ElemCounts(const Shape& shape, const std::string& nd_sbp,
                                const std::string& placement) {
  absl::StatusOr<std::vector<TensorSlice>> slices =
      AllRankSlices(shape, Nd(nd_sbp), P(placement));
  EXPECT_TRUE(slices.ok()) << slices.status();
  std::vector<int64_t> out;
  if (slices.ok()) {
    for (const TensorSlice& s : *slices) out.push_back(s.elem_cnt());
  }
  return out;
}

// ------------------------------------------------------------ BalancedPart

std::vector<int64_t> PartSizes(int64_t d, int64_t k) {
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < k; ++i) sizes.push_back(BalancedPart({0, d}, k, i).size());
  return sizes;
}

TEST(BalancedPartTest, SpecExamples) {
  EXPECT_THAT(PartSizes(10, 4), ElementsAre(3, 3, 2, 2));
  EXPECT_THAT(PartSizes(5, 4), ElementsAre(2, 1, 1, 1));
  EXPECT_EQ(BalancedPart({0, 10}, 4, 0), (IndexRange{0, 3}));
  EXPECT_EQ(BalancedPart({0, 10}, 4, 1), (IndexRange{3, 6}));
  EXPECT_EQ(BalancedPart({0, 10}, 4, 2), (IndexRange{6, 8}));
  EXPECT_EQ(BalancedPart({0, 10}, 4, 3), (IndexRange{8, 10}));
  // A sub-range keeps its offset: [6,11) in 3 parts.
  EXPECT_EQ(BalancedPart({6, 11}, 3, 0), (IndexRange{6, 8}));
  EXPECT_EQ(BalancedPart({6, 11}, 3, 1), (IndexRange{8, 10}));
  EXPECT_EQ(BalancedPart({6, 11}, 3, 2), (IndexRange{10, 11}));
}

TEST(BalancedPartTest, FewerElementsThanParts) {
  EXPECT_THAT(PartSizes(2, 4), ElementsAre(1, 1, 0, 0));
  EXPECT_EQ(BalancedPart({0, 2}, 4, 3), (IndexRange{2, 2}));
  EXPECT_TRUE(BalancedPart({0, 2}, 4, 3).empty());
  EXPECT_FALSE(BalancedPart({0, 2}, 4, 1).empty());
  EXPECT_EQ(BalancedPart({3, 3}, 2, 1), (IndexRange{3, 3}));
}

TEST(BalancedPartTest, AppendBalancedPartsEqualsEveryPart) {
  std::vector<IndexRange> parts = {IndexRange{-1, -1}};  // kept: it appends
  for (IndexRange range : {IndexRange{0, 10}, IndexRange{6, 11}, IndexRange{3, 3},
                           IndexRange{7, 4}, IndexRange{0, 2}}) {
    for (int64_t k = 1; k <= 6; ++k) {
      parts.resize(1);
      AppendBalancedParts(range, k, &parts);
      ASSERT_EQ(parts.size(), static_cast<size_t>(k) + 1);
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_EQ(parts[i + 1], BalancedPart(range, k, i))
            << range.begin << "," << range.end << " / " << k << " part " << i;
      }
    }
  }
  EXPECT_EQ(parts[0], (IndexRange{-1, -1}));
}

TEST(BalancedPartTest, Property) {
  for (int64_t d = 0; d <= 20; ++d) {
    for (int64_t k = 1; k <= 7; ++k) {
      int64_t next = 5;  // offset of the range [5, 5 + d)
      for (int64_t i = 0; i < k; ++i) {
        const IndexRange r = BalancedPart({5, 5 + d}, k, i);
        EXPECT_EQ(r.begin, next) << d << "/" << k << " part " << i;
        EXPECT_EQ(r.size(), d / k + (i < d % k ? 1 : 0)) << d << "/" << k << " part " << i;
        next = r.end;
      }
      EXPECT_EQ(next, 5 + d) << d << "/" << k;
    }
  }
}

// ------------------------------------------------------------- TensorSlice

TEST(TensorSliceTest, Basics) {
  const TensorSlice full(Shape{10, 6});
  EXPECT_EQ(full.rank(), 2);
  EXPECT_EQ(full.ToString(), "[0,10)x[0,6)");
  EXPECT_EQ(full.elem_cnt(), 60);
  const TensorSlice scalar{Shape()};
  EXPECT_EQ(scalar.ToString(), "[]");
  EXPECT_EQ(scalar.elem_cnt(), 1);

  TensorSlice a(Shape{10, 6});
  a.set_range(0, {0, 5});
  a.set_range(1, {0, 3});
  TensorSlice b(Shape{10, 6});
  b.set_range(0, {3, 10});
  b.set_range(1, {2, 6});
  EXPECT_EQ(a.Intersect(b).ToString(), "[3,5)x[2,3)");
  EXPECT_EQ(a.Intersect(b).elem_cnt(), 2);
  b.set_range(1, {3, 6});
  EXPECT_EQ(a.Intersect(b).elem_cnt(), 0);
  EXPECT_TRUE(a.Intersect(b).range(1).empty());
  EXPECT_NE(a, b);
  EXPECT_EQ(a, a.Intersect(full));
}

// -------------------------------------------------------------- rank slices

TEST(RankSliceTest, HeaderExample) {
  EXPECT_THAT(SliceStrings(Shape{10, 6}, "(S(0), S(1))", "cpu:0-3 [2,2]"),
              ElementsAre("[0,5)x[0,3)", "[0,5)x[3,6)", "[5,10)x[0,3)", "[5,10)x[3,6)"));
}

TEST(RankSliceTest, SpecExampleSplitTwiceOnUnevenExtent) {
  EXPECT_THAT(SliceStrings(Shape{11}, "(S(0), S(0))", "cpu:0-5 [2,3]"),
              ElementsAre("[0,2)", "[2,4)", "[4,6)", "[6,8)", "[8,10)", "[10,11)"));
  EXPECT_THAT(ElemCounts(Shape{11}, "(S(0), S(0))", "cpu:0-5 [2,3]"),
              ElementsAre(2, 2, 2, 2, 2, 1));
}

TEST(RankSliceTest, OneDimensionalMesh) {
  EXPECT_THAT(SliceStrings(Shape{10, 3}, "S(0)", "cpu:0-3"),
              ElementsAre("[0,3)x[0,3)", "[3,6)x[0,3)", "[6,8)x[0,3)", "[8,10)x[0,3)"));
  EXPECT_THAT(SliceStrings(Shape{8, 4}, "S(1)", "cpu:0-3"),
              ElementsAre("[0,8)x[0,1)", "[0,8)x[1,2)", "[0,8)x[2,3)", "[0,8)x[3,4)"));
  // Extent 3 over 4 ranks: the last rank's range is empty.
  EXPECT_THAT(SliceStrings(Shape{10, 3}, "S(1)", "cpu:0-3"),
              ElementsAre("[0,10)x[0,1)", "[0,10)x[1,2)", "[0,10)x[2,3)", "[0,10)x[3,3)"));
  EXPECT_THAT(ElemCounts(Shape{10, 3}, "S(1)", "cpu:0-3"), ElementsAre(10, 10, 10, 0));
}

TEST(RankSliceTest, TwoDimensionalMeshCrossedAxes) {
  // Mesh axis 0 cuts dim 1 in 2, mesh axis 1 cuts dim 0 in 3.
  EXPECT_THAT(SliceStrings(Shape{7, 5}, "(S(1), S(0))", "cpu:0-5 [2,3]"),
              ElementsAre("[0,3)x[0,3)", "[3,5)x[0,3)", "[5,7)x[0,3)", "[0,3)x[3,5)",
                          "[3,5)x[3,5)", "[5,7)x[3,5)"));
  // Even extents.
  EXPECT_THAT(SliceStrings(Shape{4, 6}, "(S(0), S(1))", "cuda:0-5 [2,3]"),
              ElementsAre("[0,2)x[0,2)", "[0,2)x[2,4)", "[0,2)x[4,6)", "[2,4)x[0,2)",
                          "[2,4)x[2,4)", "[2,4)x[4,6)"));
}

TEST(RankSliceTest, ThreeDimensionalMesh) {
  EXPECT_THAT(SliceStrings(Shape{5, 3}, "(S(0), B, S(1))", "cpu:0-7 [2,2,2]"),
              ElementsAre("[0,3)x[0,2)", "[0,3)x[2,3)", "[0,3)x[0,2)", "[0,3)x[2,3)",
                          "[3,5)x[0,2)", "[3,5)x[2,3)", "[3,5)x[0,2)", "[3,5)x[2,3)"));
  EXPECT_THAT(SliceStrings(Shape{10}, "(S(0), S(0), S(0))", "cpu:0-7 [2,2,2]"),
              ElementsAre("[0,2)", "[2,3)", "[3,4)", "[4,5)", "[5,7)", "[7,8)", "[8,9)",
                          "[9,10)"));
  EXPECT_THAT(SliceStrings(Shape{2, 3, 4}, "(S(2), S(0), S(1))", "cpu:0-7 [2,2,2]"),
              ElementsAre("[0,1)x[0,2)x[0,2)", "[0,1)x[2,3)x[0,2)", "[1,2)x[0,2)x[0,2)",
                          "[1,2)x[2,3)x[0,2)", "[0,1)x[0,2)x[2,4)", "[0,1)x[2,3)x[2,4)",
                          "[1,2)x[0,2)x[2,4)", "[1,2)x[2,3)x[2,4)"));
}

TEST(RankSliceTest, ExtentSmallerThanParts) {
  const std::vector<std::string> s = SliceStrings(Shape{3}, "(S(0), S(0))", "cpu:0-5 [2,3]");
  EXPECT_THAT(s, ElementsAre("[0,1)", "[1,2)", "[2,2)", "[2,3)", "[3,3)", "[3,3)"));
  EXPECT_THAT(ElemCounts(Shape{3}, "(S(0), S(0))", "cpu:0-5 [2,3]"),
              ElementsAre(1, 1, 0, 1, 0, 0));
  EXPECT_THAT(ElemCounts(Shape{1, 4}, "S(0)", "cpu:0-2"), ElementsAre(4, 0, 0));
}

TEST(RankSliceTest, BroadcastAndPartialKeepFullRange) {
  EXPECT_THAT(SliceStrings(Shape{4, 5}, "(B, P)", "cpu:0-3 [2,2]"),
              ElementsAre("[0,4)x[0,5)", "[0,4)x[0,5)", "[0,4)x[0,5)", "[0,4)x[0,5)"));
  EXPECT_THAT(SliceStrings(Shape{4, 5}, "P", "cpu:0-2"),
              ElementsAre("[0,4)x[0,5)", "[0,4)x[0,5)", "[0,4)x[0,5)"));
  EXPECT_THAT(SliceStrings(Shape{4, 5}, "(B, S(1))", "cpu:0-3 [2,2]"),
              ElementsAre("[0,4)x[0,3)", "[0,4)x[3,5)", "[0,4)x[0,3)", "[0,4)x[3,5)"));
  EXPECT_THAT(SliceStrings(Shape{4, 5}, "(S(0), P)", "cpu:0-3 [2,2]"),
              ElementsAre("[0,2)x[0,5)", "[0,2)x[0,5)", "[2,4)x[0,5)", "[2,4)x[0,5)"));
  EXPECT_THAT(SliceStrings(Shape(), "(B, B)", "cpu:0-3 [2,2]"),
              ElementsAre("[]", "[]", "[]", "[]"));
}

TEST(RankSliceTest, RankSliceAndSliceAtAgreeWithAllRankSlices) {
  const Shape shape{9, 7, 2};
  const NdSbp nd = Nd("(S(1), P, S(0))");
  const Placement p = P("cpu:0,2,4,6,8,10,12,14,16,18,20,22 [3,2,2]");
  absl::StatusOr<std::vector<TensorSlice>> all = AllRankSlices(shape, nd, p);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 12u);
  for (int64_t id = 0; id < 12; ++id) {
    absl::StatusOr<TensorSlice> one = RankSlice(shape, nd, p, id);
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ(*one, (*all)[id]) << id;
    EXPECT_EQ(SliceAt(shape, nd, p.hierarchy(), p.CoordinateOf(id)), (*all)[id]) << id;
  }
  EXPECT_EQ((*all)[11].ToString(), "[5,9)x[5,7)x[0,2)");
  for (int64_t bad : {int64_t{-1}, int64_t{12}}) {
    absl::StatusOr<TensorSlice> s = RankSlice(shape, nd, p, bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("parallel_id " + std::to_string(bad)));
  }
}

// For every split-only nd_sbp (all axis choices) on several shapes and meshes,
// the ranks' slices are pairwise disjoint and their sizes sum to the tensor.
TEST(RankSliceTest, SplitOnlyLayoutsPartitionTheTensor) {
  const std::vector<std::string> kPlacements = {
      "cpu:0-3", "cpu:0-4", "cpu:0-5 [2,3]", "cpu:0-7 [2,2,2]", "cpu:0-5 [3,1,2]",
      "cuda:0-11 [2,3,2]", "cpu:0-7 [4,2]"};
  const std::vector<Shape> kShapes = {Shape{10}, Shape{3}, Shape{7, 5}, Shape{1, 9},
                                      Shape{11, 4, 2}, Shape{2, 3, 5}};
  int checked = 0;
  for (const std::string& pt : kPlacements) {
    const Placement p = P(pt);
    for (const Shape& shape : kShapes) {
      // Odometer over split axes: one digit per mesh axis, base = rank.
      std::vector<int> axes(p.num_axes(), 0);
      while (true) {
        NdSbp nd;
        for (int a : axes) nd.push_back(SbpParallel::Split(a));
        absl::StatusOr<std::vector<TensorSlice>> s = AllRankSlices(shape, nd, p);
        ASSERT_TRUE(s.ok()) << s.status();
        ASSERT_EQ(static_cast<int64_t>(s->size()), p.parallel_num());
        int64_t total = 0;
        for (size_t i = 0; i < s->size(); ++i) {
          total += (*s)[i].elem_cnt();
          for (size_t j = i + 1; j < s->size(); ++j) {
            EXPECT_EQ((*s)[i].Intersect((*s)[j]).elem_cnt(), 0)
                << nd.ToString() << " " << shape.ToString() << " on " << pt << ": ranks "
                << i << " and " << j << " overlap";
          }
        }
        EXPECT_EQ(total, shape.elem_cnt())
            << nd.ToString() << " " << shape.ToString() << " on " << pt;
        ++checked;
        int i = p.num_axes() - 1;
        while (i >= 0 && ++axes[i] == shape.rank()) axes[i--] = 0;
        if (i < 0) break;
      }
    }
  }
  EXPECT_GT(checked, 200);
}

// ------------------------------------------------------------------ errors

TEST(ValidateNdSbpTest, Accepts) {
  EXPECT_TRUE(ValidateNdSbp(Nd("(S(1), B)"), Shape{4, 4}, {2, 2}).ok());
  EXPECT_TRUE(ValidateNdSbp(Nd("(P)"), Shape(), {4}).ok());
  EXPECT_TRUE(ValidateNdSbp(Nd("(S(2), S(2), P)"), Shape{1, 1, 1}, {2, 1, 2}).ok());
}

TEST(ValidateNdSbpTest, ErrorsNameTheValues) {
  struct Case {
    NdSbp nd_sbp;
    Shape shape;
    std::vector<int64_t> hierarchy;
    std::vector<std::string> needles;
  };
  const Case kCases[] = {
      {Nd("S(2)"), Shape{4, 4}, {4}, {"S(2)", "[4,4]"}},
      {Nd("(B, S(1))"), Shape{8}, {2, 2}, {"S(1)", "[8]", "mesh axis 1"}},
      {Nd("S(0)"), Shape(), {4}, {"S(0)", "[]"}},
      {Nd("(S(0))"), Shape{4, 4}, {2, 2}, {"(S(0))", "[2,2]"}},
      {Nd("(S(0), B, B)"), Shape{4, 4}, {2, 2}, {"(S(0), B, B)", "[2,2]"}},
      {NdSbp(), Shape{4}, {4}, {"()", "[4]"}},
      {NdSbp{SbpParallel::Broadcast(), SbpParallel()}, Shape{4}, {2, 2}, {"unset", "1"}},
  };
  for (const Case& c : kCases) {
    const absl::Status s = ValidateNdSbp(c.nd_sbp, c.shape, c.hierarchy);
    ASSERT_FALSE(s.ok()) << c.nd_sbp.ToString() << " " << c.shape.ToString();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
    for (const std::string& needle : c.needles) {
      EXPECT_THAT(std::string(s.message()), HasSubstr(needle)) << c.nd_sbp.ToString();
    }
  }
}

TEST(ValidateNdSbpTest, SlicesReportValidationErrors) {
  absl::StatusOr<std::vector<TensorSlice>> all =
      AllRankSlices(Shape{8}, Nd("S(1)"), P("cpu:0-3"));
  ASSERT_FALSE(all.ok());
  EXPECT_THAT(all, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(all.status().message()), HasSubstr("S(1)"));
  EXPECT_THAT(std::string(all.status().message()), HasSubstr("[8]"));

  all = AllRankSlices(Shape{8, 8}, Nd("(S(0), B)"), P("cpu:0-3"));
  ASSERT_FALSE(all.ok());
  EXPECT_THAT(all, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(all.status().message()), HasSubstr("(S(0), B)"));

  absl::StatusOr<TensorSlice> one = RankSlice(Shape{8, 8}, Nd("S(0)"), P("cpu:0-3 [2,2]"), 0);
  ASSERT_FALSE(one.ok());
  EXPECT_THAT(one, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(one.status().message()), HasSubstr("[2,2]"));
}

}  // namespace
}  // namespace oneflow_sbp
