// Issue 23's claim, on every pair: no pair on [2,2,2] is costlier than
// exhaustive search over the planner's own moves plus ownership splits.
// Planner.NeverWorseThanExhaustiveOwnership (boxing_planner_test) checks
// every pair on [2,2] and [2,3] but only every 5th destination on [2,2,2]
// (819 pairs), to stay quick under ASan; this checks all 4,032 ordered
// pairs of distinct layouts over {B, P, S(0), S(1)}, f32[1024,1000], with
// the reference uncapped. Tagged "sweep" (run by .ci/run's sweep stage).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "boxing/planner.h"
#include "gtest/gtest.h"
#include "tests/boxing/boxing_reference.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::boxing {
namespace {

// Every pair: never costlier than the reference (up to four collective
// moves, then one exchange with exhaustive ownership), and never strictly
// cheaper. The second is not a theorem about the planner as such: its A*
// reaches plans the reference does not model (five or more moves, a p2p
// exchange followed by more moves), and one of those could beat the
// reference. Inside the reference's space it is one: the reference is
// exhaustive there (uncapped; its bound stops a search only at a proven
// optimum), and the planner's ownership candidates (root, split, balanced
// whole and fine: each g-way part of a piece at one member position,
// senders among its copies) are all points of it, so a strictly cheaper
// plan there means one of the two prices an exchange wrongly. Every plan
// here is inside (asserted; with three moves, 10 plans such as
// `(P,P,B) -> (B,S(0),B)`: local_slice, reduce_scatter, all_reduce,
// all_gather would not be), so the assertion is that.
TEST(BoxingOwnershipSweep, EveryPairOnTwoByTwoByTwo) {
  const Calibration cal = Calibration::Defaults(NdSbp::kMaxAxes);
  const Shape shape{1024, 1000};
  const Placement p = testing::P("cpu:0-7 [2,2,2]");
  const std::vector<NdSbp> layouts = reference::AllLayouts(3, 2);
  reference::ReferenceMemo memo;
  int checked = 0, into_partial = 0;
  int64_t max_nodes = 0;
  for (const NdSbp& a : layouts) {
    for (const NdSbp& b : layouts) {
      if (a == b) continue;
      const PlanRequest r{shape, DataType::kFloat32, p, a, p, b};
      absl::StatusOr<BoxingPlan> plan = PlanBoxing(r, cal);
      ASSERT_TRUE(plan.ok()) << plan.status();
      const std::string pair = a.ToString() + " -> " + b.ToString() + ": " + plan->Summary();
      const reference::ReferenceAnswer ref =
          reference::ReferenceBest(r, cal, /*max_steps=*/4, reference::kNoNodeCap, &memo);
      ASSERT_FALSE(ref.any_capped) << pair;
      EXPECT_TRUE(reference::InReferenceSpace(*plan, 4)) << pair;
      EXPECT_LE(plan->time_s(), ref.time_s * (1 + 1e-12))
          << pair << " costs " << plan->time_s() << " s, the reference " << ref.time_s << " s";
      EXPECT_GE(plan->time_s(), ref.time_s * (1 - 1e-9))
          << pair << " is strictly cheaper than the reference's optimum over its space ("
          << plan->time_s() << " s < " << ref.time_s << " s)";
      into_partial += b.any_partial_sum() ? 1 : 0;
      max_nodes = std::max(max_nodes, ref.max_nodes);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4032);
  EXPECT_EQ(into_partial, 37 * 63);  // 37 of the 64 layouts have a P
  // 4,096 reference exchanges (64 layouts reachable, into 64
  // destinations), none capped: the largest search visits 7,059 nodes.
  EXPECT_EQ(memo.size(), 4096u);
  EXPECT_LE(max_nodes, 10000);
}

}  // namespace
}  // namespace oneflow_sbp::boxing
