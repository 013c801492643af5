// Hierarchy reduction (SPEC.md §4.3): CanMergeSplit against a brute-force
// slice comparison, ReduceNdSbps examples (size-1 axes, 3-axis meshes,
// joint reduction), InOutReduce across hierarchies, and exhaustive
// properties: a reduction keeps every rank's slice, only merges runs of
// equal SBPs, and leaves no valid merge undone.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/hierarchy_reduction.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp {
namespace {

using testing::Nd;

// "[4]:(S(0))|(B)": reduced hierarchy, then every reduced nd_sbp.
std::string Str(const ReducedNdSbps& r) {
  std::string s = absl::StrCat("[", absl::StrJoin(r.hierarchy, ","), "]:");
  for (size_t i = 0; i < r.nd_sbps.size(); ++i) {
    absl::StrAppend(&s, i == 0 ? "" : "|", r.nd_sbps[i].ToString());
  }
  return s;
}

std::string Reduce(std::vector<int64_t> h, std::vector<std::string> nds,
                   const Shape& shape) {
  std::vector<NdSbp> v;
  for (const std::string& t : nds) v.push_back(Nd(t));
  return Str(ReduceNdSbps(h, v, shape));
}

std::string InOut(std::vector<int64_t> hin, std::vector<int64_t> hout,
                  const std::string& in, const std::string& out, const Shape& shape) {
  InOutReduced r = InOutReduce(hin, hout, Nd(in), Nd(out), shape);
  return absl::StrCat("[", absl::StrJoin(r.in_hierarchy, ","), "]:", r.in.ToString(),
                      " -> [", absl::StrJoin(r.out_hierarchy, ","), "]:",
                      r.out.ToString());
}

// Row-major unravel, last mesh axis fastest.
std::vector<int64_t> Unravel(int64_t id, absl::Span<const int64_t> h) {
  std::vector<int64_t> c(h.size());
  for (int i = static_cast<int>(h.size()) - 1; i >= 0; --i) {
    c[i] = id % h[i];
    id /= h[i];
  }
  return c;
}

int64_t Product(absl::Span<const int64_t> h) {
  int64_t p = 1;
  for (int64_t v : h) p *= v;
  return p;
}

// ------------------------------------------------------------ CanMergeSplit

TEST(CanMergeSplitTest, SpecExamplesOnTwoByThree) {
  EXPECT_TRUE(CanMergeSplit(12, 6));   // r = 0
  EXPECT_TRUE(CanMergeSplit(13, 6));   // r = 1
  EXPECT_FALSE(CanMergeSplit(14, 6));  // r = 2: nested 3,2,2,3,2,2 vs flat 3,3,2,2,2,2
  EXPECT_TRUE(CanMergeSplit(11, 6));   // r = m - 1
  EXPECT_FALSE(CanMergeSplit(10, 6));  // r = 4
  EXPECT_TRUE(CanMergeSplit(0, 6));
  EXPECT_TRUE(CanMergeSplit(1, 6));
  EXPECT_TRUE(CanMergeSplit(5, 6));
  EXPECT_FALSE(CanMergeSplit(4, 6));
}

TEST(CanMergeSplitTest, MatchesNestedVersusFlatSlicesByBruteForce) {
  int merges = 0, non_merges = 0;
  for (int64_t a = 2; a <= 6; ++a) {
    for (int64_t b = 2; b <= 6; ++b) {
      const int64_t m = a * b;
      std::vector<int64_t> ranks;
      for (int64_t i = 0; i < m; ++i) ranks.push_back(i);
      absl::StatusOr<Placement> nested = Placement::Make(DeviceType::kCpu, ranks, {a, b});
      absl::StatusOr<Placement> flat = Placement::Make(DeviceType::kCpu, ranks, {m});
      ASSERT_TRUE(nested.ok() && flat.ok());
      for (int64_t v = 1; v <= 80; ++v) {
        auto ns = AllRankSlices(Shape{v}, Nd("(S(0),S(0))"), *nested);
        auto fs = AllRankSlices(Shape{v}, Nd("(S(0))"), *flat);
        ASSERT_TRUE(ns.ok() && fs.ok());
        ASSERT_EQ(ns->size(), fs->size());
        const bool same = *ns == *fs;
        EXPECT_EQ(CanMergeSplit(v, m), same) << "a=" << a << " b=" << b << " v=" << v;
        (same ? merges : non_merges)++;
      }
    }
  }
  EXPECT_GT(merges, 0);
  EXPECT_GT(non_merges, 0);
}

// ------------------------------------------------------------- ReduceNdSbps

TEST(ReduceNdSbpsTest, EqualAxesMerge) {
  EXPECT_EQ(Reduce({2, 2}, {"(S(0),S(0))"}, Shape{8}), "[4]:(S(0))");
  EXPECT_EQ(Reduce({2, 3}, {"(P,P)", "(B,B)"}, Shape{12, 10}), "[6]:(P)|(B)");
  EXPECT_EQ(Reduce({2, 3}, {"(S(1),S(1))"}, Shape{2, 12}), "[6]:(S(1))");
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))"}, Shape{13, 10}), "[6]:(S(0))");
}

