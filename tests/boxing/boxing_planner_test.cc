// The boxing planner: per-step byte counts against ring formulas, exact
// uneven splits, optimality against exhaustive search of short plans, the
// naive per-axis plan, placement changes, errors and determinism.
#include "boxing/planner.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/collective_moves.h"
#include "boxing/p2p_exchange.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/boxing/boxing_reference.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::boxing {
namespace {

using testing::Nd;
using testing::P;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

const Calibration& Cal() {
  static const Calibration c = Calibration::Defaults(NdSbp::kMaxAxes);
  return c;
}

std::vector<int> Identity(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

BoxingStep Move(const Shape& shape, const std::string& placement, const std::string& from,
                MeshAxisMask axes, const std::string& to) {
  const Placement p = P(placement);
  LayoutSpace space(shape, DataType::kFloat32, p, Identity(p.parallel_num()),
                    p.parallel_num());
  std::optional<BoxingStep> step = CollectiveMove(space, Nd(from), axes, *SbpParallel::Parse(to), Cal());
  EXPECT_TRUE(step.has_value()) << from << " axes " << axes << " -> " << to;
  return step.value_or(BoxingStep());
}

// --- Per-rank bytes against the ring formulas (T = 8x6 f32 = 192 bytes) ----

TEST(CollectiveMoves, RingFormulasOnEvenSplits) {
  const Shape s{8, 6};
  const int64_t T = 192;
  // n = 4 on one axis.
  BoxingStep ag = Move(s, "cpu:0-3", "S(0)", AxisBit(0), "B");
  EXPECT_EQ(ag.kind, StepKind::kAllGather);
  EXPECT_THAT(ag.bytes_received, ElementsAreArray(std::vector<int64_t>(4, T * 3 / 4)));
  EXPECT_THAT(ag.bytes_sent, ElementsAreArray(std::vector<int64_t>(4, T * 3 / 4)));
  BoxingStep rs = Move(s, "cpu:0-3", "P", AxisBit(0), "S(0)");
  EXPECT_EQ(rs.kind, StepKind::kReduceScatter);
  EXPECT_THAT(rs.bytes_received, ElementsAreArray(std::vector<int64_t>(4, T * 3 / 4)));
  BoxingStep ar = Move(s, "cpu:0-3", "P", AxisBit(0), "B");
  EXPECT_EQ(ar.kind, StepKind::kAllReduce);
  EXPECT_THAT(ar.bytes_received, ElementsAreArray(std::vector<int64_t>(4, 2 * T * 3 / 4)));
  EXPECT_THAT(ar.bytes_sent, ElementsAreArray(std::vector<int64_t>(4, 2 * T * 3 / 4)));
  BoxingStep a2a = Move(Shape{8, 8}, "cpu:0-3", "S(0)", AxisBit(0), "S(1)");
  EXPECT_EQ(a2a.kind, StepKind::kAllToAll);
  EXPECT_THAT(a2a.bytes_received, ElementsAreArray(std::vector<int64_t>(4, 256 * 3 / 16)));
  EXPECT_THAT(a2a.bytes_sent, ElementsAreArray(std::vector<int64_t>(4, 256 * 3 / 16)));
  for (const auto& [from, to, kind] :
       std::vector<std::tuple<std::string, std::string, StepKind>>{
           {"B", "S(0)", StepKind::kLocalSlice},
           {"B", "P", StepKind::kLocalPartial},
           {"S(1)", "P", StepKind::kLocalScatter}}) {
    BoxingStep local = Move(s, "cpu:0-3", from, AxisBit(0), to);
    EXPECT_EQ(local.kind, kind);
    EXPECT_EQ(local.total_bytes(), 0);
    EXPECT_EQ(local.time_s, 0);
  }
  // One axis of a [2,2] mesh: n = 2 and the group tensor is what the other
  // axis leaves (T/2 under S(1) on axis 1).
  BoxingStep ag2 = Move(s, "cpu:0-3 [2,2]", "(S(0),S(1))", AxisBit(0), "B");
  EXPECT_THAT(ag2.bytes_received, ElementsAreArray(std::vector<int64_t>(4, T / 2 / 2)));
  EXPECT_EQ(ag2.groups.size(), 2u);
  EXPECT_THAT(ag2.groups[0], ElementsAreArray({0, 2}));
  // Two axes flattened: (P,P) -> (B,B) as one all-reduce over 4 ranks.
  BoxingStep flat = Move(s, "cpu:0-3 [2,2]", "(P,P)", AxisBit(0) | AxisBit(1), "B");
  EXPECT_EQ(flat.kind, StepKind::kAllReduce);
  EXPECT_THAT(flat.bytes_received, ElementsAreArray(std::vector<int64_t>(4, 2 * T * 3 / 4)));
}

TEST(CollectiveMoves, UnevenSplitsAreExact) {
  // 10 rows over 4 ranks: 3,3,2,2 rows of 6 f32 (72, 72, 48, 48 bytes).
  BoxingStep ag = Move(Shape{10, 6}, "cpu:0-3", "S(0)", AxisBit(0), "B");
  EXPECT_THAT(ag.bytes_received, ElementsAreArray({240 - 72, 240 - 72, 240 - 48, 240 - 48}));
  EXPECT_THAT(ag.bytes_sent, ElementsAreArray({240 - 72, 240 - 48, 240 - 48, 240 - 72}));
  int64_t sent = 0, recv = 0;
  for (int r = 0; r < 4; ++r) {
    sent += ag.bytes_sent[r];
    recv += ag.bytes_received[r];
  }
  EXPECT_EQ(sent, recv);
  BoxingStep rs = Move(Shape{10, 6}, "cpu:0-3", "P", AxisBit(0), "S(0)");
  EXPECT_THAT(rs.bytes_sent, ElementsAreArray({240 - 72, 240 - 72, 240 - 48, 240 - 48}));
  EXPECT_THAT(rs.bytes_received, ElementsAreArray({240 - 48, 240 - 72, 240 - 72, 240 - 48}));
  // d < parts: 3 rows on 4 ranks; rank 3 holds nothing and receives all.
  BoxingStep small = Move(Shape{3, 2}, "cpu:0-3", "S(0)", AxisBit(0), "B");
  EXPECT_THAT(small.bytes_received, ElementsAreArray({16, 16, 16, 24}));
}

TEST(CollectiveMoves, InexactMovesAreNotOffered) {
  const Placement p = P("cpu:0-3 [2,2]");
  LayoutSpace space(Shape{8, 6}, DataType::kFloat32, p, Identity(4), 4);
  // (B,S0) -> (S0,S0): a rank's new rows are not among its group's rows.
  EXPECT_FALSE(CollectiveMove(space, Nd("(B,S(0))"), AxisBit(0), SbpParallel::Split(0), Cal()));
  // (S0,S0) -> (B,S0): the axis-0 group does not hold what either member needs.
  EXPECT_FALSE(CollectiveMove(space, Nd("(S(0),S(0))"), AxisBit(0), SbpParallel::Broadcast(), Cal()));
  // Flattening needs equal SBPs on the axes, and the merge condition.
  EXPECT_FALSE(CollectiveMove(space, Nd("(S(0),P)"), AxisBit(0) | AxisBit(1),
                              SbpParallel::Broadcast(), Cal()));
  const Placement q = P("cpu:0-5 [2,3]");
  LayoutSpace uneven(Shape{14, 2}, DataType::kFloat32, q, Identity(6), 6);
  EXPECT_FALSE(CollectiveMove(uneven, Nd("(S(0),S(0))"), AxisBit(0) | AxisBit(1),
                              SbpParallel::Broadcast(), Cal()));
  LayoutSpace mergeable(Shape{13, 2}, DataType::kFloat32, q, Identity(6), 6);
  EXPECT_TRUE(CollectiveMove(mergeable, Nd("(S(0),S(0))"), AxisBit(0) | AxisBit(1),
                             SbpParallel::Broadcast(), Cal()));
}

// The exchange sums the pieces of a partial source, so a max/min partial
// must never reach it (the planner reduces those first): an internal
// invariant, checked.
TEST(PointToPointExchangeDeathTest, RefusesAMaxPartialSource) {
  const Placement p = P("cpu:0-3 [2,2]");
  LayoutSpace space(Shape{8, 6}, DataType::kFloat32, p, Identity(4), 4);
  EXPECT_DEATH(PointToPointExchange(space, Nd("(P(max),S(0))"), space, Nd("(S(1),B)"), Cal()),
               "max/min partial");
  // A sum partial is fine.
  EXPECT_GT(PointToPointExchange(space, Nd("(P,S(0))"), space, Nd("(S(1),B)"), Cal()).time_s, 0);
}

// --- Reference: every plan of up to three steps ------------------------------

double ExhaustiveBest(const PlanRequest& r, int max_steps) {
  const int n = r.src_placement.parallel_num();
  LayoutSpace space(r.shape, r.dtype, r.src_placement, Identity(n), n);
  std::vector<SbpParallel> values = {SbpParallel::Broadcast(), SbpParallel::PartialSum()};
  for (int k = 0; k < r.shape.rank(); ++k) values.push_back(SbpParallel::Split(k));
  double best = 1e300;
  std::function<void(const NdSbp&, double, int)> walk = [&](const NdSbp& cur, double t, int d) {
    if (cur == r.dst) best = std::min(best, t);
    if (d == max_steps) return;
    best = std::min(best, t + PointToPointExchange(space, cur, space, r.dst, Cal()).time_s);
    for (MeshAxisMask m = 1; m < (MeshAxisMask{1} << cur.size()); ++m) {
      for (SbpParallel to : values) {
        std::optional<BoxingStep> s = CollectiveMove(space, cur, m, to, Cal());
        if (s) walk(s->result, t + s->time_s, d + 1);
      }
    }
  };
  walk(r.src, 0, 0);
  return best;
}

struct Mesh {
  std::string placement;
  Shape shape;
};

// Never more expensive than the best plan of up to three steps, and never
// worse than the naive per-axis plan.
TEST(Planner, NeverWorseThanExhaustiveSearchOrNaive) {
  const std::vector<Mesh> meshes = {{"cpu:0-1", Shape{4, 6}},        {"cpu:0-2", Shape{5, 6}},
                                    {"cpu:0-3 [2,2]", Shape{8, 6}},  {"cpu:0-3 [2,2]", Shape{5, 3}},
                                    {"cpu:0-5 [2,3]", Shape{12, 7}}, {"cpu:0-7 [2,2,2]", Shape{8, 4}}};
  int checked = 0;
  int strictly_better = 0;
  for (const Mesh& m : meshes) {
    const Placement p = P(m.placement);
    const std::vector<NdSbp> layouts = reference::AllLayouts(p.num_axes(), m.shape.rank());
    for (size_t a = 0; a < layouts.size(); a += (p.num_axes() == 3 ? 5 : 1)) {
      for (size_t b = 0; b < layouts.size(); b += (p.num_axes() == 3 ? 7 : 1)) {
        const PlanRequest r{m.shape, DataType::kFloat32, p, layouts[a], p, layouts[b]};
        absl::StatusOr<BoxingPlan> plan = PlanBoxing(r, Cal());
        ASSERT_TRUE(plan.ok()) << plan.status();
        ASSERT_EQ(plan->steps.empty() ? r.src : plan->steps.back().result, r.dst);
        const double best = ExhaustiveBest(r, 3);
        EXPECT_LE(plan->time_s(), best * (1 + 1e-12))
            << m.placement << " " << r.src.ToString() << " -> " << r.dst.ToString() << ": "
            << plan->Summary();
        absl::StatusOr<BoxingPlan> naive = NaivePerAxisPlan(r, Cal());
        ASSERT_TRUE(naive.ok());
        EXPECT_LE(plan->time_s(), naive->time_s() * (1 + 1e-12));
        strictly_better += plan->time_s() < naive->time_s() * (1 - 1e-9) ? 1 : 0;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 300);
  EXPECT_GT(strictly_better, 0);
}

// Split ownership of destination partial sums (p2p_exchange.h): on every
// ordered pair of distinct layouts over {S(0), S(1), B, P} on [2,2] and
// [2,3], never worse than root ownership, strictly better on some pairs,
// and exactly the independent model's 342,000 bytes on the documented one.
TEST(Planner, SplitOwnershipOfPartialDestinations) {
  struct Case {
    std::string placement;
    int improved = 0;
    double best_ratio = 1;
  };
  std::vector<Case> cases = {{"cpu:0-3 [2,2]"}, {"cpu:0-5 [2,3]"}};
  const Shape shape{1024, 1000};
  for (Case& c : cases) {
    const Placement p = P(c.placement);
    const std::vector<NdSbp> layouts = reference::AllLayouts(2, 2);
    for (const NdSbp& a : layouts) {
      for (const NdSbp& b : layouts) {
        if (a == b) continue;
        const PlanRequest r{shape, DataType::kFloat32, p, a, p, b};
        absl::StatusOr<BoxingPlan> split = PlanBoxing(r, Cal());
        absl::StatusOr<BoxingPlan> root = PlanBoxingWithRootOwnership(r, Cal());
        ASSERT_TRUE(split.ok() && root.ok());
        EXPECT_LE(split->time_s(), root->time_s() * (1 + 1e-12))
            << a.ToString() << " -> " << b.ToString();
        // Into a layout without P only the choice of senders may differ,
        // and on these meshes it never does.
        if (!b.any_partial_sum()) {
          EXPECT_EQ(split->time_s(), root->time_s()) << a.ToString() << " -> " << b.ToString();
        }
        if (split->max_rank_bytes() < root->max_rank_bytes()) {
          EXPECT_TRUE(b.any_partial_sum()) << a.ToString() << " -> " << b.ToString();
          ++c.improved;
          c.best_ratio = std::max(c.best_ratio, static_cast<double>(root->max_rank_bytes()) /
                                                    static_cast<double>(split->max_rank_bytes()));
        }
      }
    }
  }
  // Measured (received bytes at the busiest rank): 18 pairs up to 2x on
  // [2,2]; 21 pairs up to 3x on [2,3]. Split ownership alone won on 14 and
  // 19; balanced ownership (every group of a class, senders by load) adds
  // 4 and 2 (Planner.BalancedOwnershipOfPartialDestinations). E.g.
  // (S(0),B) -> (B,P) on [2,2]: each P group holds its own rows and splits
  // the others.
  EXPECT_EQ(cases[0].improved, 18);
  EXPECT_NEAR(cases[0].best_ratio, 2.0, 0.01);
  EXPECT_EQ(cases[1].improved, 21);
  EXPECT_NEAR(cases[1].best_ratio, 3.0, 0.02);
  const Placement p = P("cpu:0-5 [2,3]");
  absl::StatusOr<BoxingPlan> plan =
      PlanBoxing({shape, DataType::kFloat32, p, Nd("(S(0),S(0))"), p, Nd("(S(1),P)")}, Cal());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->max_rank_bytes(), 342000);
}

// Never costlier than the reference (tests/boxing/boxing_reference.h: collective
// moves, then a p2p whose destination P ownership is searched
// exhaustively) on every ordered pair over {S(0), S(1), B, P} with
// f32[1024,1000] on [2,2] and [2,3], and every source to every 5th
// destination on [2,2,2] (819 of its 4,032 pairs, mixing P and no P;
// boxing_ownership_sweep_test, tagged "sweep", checks all of them). Split
// ownership decided on a class's first group with rotating senders was
// costlier on 4, 5 and 57 of these pairs (342 of all 4,032 on [2,2,2]; 22
// of the 57 into destinations without P, by the senders alone). Nor is
// the planner ever strictly cheaper: every plan lies in the reference's
// space, where the reference is exhaustive, so a cheaper plan would mean
// one of the two prices an exchange wrongly (boxing_ownership_sweep_test
// says why this holds only inside that space). The reference's searches
// end well below the node cap (at most 7,059 nodes on [2,2,2]), which
// only guards the time under ASan; none may reach it.
TEST(Planner, NeverWorseThanExhaustiveOwnership) {
  const Shape shape{1024, 1000};
  for (const std::string placement : {"cpu:0-3 [2,2]", "cpu:0-5 [2,3]", "cpu:0-7 [2,2,2]"}) {
    const Placement p = P(placement);
    const std::vector<NdSbp> layouts = reference::AllLayouts(p.num_axes(), 2);
    reference::ReferenceMemo memo;
    const bool cube = p.num_axes() == 3;
    int improved = 0, checked = 0;
    for (const NdSbp& a : layouts) {
      for (size_t bi = 0; bi < layouts.size(); bi += cube ? 5 : 1) {
        const NdSbp& b = layouts[bi];
        if (a == b) continue;
        const PlanRequest r{shape, DataType::kFloat32, p, a, p, b};
        absl::StatusOr<BoxingPlan> plan = PlanBoxing(r, Cal());
        ASSERT_TRUE(plan.ok()) << plan.status();
        const reference::ReferenceAnswer ref =
            reference::ReferenceBest(r, Cal(), 3, /*node_cap=*/100000, &memo);
        ASSERT_FALSE(ref.any_capped) << placement << " " << a.ToString() << " -> " << b.ToString();
        EXPECT_TRUE(reference::InReferenceSpace(*plan, 3)) << plan->Summary();
        EXPECT_LE(plan->time_s(), ref.time_s * (1 + 1e-12))
            << placement << " " << a.ToString() << " -> " << b.ToString() << ": "
            << plan->Summary() << " max_rank_bytes " << plan->max_rank_bytes();
        improved += plan->time_s() < ref.time_s * (1 - 1e-9) ? 1 : 0;
        ++checked;
      }
    }
    EXPECT_EQ(checked, cube ? 819 : 240) << placement;
    EXPECT_EQ(improved, 0) << placement << ": the planner is strictly cheaper than the reference";
  }
}

// Issue 23's pairs, where split ownership decided on a class's first group
// only (and sent by a fixed rotation) cost up to 1.67x the optimum.
// f32[1024,1000] is 4,096,000 bytes.
TEST(Planner, BalancedOwnershipOfPartialDestinations) {
  const Shape shape{1024, 1000};
  auto bytes = [&](const std::string& placement, const std::string& from, const std::string& to,
                   bool root_only) {
    const Placement p = P(placement);
    const PlanRequest r{shape, DataType::kFloat32, p, Nd(from), p, Nd(to)};
    absl::StatusOr<BoxingPlan> plan =
        root_only ? PlanBoxingWithRootOwnership(r, Cal()) : PlanBoxing(r, Cal());
    EXPECT_TRUE(plan.ok()) << plan.status();
    // The busiest rank of the busiest step, sending or receiving (what
    // the step's time is priced on; BoxingPlan::max_rank_bytes counts
    // received bytes only).
    int64_t busiest = plan.ok() ? 0 : -1;
    if (plan.ok()) {
      for (const BoxingStep& s : plan->steps) busiest = std::max(busiest, s.max_rank_bytes());
    }
    return busiest;
  };
  // Every rank receives one quarter (one sixth): position m of each P
  // group owns the rows its own member holds and those the other group's
  // member at m holds. Was 1,536,000 on [2,2], and 1,140,000 (S(0)) and
  // 1,140,276 (S(1)) on [2,3].
  // On [2,3] a sixth is 171 rows (684,000 bytes) under S(0), and 167 of
  // 1,000 columns (684,032 bytes) under S(1): 6 receivers must take 1,000
  // columns between them, so one takes 167.
  for (const auto& [from, sixth] : {std::pair<std::string, int64_t>{"(S(0),S(0))", 684000},
                                    {"(S(1),S(1))", 684032}}) {
    EXPECT_EQ(bytes("cpu:0-3 [2,2]", from, "(B,P)", false), 1024000) << from;
    EXPECT_EQ(bytes("cpu:0-5 [2,3]", from, "(B,P)", false), sixth) << from;
  }
  // Each P pair keeps its own block and takes one of the two others each,
  // every copy sending one block.
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"(B,S(0))", "(P,S(1))"},
                                 {"(B,S(1))", "(P,S(0))"}}) {
    // 341 rows x 334 columns x 4 bytes (the largest block a rank lacks).
    // Was 456,228 (the rotation made one copy send more), and 911,152 and
    // 911,088 under root ownership.
    EXPECT_EQ(bytes("cpu:0-5 [2,3]", from, to, false), 455576) << from;
    EXPECT_LT(bytes("cpu:0-5 [2,3]", from, to, false), bytes("cpu:0-5 [2,3]", from, to, true));
  }
}

