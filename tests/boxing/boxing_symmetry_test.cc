// The symmetry the boxing planner relies on to price large meshes without
// per-rank state (boxing/collective_moves.cc, TranslateClasses;
// boxing/missing_elements.h), checked against brute force over every rank
// on small meshes with uneven and empty slices:
// - MaxMissingElements equals the maximum over ranks of what each rank lacks;
// - a collective move priced by classes (the search's fast path) agrees
//   with the detailed step that walks every group, on whether it is exact
//   and on its busiest rank's bytes;
// - within a layout, a group's slices are pairwise disjoint exactly when its
//   axes split, or every slice is empty (the rule PairwiseDisjoint uses).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/collective_moves.h"
#include "boxing/missing_elements.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "tests/boxing/boxing_reference.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::boxing {
namespace {

using testing::P;

using reference::AllLayouts;

struct Case {
  const char* placement;
  Shape shape;
};

// Uneven extents, extents smaller than their parts (empty slices), three
// axes, a scalar and a rank-3 tensor.
const Case kCases[] = {
    {"cpu:0-3 [2,2]", Shape{8, 6}},    {"cpu:0-5 [2,3]", Shape{7, 4}},
    {"cpu:0-5 [3,2]", Shape{2, 5}},    {"cpu:0-11 [3,4]", Shape{1, 9}},
    {"cpu:0-7 [2,2,2]", Shape{5, 3}},  {"cpu:0-11 [2,3,2]", Shape{3, 7, 2}},
    {"cpu:0-7 [4,2]", Shape{13, 6}},   {"cpu:0-3 [2,2]", Shape{}},
    {"cpu:0-15 [4,4]", Shape{6, 17}},
    {"cpu:0-5 [2,3]", Shape{1, 2}},{"cpu:0-5 [2,3]", Shape{2, 1}},{"cpu:0-5 [2,3]", Shape{3, 2}},{"cpu:0-5 [2,3]", Shape{4, 3}},{"cpu:0-5 [2,3]", Shape{5, 1}},
    {"cpu:0-5 [3,2]", Shape{1, 2}},{"cpu:0-5 [3,2]", Shape{2, 1}},{"cpu:0-5 [3,2]", Shape{3, 2}},{"cpu:0-5 [3,2]", Shape{4, 3}},{"cpu:0-5 [3,2]", Shape{5, 1}},
    {"cpu:0-8 [3,3]", Shape{1, 2}},{"cpu:0-8 [3,3]", Shape{2, 4}},{"cpu:0-8 [3,3]", Shape{4, 5}},{"cpu:0-8 [3,3]", Shape{7, 1}},
    {"cpu:0-7 [2,4]", Shape{3, 2}},{"cpu:0-7 [2,4]", Shape{5, 6}},{"cpu:0-7 [4,2]", Shape{3, 2}},{"cpu:0-7 [4,2]", Shape{5, 7}},
    {"cpu:0-7 [2,2,2]", Shape{1, 3}},{"cpu:0-7 [2,2,2]", Shape{3, 3}},{"cpu:0-11 [3,2,2]", Shape{2, 5}},{"cpu:0-11 [2,2,3]", Shape{5, 2}},
};

int64_t BruteMaxMissing(const Shape& shape, const Placement& p, const NdSbp& held,
                        const NdSbp& need) {
  const std::vector<TensorSlice> have = *AllRankSlices(shape, held, p);
  const std::vector<TensorSlice> want = *AllRankSlices(shape, need, p);
  int64_t worst = 0;
  for (size_t r = 0; r < want.size(); ++r) {
    worst = std::max(worst, want[r].elem_cnt() - OverlapCount(want[r], have[r]));
  }
  return worst;
}

TEST(BoxingSymmetry, MaxMissingElementsEqualsTheWorstRank) {
  int checked = 0;
  for (const Case& c : kCases) {
    const Placement p = P(c.placement);
    const std::vector<NdSbp> layouts = AllLayouts(p.num_axes(), c.shape.rank());
    for (const NdSbp& held : layouts) {
      for (const NdSbp& need : layouts) {
        ASSERT_EQ(MaxMissingElements(c.shape, p.hierarchy(), held, need),
                  BruteMaxMissing(c.shape, p, held, need))
            << c.placement << " " << c.shape.ToString() << " " << held.ToString() << " -> "
            << need.ToString();
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(BoxingSymmetry, MaxMissingElementsOnALargeMeshWithUnevenDims) {
  // 1,000 rows over 16 x 64 ranks: parts of 62 and 63 rows, then of 0 or 1.
  const Placement p = P("cpu:0-1023 [16,64]");
  const Shape shape{1000, 3};
  for (const char* held : {"(S(0),S(1))", "(S(0),S(0))", "(B,S(0))", "(S(1),S(0))"}) {
    for (const char* need : {"(S(0),B)", "(S(1),S(0))", "(B,B)", "(S(0),S(0))"}) {
      EXPECT_EQ(MaxMissingElements(shape, p.hierarchy(), testing::Nd(held), testing::Nd(need)),
                BruteMaxMissing(shape, p, testing::Nd(held), testing::Nd(need)))
          << held << " -> " << need;
    }
  }
}

// The header's table evaluated group by group with pairwise overlap
// tests: independent of the class machinery.
void ExpectBruteForceBytes(const Shape& shape, const Placement& p, const NdSbp& before,
                           const NdSbp& after, const BoxingStep& step, const std::string& what) {
  const std::vector<TensorSlice> old_s = *AllRankSlices(shape, before, p);
  const std::vector<TensorSlice> new_s = *AllRankSlices(shape, after, p);
  for (const std::vector<int64_t>& g : p.SubGroups(step.axes)) {
    const int n = static_cast<int>(g.size());
    TensorSlice box = old_s[g[0]];
    for (int d = 0; d < shape.rank(); ++d) {
      IndexRange hull{0, 0};
      bool any = false;
      for (int64_t m : g) {
        const IndexRange r = old_s[m].range(d);
        if (r.empty()) continue;
        hull = any ? IndexRange{std::min(hull.begin, r.begin), std::max(hull.end, r.end)} : r;
        any = true;
      }
      if (any) box.set_range(d, hull);
    }
    auto tiles = [&](const std::vector<TensorSlice>& s) {
      int64_t total = 0;
      for (int a = 0; a < n; ++a) {
        total += s[g[a]].elem_cnt();
        if (s[g[a]].elem_cnt() != 0 && OverlapCount(s[g[a]], box) != s[g[a]].elem_cnt()) {
          return false;
        }
        for (int b = a + 1; b < n; ++b) {
          if (OverlapCount(s[g[a]], s[g[b]]) != 0) return false;
        }
      }
      return total == box.elem_cnt();
    };
    auto copies_of = [&](const std::vector<TensorSlice>& s, const TensorSlice* of) {
      for (int64_t m : g) {
        if (s[m] != (of ? *of : s[g[0]])) return false;
      }
      return true;
    };
    bool exact = false;
    switch (step.kind) {
      case StepKind::kAllGather:
      case StepKind::kLocalScatter:
        exact = tiles(old_s) && copies_of(new_s, &box);
        break;
      case StepKind::kReduceScatter:
        exact = copies_of(old_s, nullptr) && tiles(new_s);
        break;
      case StepKind::kAllReduce:
      case StepKind::kLocalPartial:
        exact = copies_of(old_s, nullptr) && copies_of(new_s, &box);
        break;
      case StepKind::kAllToAll:
        exact = tiles(old_s) && tiles(new_s);
        break;
      default:
        exact = copies_of(old_s, nullptr);
        break;
    }
    ASSERT_TRUE(exact) << what << ": the planner offered a move brute force finds inexact";
    const int64_t total = box.elem_cnt() * 4;
    for (int k = 0; k < n; ++k) {
      auto chunk = [&](const std::vector<TensorSlice>& s, int j) {
        return s[g[(j % n + n) % n]].elem_cnt() * 4;
      };
      auto part = [&](int j) {
        return BalancedPart(IndexRange{0, box.elem_cnt()}, n, (j % n + n) % n).size() * 4;
      };
      int64_t sent = 0;
      int64_t received = 0;
      switch (step.kind) {
        case StepKind::kAllGather:
          sent = total - chunk(old_s, k + 1);
          received = total - chunk(old_s, k);
          break;
        case StepKind::kReduceScatter:
          sent = total - chunk(new_s, k);
          received = total - chunk(new_s, k - 1);
          break;
        case StepKind::kAllReduce:
          sent = 2 * total - part(k) - part(k + 1);
          received = 2 * total - part(k - 1) - part(k);
          break;
        case StepKind::kAllToAll: {
          const int64_t kept = OverlapCount(old_s[g[k]], new_s[g[k]]) * 4;
          sent = old_s[g[k]].elem_cnt() * 4 - kept;
          received = new_s[g[k]].elem_cnt() * 4 - kept;
          break;
        }
        default:
          break;
      }
      EXPECT_EQ(step.bytes_sent[g[k]], sent) << what << " rank " << g[k];
      EXPECT_EQ(step.bytes_received[g[k]], received) << what << " rank " << g[k];
    }
  }
}

std::vector<MeshAxisMask> AxisSets(int axes) {
  std::vector<MeshAxisMask> sets;
  for (MeshAxisMask m = 1; m < (MeshAxisMask{1} << axes); ++m) sets.push_back(m);
  return sets;
}

TEST(BoxingSymmetry, ClassPricedMovesAgreeWithEveryGroupWalked) {
  const Calibration cal = Calibration::Defaults(NdSbp::kMaxAxes);
  int exact = 0;
  int refused = 0;
  for (const Case& c : kCases) {
    const Placement p = P(c.placement);
    std::vector<int> index(p.parallel_num());
    for (int i = 0; i < p.parallel_num(); ++i) index[i] = i;
    LayoutSpace space(c.shape, DataType::kFloat32, p, index, p.parallel_num());
    std::vector<SbpParallel> targets = {SbpParallel::Broadcast(), SbpParallel::PartialSum()};
    for (int d = 0; d < c.shape.rank(); ++d) targets.push_back(SbpParallel::Split(d));
    for (const NdSbp& layout : AllLayouts(p.num_axes(), c.shape.rank())) {
      for (MeshAxisMask axes : AxisSets(p.num_axes())) {
        for (SbpParallel to : targets) {
          const std::string what = absl::StrCat(c.placement, " ", c.shape.ToString(), " ",
                                                layout.ToString(), " axes ", axes, " -> ",
                                                to.ToString());
          const std::optional<BoxingStep> fast =
              CollectiveMove(space, layout, axes, to, cal, /*detailed=*/false);
          const std::optional<BoxingStep> full =
              CollectiveMove(space, layout, axes, to, cal, /*detailed=*/true);
          ASSERT_EQ(fast.has_value(), full.has_value()) << what;
          if (!fast) {
            ++refused;
            continue;
          }
          ++exact;
          EXPECT_EQ(fast->time_s, full->time_s) << what;
          EXPECT_EQ(fast->result, full->result) << what;
          EXPECT_TRUE(fast->bytes_sent.empty()) << what;
          ASSERT_EQ(full->bytes_sent.size(), static_cast<size_t>(p.parallel_num())) << what;
          if (!IsLocal(full->kind)) {
            EXPECT_EQ(fast->time_s, cal.StepTime(axes, full->max_rank_bytes())) << what;
          }
          // The detailed bytes against brute force, group by group.
          ExpectBruteForceBytes(c.shape, p, layout, full->result, *full, what);
        }
      }
    }
  }
  // Both outcomes are exercised.
  EXPECT_GT(exact, 1000);
  EXPECT_GT(refused, 1000);
}

// Detailed bytes against the table of collective_moves.h, group by group,
// for an all-gather and a reduce-scatter whose groups are not all alike
// (13 rows over 4: parts of 4, 3, 3, 3).
TEST(BoxingSymmetry, UnevenGroupsGetTheirOwnBytes) {
  const Calibration cal = Calibration::Defaults(NdSbp::kMaxAxes);
  const Placement p = P("cpu:0-7 [4,2]");
  const Shape shape{13, 6};
  LayoutSpace space(shape, DataType::kFloat32, p, {0, 1, 2, 3, 4, 5, 6, 7}, 8);
  // (S(0),S(1)) -> (S(0),B): all-gather on axis 1 within each row block;
  // group g (ranks 2g, 2g+1) gathers a block of rows(g) x 6, each rank
  // holding rows(g) x 3 and receiving the other half.
  const std::optional<BoxingStep> gather =
      CollectiveMove(space, testing::Nd("(S(0),S(1))"), AxisBit(1), SbpParallel::Broadcast(), cal);
  ASSERT_TRUE(gather.has_value());
  const int64_t rows[] = {4, 3, 3, 3};
  for (int g = 0; g < 4; ++g) {
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(gather->bytes_received[2 * g + k], rows[g] * 3 * 4) << g;
      EXPECT_EQ(gather->bytes_sent[2 * g + k], rows[g] * 3 * 4) << g;
    }
  }
  // (P,S(1)) -> (S(0),S(1)): reduce-scatter on axis 0; every group (one
  // column half each) ends with 4, 3, 3, 3 rows of 3 columns.
  const std::optional<BoxingStep> scatter = CollectiveMove(
      space, testing::Nd("(P,S(1))"), AxisBit(0), SbpParallel::Split(0), cal);
  ASSERT_TRUE(scatter.has_value());
  ASSERT_EQ(scatter->groups.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    for (int k = 0; k < 4; ++k) {
      const int rank = 2 * k + g;
      // Ring: rank k sends all but its own chunk, receives all but the
      // previous rank's.
      EXPECT_EQ(scatter->bytes_sent[rank], (13 - rows[k]) * 3 * 4) << rank;
      EXPECT_EQ(scatter->bytes_received[rank], (13 - rows[(k + 3) % 4]) * 3 * 4) << rank;
    }
  }
}

TEST(BoxingSymmetry, GroupSlicesAreDisjointExactlyWhenTheGroupSplits) {
  for (const Case& c : kCases) {
    const Placement p = P(c.placement);
    for (const NdSbp& layout : AllLayouts(p.num_axes(), c.shape.rank())) {
      const std::vector<TensorSlice> slices = *AllRankSlices(c.shape, layout, p);
      for (MeshAxisMask axes : AxisSets(p.num_axes())) {
        // Only groups whose axes carry one SBP are ever moved (MoveSource).
        SbpParallel first;
        bool uniform = true;
        bool seen = false;
        for (int i = 0; i < p.num_axes(); ++i) {
          if (!(axes & AxisBit(i))) continue;
          uniform = uniform && (!seen || layout[i] == first);
          first = layout[i];
          seen = true;
        }
        if (!uniform) continue;
        for (const std::vector<int64_t>& g : p.SubGroups(axes)) {
          bool disjoint = true;
          bool any_nonempty = false;
          for (size_t a = 0; a < g.size(); ++a) {
            any_nonempty = any_nonempty || slices[g[a]].elem_cnt() != 0;
            for (size_t b = a + 1; b < g.size(); ++b) {
              disjoint = disjoint && OverlapCount(slices[g[a]], slices[g[b]]) == 0;
            }
          }
          const bool replicas = !first.is_split() && g.size() > 1;
          EXPECT_EQ(disjoint, !replicas || !any_nonempty)
              << c.placement << " " << c.shape.ToString() << " " << layout.ToString()
              << " axes " << axes;
        }
      }
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::boxing