TEST(ReduceNdSbpsTest, DifferingOrNonMergeableAxesStay) {
  EXPECT_EQ(Reduce({2, 3}, {"(P,B)", "(B,B)"}, Shape{12}), "[2,3]:(P, B)|(B, B)");
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))"}, Shape{14, 10}), "[2,3]:(S(0), S(0))");
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(1))"}, Shape{12, 12}), "[2,3]:(S(0), S(1))");
  EXPECT_EQ(Reduce({2, 2}, {"(S(0),S(0))"}, Shape{6}), "[2,2]:(S(0), S(0))");
}

TEST(ReduceNdSbpsTest, SizeOneAxesAreDropped) {
  EXPECT_EQ(Reduce({1, 4}, {"(B,S(0))"}, Shape{8}), "[4]:(S(0))");
  EXPECT_EQ(Reduce({4, 1}, {"(P,S(0))"}, Shape{8}), "[4]:(P)");
  // The P on the size-1 axis vanishes, so the two S(0) become adjacent.
  EXPECT_EQ(Reduce({2, 1, 2}, {"(S(0),P,S(0))"}, Shape{8}), "[4]:(S(0))");
  EXPECT_EQ(Reduce({2, 1, 2}, {"(S(0),B,B)"}, Shape{8}), "[2,2]:(S(0), B)");
  EXPECT_EQ(Reduce({2, 1, 3}, {"(P,S(0),B)", "(B,B,B)"}, Shape{8}), "[2,3]:(P, B)|(B, B)");
}

TEST(ReduceNdSbpsTest, AllSizeOneHierarchyBecomesBroadcast) {
  EXPECT_EQ(Reduce({1, 1}, {"(P,S(0))", "(S(0),B)"}, Shape{8}), "[1]:(B)|(B)");
  EXPECT_EQ(Reduce({1, 1, 1}, {"(S(0),S(0),P)"}, Shape{8}), "[1]:(B)");
}

TEST(ReduceNdSbpsTest, OneAxisHierarchy) {
  EXPECT_EQ(Reduce({1}, {"(P)", "(S(0))"}, Shape{8}), "[1]:(B)|(B)");
  EXPECT_EQ(Reduce({4}, {"(P)", "(S(0))"}, Shape{8}), "[4]:(P)|(S(0))");
  // A 1-axis hierarchy is returned unchanged, even for an extent < N.
  EXPECT_EQ(Reduce({6}, {"(S(0))"}, Shape{2}), "[6]:(S(0))");
}