TEST(Planner, KnownPlans) {
  const Placement p = P("cpu:0-3 [2,2]");
  auto plan = [&](const std::string& from, const std::string& to, Shape shape = Shape{8, 6}) {
    absl::StatusOr<BoxingPlan> pl =
        PlanBoxing({shape, DataType::kFloat32, p, Nd(from), p, Nd(to)}, Cal());
    EXPECT_TRUE(pl.ok()) << pl.status();
    return pl.ok() ? pl->Summary() : std::string(pl.status().message());
  };
  EXPECT_EQ(plan("(S(0),S(1))", "(S(0),S(1))"), "no-op");
  // Both axes partial: one all-reduce over the flattened group.
  EXPECT_EQ(plan("(P,P)", "(B,B)"), "all_reduce[0,1] P->B");
  EXPECT_EQ(plan("(S(0),B)", "(B,B)"), "all_gather[0] S(0)->B");
  EXPECT_EQ(plan("(B,B)", "(S(1),S(0))"), "local_slice[0] B->S(1) ; local_slice[1] B->S(0)");
}

TEST(Planner, ChangesOfPlacement) {
  // Four ranks to the other four: a p2p exchange moves each shard once.
  const PlanRequest r{Shape{8, 6}, DataType::kFloat32, P("cpu:0-3"), Nd("S(0)"),
                      P("cpu:4-7"), Nd("S(0)")};
  absl::StatusOr<BoxingPlan> plan = PlanBoxing(r, Cal());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].kind, StepKind::kPointToPoint);
  EXPECT_EQ(plan->total_bytes(), 192);
  EXPECT_EQ(plan->max_rank_bytes(), 48);
  EXPECT_THAT(plan->ranks, ElementsAreArray({0, 1, 2, 3, 4, 5, 6, 7}));
  // Overlapping ranks keep what they hold: [4] -> [2,2] on the same ranks
  // with the same rows needs nothing.
  const PlanRequest same_rows{Shape{8, 6}, DataType::kFloat32, P("cpu:0-3"), Nd("S(0)"),
                              P("cpu:0-3 [2,2]"), Nd("(S(0),S(0))")};
  absl::StatusOr<BoxingPlan> free = PlanBoxing(same_rows, Cal());
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(free->total_bytes(), 0);
  // Partial sums across placements are reduced exactly: 2 addends of 192 bytes
  // to one B copy on each of 2 other ranks.
  const PlanRequest partial{Shape{8, 6}, DataType::kFloat32, P("cpu:0-1"), Nd("P"),
                            P("cpu:2-3"), Nd("B")};
  absl::StatusOr<BoxingPlan> reduced = PlanBoxing(partial, Cal());
  ASSERT_TRUE(reduced.ok());
  EXPECT_GE(reduced->total_bytes(), 2 * 192);
}