TEST(ReduceNdSbpsTest, ThreeAxes) {
  EXPECT_EQ(Reduce({2, 2, 2}, {"(S(0),S(0),B)"}, Shape{8, 4}), "[4,2]:(S(0), B)");
  EXPECT_EQ(Reduce({2, 2, 2}, {"(P,P,P)"}, Shape{8}), "[8]:(P)");
  EXPECT_EQ(Reduce({2, 2, 2}, {"(S(0),S(0),S(0))"}, Shape{9}), "[8]:(S(0))");
  // 10 % 4 = 2 blocks axis 1; axis 2 then splits 5 rows: 5 % 4 = 1 merges.
  EXPECT_EQ(Reduce({2, 2, 2}, {"(S(0),S(0),S(0))"}, Shape{10}), "[2,4]:(S(0), S(0))");
  // 6 % 4 = 2, then 3 rows over 2·3: 3 % 6 = 3 blocks too.
  EXPECT_EQ(Reduce({2, 2, 3}, {"(S(0),S(0),S(0))"}, Shape{6}), "[2,2,3]:(S(0), S(0), S(0))");
  // S(1) opens on axis 1 with the full extent: 12 % 4 = 0 and 7 % 4 = 3 merge.
  EXPECT_EQ(Reduce({2, 2, 2}, {"(S(0),S(1),S(1))"}, Shape{8, 12}), "[2,4]:(S(0), S(1))");
  EXPECT_EQ(Reduce({2, 2, 2}, {"(S(0),S(1),S(1))"}, Shape{8, 7}), "[2,4]:(S(0), S(1))");
  EXPECT_EQ(Reduce({2, 2, 2}, {"(S(0),S(1),S(1))"}, Shape{8, 6}),
            "[2,2,2]:(S(0), S(1), S(1))");
  // 14 on [2,3] fails (14 % 6 = 2); the 3-axis then holds 7 rows: 7 % 6 = 1.
  EXPECT_EQ(Reduce({2, 3, 2}, {"(S(0),S(0),S(0))"}, Shape{14}), "[2,6]:(S(0), S(0))");
}

TEST(ReduceNdSbpsTest, ReopenedSplitDimUsesExtentsAfterEarlierSplit) {
  // Dim 0 split over 2 on axis 0, then S(1), then S(0) twice: the extents of
  // dim 0 there are {⌊v/2⌋, ⌈v/2⌉} and every one must merge over 4.
  const std::vector<int64_t> h = {2, 2, 2, 2};
  EXPECT_EQ(Reduce(h, {"(S(0),S(1),S(0),S(0))"}, Shape{7, 4}), "[2,2,4]:(S(0), S(1), S(0))");
  EXPECT_EQ(Reduce(h, {"(S(0),S(1),S(0),S(0))"}, Shape{9, 4}), "[2,2,4]:(S(0), S(1), S(0))");
  EXPECT_EQ(Reduce(h, {"(S(0),S(1),S(0),S(0))"}, Shape{10, 4}), "[2,2,4]:(S(0), S(1), S(0))");
  // 11 -> {5, 6}; 6 % 4 = 2 blocks the merge. 12 -> {6} blocks it too.
  EXPECT_EQ(Reduce(h, {"(S(0),S(1),S(0),S(0))"}, Shape{11, 4}),
            "[2,2,2,2]:(S(0), S(1), S(0), S(0))");
  EXPECT_EQ(Reduce(h, {"(S(0),S(1),S(0),S(0))"}, Shape{12, 4}),
            "[2,2,2,2]:(S(0), S(1), S(0), S(0))");
}

TEST(ReduceNdSbpsTest, JointReductionMergesOnlyWhenEveryTensorMerges) {
  // Alone, (S0,S0) merges on 12 rows, (S1,S1) does not on 14 columns.
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))"}, Shape{12, 14}), "[6]:(S(0))");
  EXPECT_EQ(Reduce({2, 3}, {"(S(1),S(1))"}, Shape{12, 14}), "[2,3]:(S(1), S(1))");
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))", "(S(1),S(1))"}, Shape{12, 14}),
            "[2,3]:(S(0), S(0))|(S(1), S(1))");
  // A split merging with a B pair.
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))", "(B,B)"}, Shape{12}), "[6]:(S(0))|(B)");
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))", "(B,B)"}, Shape{14}), "[2,3]:(S(0), S(0))|(B, B)");
  // One tensor differs between axes: no merge for either.
  EXPECT_EQ(Reduce({2, 3}, {"(S(0),S(0))", "(P,B)"}, Shape{12}), "[2,3]:(S(0), S(0))|(P, B)");
}