TEST(Planner, BadRequests) {
  const Placement p = P("cpu:0-3 [2,2]");
  auto error = [](const PlanRequest& r) {
    absl::StatusOr<BoxingPlan> plan = PlanBoxing(r, Cal());
    return plan.ok() ? std::string("OK") : std::string(plan.status().message());
  };
  EXPECT_THAT(error({Shape{8, 6}, DataType::kFloat32, p, Nd("S(0)"), p, Nd("(B,B)")}),
              HasSubstr("boxing source (S(0)) on cpu:0-3 [2,2]: nd_sbp (S(0)) has 1 entries"));
  // A one-entry layout on a 2-D mesh names the two layouts meant most often.
  EXPECT_THAT(error({Shape{8, 6}, DataType::kFloat32, p, Nd("S(0)"), p, Nd("(B,B)")}),
              HasSubstr("give one SBP per mesh axis, e.g. (S(0), B) (S(0) over mesh axis 0 "
                        "only) or (S(0), S(0)) (over every axis)"));
  EXPECT_THAT(error({Shape{8, 6}, DataType::kFloat32, p, Nd("(B,B,B)"), p, Nd("(B,B)")}),
              ::testing::Not(HasSubstr("give one SBP per mesh axis")));
  EXPECT_THAT(error({Shape{8, 6}, DataType::kFloat32, p, Nd("(B,B)"), p, Nd("(S(2),B)")}),
              HasSubstr("splits dim 2 but shape [8,6] has rank 2"));
  EXPECT_THAT(error({Shape{8, 6}, DataType::kFloat32, p, Nd("(B,B)"), P("cuda:0-3 [2,2]"),
                     Nd("(B,B)")}),
              HasSubstr("boxing between device types"));
  NdSbp unset = Nd("(B,B)");
  unset.set(1, SbpParallel());
  EXPECT_THAT(error({Shape{8, 6}, DataType::kFloat32, p, unset, p, Nd("(B,B)")}),
              HasSubstr("leaves mesh axis 1 unset"));
}