// Exhaustive: hierarchies over {1,2,3} of 2 and 3 axes, one or two nd_sbps
// over {B, P, S0, S1}, shapes (d0, d1). Checks (a) every rank keeps its
// slice, (b) reduced axes are runs of equal SBPs over non-1 mesh axes,
// (c) no two adjacent reduced axes could still be merged.
void CheckReduction(absl::Span<const int64_t> h, absl::Span<const NdSbp> nds,
                    const Shape& shape, int* checked) {
  const ReducedNdSbps r = ReduceNdSbps(h, nds, shape);
  const std::string ctx = absl::StrCat("h=[", absl::StrJoin(h, ","), "] shape=",
                                       shape.ToString(), " nd0=", nds[0].ToString(),
                                       " -> ", Str(r));
  ASSERT_EQ(Product(r.hierarchy), Product(h)) << ctx;
  ASSERT_EQ(r.nd_sbps.size(), nds.size()) << ctx;
  const int64_t n = Product(h);
  for (size_t t = 0; t < nds.size(); ++t) {
    ASSERT_EQ(r.nd_sbps[t].size(), static_cast<int>(r.hierarchy.size())) << ctx;
    for (int64_t id = 0; id < n; ++id) {
      ASSERT_EQ(SliceAt(shape, nds[t], h, Unravel(id, h)),
                SliceAt(shape, r.nd_sbps[t], r.hierarchy, Unravel(id, r.hierarchy)))
          << ctx << " rank " << id;
    }
    // (b): walk the non-1 axes, consuming runs whose product is rh[j].
    size_t d = 0;
    for (size_t j = 0; j < r.hierarchy.size(); ++j) {
      int64_t p = 1;
      while (p < r.hierarchy[j]) {
        while (d < h.size() && h[d] == 1) ++d;
        ASSERT_LT(d, h.size()) << ctx;
        EXPECT_EQ(nds[t][d], r.nd_sbps[t][j]) << ctx << " axis " << d;
        p *= h[d++];
      }
      ASSERT_EQ(p, r.hierarchy[j]) << ctx;
    }
    if (Product(h) == 1) {
      EXPECT_EQ(r.nd_sbps[t], Nd("(B)")) << ctx;
    }
  }
  // (c) maximality.
  for (size_t j = 0; j + 1 < r.hierarchy.size(); ++j) {
    bool equal = true, slices_kept = true;
    Hierarchy merged_h;
    for (size_t k = 0; k < r.hierarchy.size(); ++k) {
      if (k == j + 1) continue;
      merged_h.push_back(k == j ? r.hierarchy[j] * r.hierarchy[j + 1] : r.hierarchy[k]);
    }
    for (size_t t = 0; t < nds.size() && equal && slices_kept; ++t) {
      const NdSbp& rt = r.nd_sbps[t];
      equal = rt[j] == rt[j + 1];
      NdSbp merged;
      for (int k = 0; k < rt.size(); ++k) {
        if (k != static_cast<int>(j) + 1) merged.push_back(rt[k]);
      }
      for (int64_t id = 0; id < n && equal && slices_kept; ++id) {
        slices_kept = SliceAt(shape, rt, r.hierarchy, Unravel(id, r.hierarchy)) ==
                      SliceAt(shape, merged, merged_h, Unravel(id, merged_h));
      }
    }
    EXPECT_FALSE(equal && slices_kept) << ctx << ": axes " << j << "," << j + 1
                                       << " could still merge";
  }
  ++*checked;
}