TEST(Planner, DeterministicAndCached) {
  BoxingPlanner planner;
  const PlanRequest r{Shape{10, 7}, DataType::kFloat32, P("cpu:0-7 [2,2,2]"),
                      Nd("(S(0),P,S(1))"), P("cpu:0-7 [2,2,2]"), Nd("(S(1),B,S(0))")};
  absl::StatusOr<std::shared_ptr<const BoxingPlan>> a = planner.Plan(r);
  absl::StatusOr<std::shared_ptr<const BoxingPlan>> b = planner.Plan(r);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(planner.stats().hits, 1u);
  absl::StatusOr<BoxingPlan> fresh = PlanBoxing(r, planner.calibration());
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->Summary(), (*a)->Summary());
  EXPECT_EQ(fresh->time_s(), (*a)->time_s());
}

// collectives_only: the cheapest plan made of collectives, where the full
// search sends one p2p exchange (a [2,2] transpose); cached apart from the
// full plan; refused between placements, which only an exchange changes.
TEST(Planner, CollectivesOnlyNeverSendsAnExchange) {
  const Placement p = P("cpu:0-3 [2,2]");
  PlanRequest r{Shape{64, 64}, DataType::kFloat32, p, Nd("(S(0),S(1))"), p, Nd("(S(1),S(0))")};
  BoxingPlanner planner;
  absl::StatusOr<std::shared_ptr<const BoxingPlan>> full = planner.Plan(r);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ((*full)->Summary(), "p2p->S(1),S(0)");
  r.collectives_only = true;
  EXPECT_EQ(EstimatePlanWork(r), EstimateCollectiveSearchWork(r));
  absl::StatusOr<std::shared_ptr<const BoxingPlan>> collectives = planner.Plan(r);
  ASSERT_TRUE(collectives.ok()) << collectives.status();
  EXPECT_NE(collectives->get(), full->get());
  for (const BoxingStep& step : (*collectives)->steps) {
    EXPECT_NE(step.kind, StepKind::kPointToPoint) << (*collectives)->Summary();
  }
  EXPECT_EQ((*collectives)->Summary(),
            "local_s_to_p[0] S(0)->P ; local_s_to_p[1] S(1)->P ; all_reduce[0,1] P->B ; "
            "local_slice[0] B->S(1) ; local_slice[1] B->S(0)");
  EXPECT_GT((*collectives)->time_s(), (*full)->time_s());
  EXPECT_EQ(planner.stats().misses, 2u);
  absl::StatusOr<std::shared_ptr<const BoxingPlan>> again = planner.Plan(r);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), collectives->get());
  r.dst_placement = P("cpu:4-7 [2,2]");
  absl::StatusOr<BoxingPlan> moved = PlanBoxing(r, Cal());
  EXPECT_THAT(moved, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(moved.status().message()),
              HasSubstr("collectives alone cannot change the placement"));
}

// f32[rows, 4] from `from` to `to` on `placement`: one request per row
// count, so each is a cache entry of its own.
PlanRequest RowsRequest(int64_t rows, const char* placement, const char* from, const char* to) {
  return PlanRequest{Shape{rows, 4}, DataType::kFloat32, P(placement), Nd(from), P(placement),
                     Nd(to)};
}

TEST(Planner, CacheIsBoundedLeastRecentlyUsedFirst) {
  BoxingPlanner planner(Calibration::Defaults(NdSbp::kMaxAxes), /*capacity=*/2);
  auto request = [](int64_t rows) { return RowsRequest(rows, "cpu:0-1", "S(0)", "B"); };
  ASSERT_TRUE(planner.Plan(request(8)).ok());
  ASSERT_TRUE(planner.Plan(request(9)).ok());
  ASSERT_TRUE(planner.Plan(request(8)).ok());   // hit: 8 is now the most recent
  ASSERT_TRUE(planner.Plan(request(10)).ok());  // evicts 9
  PlannerStats s = planner.stats();
  EXPECT_EQ(s.size, 2u);
  EXPECT_EQ(s.capacity, 2u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.hits, 1u);
  ASSERT_TRUE(planner.Plan(request(8)).ok());
  EXPECT_EQ(planner.stats().hits, 2u);
  ASSERT_TRUE(planner.Plan(request(9)).ok());
  EXPECT_EQ(planner.stats().misses, 4u);
  planner.Clear();
  EXPECT_EQ(planner.stats().size, 0u);
}