TEST(ReduceNdSbpsTest, ExhaustivePropertiesOnSmallMeshes) {
  const std::vector<std::string> sbps = {"B", "P", "S(0)", "S(1)"};
  const std::vector<Shape> shapes = {Shape{1, 7},  Shape{5, 6},  Shape{6, 13},
                                     Shape{7, 12}, Shape{11, 9}, Shape{14, 10},
                                     Shape{12, 17}};
  int checked = 0;
  for (int axes = 2; axes <= 3; ++axes) {
    const int hcount = axes == 2 ? 9 : 27;
    const int ncount = axes == 2 ? 16 : 64;
    for (int hi = 0; hi < hcount; ++hi) {
      std::vector<int64_t> h;
      for (int k = 0, x = hi; k < axes; ++k, x /= 3) h.insert(h.begin(), 1 + x % 3);
      auto nd_at = [&](int code) {
        std::vector<std::string> parts;
        for (int k = 0; k < axes; ++k, code /= 4) parts.insert(parts.begin(), sbps[code % 4]);
        return Nd(absl::StrJoin(parts, ","));
      };
      for (int a = 0; a < ncount; ++a) {
        for (const Shape& shape : shapes) {
          const NdSbp one[1] = {nd_at(a)};
          CheckReduction(h, one, shape, &checked);
          if (axes == 2) {
            for (int b = 0; b < ncount; ++b) {
              const NdSbp two[2] = {nd_at(a), nd_at(b)};
              CheckReduction(h, two, shape, &checked);
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

// -------------------------------------------------------------- InOutReduce

TEST(InOutReduceTest, EqualHierarchiesReduceJointly) {
  EXPECT_EQ(InOut({2, 3}, {2, 3}, "(P,P)", "(B,B)", Shape{12, 10}), "[6]:(P) -> [6]:(B)");
  EXPECT_EQ(InOut({2, 3}, {2, 3}, "(P,B)", "(B,B)", Shape{12, 10}),
            "[2,3]:(P, B) -> [2,3]:(B, B)");
  EXPECT_EQ(InOut({2, 3}, {2, 3}, "(S(0),S(0))", "(B,B)", Shape{14, 10}),
            "[2,3]:(S(0), S(0)) -> [2,3]:(B, B)");
}

TEST(InOutReduceTest, OneAxisSideIsLiftedToTwoAxes) {
  // 12 % 6 = 0: (S0) on [6] equals (S0,S0) on [2,3].
  EXPECT_EQ(InOut({6}, {2, 3}, "(S(0))", "(S(0),S(1))", Shape{12, 10}),
            "[2,3]:(S(0), S(0)) -> [2,3]:(S(0), S(1))");
  EXPECT_EQ(InOut({6}, {2, 3}, "(P)", "(P,S(0))", Shape{12, 10}),
            "[2,3]:(P, P) -> [2,3]:(P, S(0))");
  EXPECT_EQ(InOut({2, 3}, {6}, "(S(0),S(1))", "(B)", Shape{12, 10}),
            "[2,3]:(S(0), S(1)) -> [2,3]:(B, B)");
  // Size-1 axes dropped first: [1,6] is one reduced axis, [2,1,3] two.
  EXPECT_EQ(InOut({1, 6}, {2, 1, 3}, "(B,S(1))", "(S(0),P,S(1))", Shape{12, 12}),
            "[2,3]:(S(1), S(1)) -> [2,3]:(S(0), S(1))");
}

TEST(InOutReduceTest, NoLiftForNonMergeableSplitOrOtherRankSums) {
  // 14 % 6 = 2: the split is not liftable.
  EXPECT_EQ(InOut({6}, {2, 3}, "(S(0))", "(S(0),S(1))", Shape{14, 10}),
            "[6]:(S(0)) -> [2,3]:(S(0), S(1))");
  EXPECT_EQ(InOut({2, 3}, {6}, "(B,S(1))", "(S(0))", Shape{14, 10}),
            "[2,3]:(B, S(1)) -> [6]:(S(0))");
  // Both reduce to one axis: rank sum 2.
  EXPECT_EQ(InOut({6}, {2, 3}, "(S(0))", "(B,B)", Shape{14, 10}), "[6]:(S(0)) -> [6]:(B)");
  // Rank sum 4.
  EXPECT_EQ(InOut({2, 3}, {3, 2}, "(S(0),P)", "(B,S(1))", Shape{12, 10}),
            "[2,3]:(S(0), P) -> [3,2]:(B, S(1))");
  // Different products.
  EXPECT_EQ(InOut({6}, {2, 2}, "(B)", "(S(0),S(1))", Shape{12, 10}),
            "[6]:(B) -> [2,2]:(S(0), S(1))");
}

}  // namespace
}  // namespace oneflow_sbp