TEST(Planner, CacheIsBoundedInBytesToo) {
  // These plans of 2 x 2 ranks hold a few hundred bytes each: a limit of
  // two and a half of them keeps the newest two and evicts the oldest first.
  auto request = [](int64_t rows) {
    return RowsRequest(rows, "cpu:0-3 [2,2]", "(S(0),S(1))", "(B,B)");
  };
  const size_t one =
      PlanFootprint(*PlanBoxing(request(8), Calibration::Defaults(NdSbp::kMaxAxes)));
  ASSERT_GT(one, 100u);
  BoxingPlanner planner(Calibration::Defaults(NdSbp::kMaxAxes), /*capacity=*/100,
                        /*max_bytes=*/2 * one + one / 2);
  for (int64_t rows = 8; rows < 14; ++rows) ASSERT_TRUE(planner.Plan(request(rows)).ok());
  PlannerStats s = planner.stats();
  EXPECT_EQ(s.size, 2u);
  EXPECT_EQ(s.evictions, 4u);
  EXPECT_LE(s.bytes, s.max_bytes);
  EXPECT_EQ(s.bytes, 2 * one);
  ASSERT_TRUE(planner.Plan(request(13)).ok());  // the newest stayed
  EXPECT_EQ(planner.stats().hits, 1u);
  // A plan larger than the whole limit is still cached, alone.
  BoxingPlanner tiny(Calibration::Defaults(NdSbp::kMaxAxes), 100, /*max_bytes=*/1);
  ASSERT_TRUE(tiny.Plan(request(8)).ok());
  ASSERT_TRUE(tiny.Plan(request(9)).ok());
  EXPECT_EQ(tiny.stats().size, 1u);
  ASSERT_TRUE(tiny.Plan(request(9)).ok());
  EXPECT_EQ(tiny.stats().hits, 1u);
  tiny.Clear();
  EXPECT_EQ(tiny.stats().bytes, 0u);
}

// Fingerprints are exact: decimal with 6 digits made these two equal.
TEST(Calibration, FingerprintIsExact) {
  Calibration a = Calibration::Defaults(2);
  Calibration b = Calibration::Defaults(2);
  EXPECT_EQ(a.Fingerprint(), b.Fingerprint());
  b.axis(1).bandwidth_bytes_per_s = 25.00001e9;
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  EXPECT_FALSE(a == b);
  b = Calibration::Defaults(2);
  b.p2p().latency_s = std::nextafter(b.p2p().latency_s, 1.0);
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  // The compute rates price ops' local work in graph-level selection.
  b = Calibration::Defaults(2);
  b.set_compute_flops_per_s(std::nextafter(b.compute_flops_per_s(), 0.0));
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  b = Calibration::Defaults(2);
  b.set_memory_bytes_per_s(2 * b.memory_bytes_per_s());
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  EXPECT_DOUBLE_EQ(a.ComputeTime(2e11), 2.0);
  EXPECT_DOUBLE_EQ(a.MemoryTime(5e10), 1.0);
}

}  // namespace
}  // namespace oneflow_sbp::boxing
