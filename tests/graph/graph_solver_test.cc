// The cost-graph solver: reductions are exact, the solver equals brute
// force on random graphs (ties and infeasible entries included), local
// search never loses to its starts, and bad graphs are errors.
#include "graph/graph_solver.h"

#include <random>

#include "gmock/gmock.h"
#include "graph/cost_graph.h"
#include "graph/elimination.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::graph {
namespace {

using ::testing::HasSubstr;

// Integer costs (exact sums in double, so objectives compare with ==), few
// distinct values (many ties), some infeasible entries.
CostGraph RandomGraph(std::mt19937_64& rng, int n, int max_k, double edge_p) {
  CostGraph g;
  auto cost = [&rng]() -> double {
    const uint64_t r = rng() % 20;
    return r == 0 ? kInfeasible : static_cast<double>(r % 6);
  };
  for (int v = 0; v < n; ++v) {
    const int k = 1 + static_cast<int>(rng() % max_k);
    std::vector<double> u(k);
    for (double& c : u) c = cost();
    g.AddNode(std::move(u));
  }
  std::uniform_real_distribution<double> coin(0, 1);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (coin(rng) >= edge_p) continue;
      std::vector<double> m(g.num_candidates(a) * g.num_candidates(b));
      for (double& c : m) c = cost();
      // Sometimes added as (b, a), sometimes twice: parallel edges merge.
      if (rng() % 2) {
        g.AddEdgeCost(b, a, m);
      } else {
        g.AddEdgeCost(a, b, m);
      }
      if (rng() % 4 == 0) g.AddEdgeCost(a, b, std::vector<double>(m.size(), 1.0));
    }
  }
  return g;
}

TEST(CostGraph, ParallelEdgesMergeAndTranspose) {
  CostGraph g;
  const int a = g.AddNode({0, 0});
  const int b = g.AddNode({0, 0, 0});
  g.AddEdgeCost(a, b, {1, 2, 3, 4, 5, 6});
  g.AddEdgeCost(b, a, {10, 40, 20, 50, 30, 60});  // the transpose of 10x the first
  ASSERT_EQ(g.edges().size(), 1u);
  EXPECT_EQ(g.edges()[0].cost, (std::vector<double>{11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(g.Objective({1, 2}), 66);
}

TEST(Elimination, ChainsAndTreesReduceToNothing) {
  CostGraph g;
  for (int v = 0; v < 6; ++v) g.AddNode({1, 2, 3});
  for (int v = 0; v + 1 < 6; ++v) g.AddEdgeCost(v, v + 1, std::vector<double>(9, 1));
  g.AddEdgeCost(0, 5, std::vector<double>(9, 1));  // a ring: chains merge edges
  ReducedGraph r = ReducedGraph::Reduce(g, {});
  EXPECT_TRUE(r.core_nodes().empty());
  EXPECT_GE(r.stats().merged_edges, 1);
  EXPECT_EQ(r.stats().leaves + r.stats().chains + r.stats().isolated, 6);
}

TEST(Elimination, CompleteGraphOfFourStays) {
  CostGraph g;
  for (int v = 0; v < 4; ++v) g.AddNode({0, 1});
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) g.AddEdgeCost(a, b, {0, 1, 1, 0});
  }
  g.AddNode({5, 0});
  g.AddEdgeCost(4, 0, {1, 1, 1, 1});  // a leaf hanging off the core
  ReducedGraph r = ReducedGraph::Reduce(g, {});
  EXPECT_EQ(r.core_nodes(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.stats().leaves, 1);
}

TEST(Elimination, CoreObjectiveIsTheMinimumOverEliminatedNodes) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    CostGraph g = RandomGraph(rng, 2 + trial % 7, 4, 0.5);
    ReducedGraph r = ReducedGraph::Reduce(g, {});
    // Any core choice: its expansion costs what the core says.
    std::vector<int> core_choice;
    for (int v = 0; v < r.core().num_nodes(); ++v) {
      core_choice.push_back(static_cast<int>(rng() % r.core().num_candidates(v)));
    }
    EXPECT_EQ(g.Objective(r.Expand(core_choice)), r.core().Objective(core_choice) + r.offset())
        << "trial " << trial;
  }
}

TEST(GraphSolver, EqualsBruteForceOnRandomGraphs) {
  std::mt19937_64 rng(1);
  int compared = 0, with_core = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 1 + trial % 9;
    CostGraph g = RandomGraph(rng, n, 4, trial % 3 == 0 ? 0.9 : 0.4);
    absl::StatusOr<Solution> s = SolveCostGraph(g, SolverOptions(), {});
    ASSERT_TRUE(s.ok()) << s.status();
    const Solution brute = BruteForce(g);
    EXPECT_EQ(s->objective, brute.objective) << "trial " << trial;
    EXPECT_EQ(s->objective, g.Objective(s->choice));
    EXPECT_TRUE(s->stats.exact);
    if (s->stats.core_nodes > 0) ++with_core;
    ++compared;
  }
  EXPECT_EQ(compared, 600);
  EXPECT_GT(with_core, 50);  // the enumeration path is exercised, not only elimination
}

TEST(GraphSolver, LocalSearchNeverLosesToItsStarts) {
  std::mt19937_64 rng(3);
  SolverOptions local;
  local.max_exact_product = 0;  // always local search on a non-empty core
  int searched = 0;
  for (int trial = 0; trial < 300; ++trial) {
    CostGraph g = RandomGraph(rng, 5 + trial % 4, 4, 0.9);
    std::vector<int> start(g.num_nodes());
    for (int v = 0; v < g.num_nodes(); ++v) start[v] = static_cast<int>(rng() % g.num_candidates(v));
    absl::StatusOr<Solution> s = SolveCostGraph(g, local, {start});
    ASSERT_TRUE(s.ok()) << s.status();
    const double brute = BruteForce(g).objective;
    EXPECT_LE(s->objective, g.Objective(start)) << "trial " << trial;
    EXPECT_GE(s->objective, brute);
    if (!s->stats.exact) ++searched;
  }
  EXPECT_GT(searched, 100);
}

// Block descent moves a whole forest of the core at once: in a complete
// graph of four (no elimination), nodes 0 and 1 each prefer candidate 1
// but pay 10 when they differ, so from all-0 neither moves alone
// (coordinate descent stops at 2); the forest {0, 1} moves together to 0.
// On random graphs it never loses to its start either.
TEST(GraphSolver, BlockDescentMovesForestsTogether) {
  CostGraph g;
  g.AddNode({1, 0});
  g.AddNode({1, 0});
  g.AddNode({0, 0});
  g.AddNode({0, 0});
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      if (a == 0 && b == 1) {
        g.AddEdgeCost(a, b, {0, 10, 10, 0});
      } else {
        g.AddEdgeCost(a, b, {0, 0, 0, 0});
      }
    }
  }
  SolverOptions local;
  local.max_exact_product = 0;
  local.random_starts = 0;
  const std::vector<int> zeros(4, 0);
  absl::StatusOr<Solution> single = SolveCostGraph(g, local, {zeros});
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->objective, 2);
  local.block_descent = true;
  absl::StatusOr<Solution> block = SolveCostGraph(g, local, {zeros});
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->objective, 0);
  EXPECT_EQ(block->choice[0], 1);
  EXPECT_EQ(block->choice[1], 1);
  EXPECT_GT(block->stats.block_rounds, 0);

  std::mt19937_64 rng(7);
  local.random_starts = 2;
  for (int trial = 0; trial < 200; ++trial) {
    CostGraph r = RandomGraph(rng, 5 + trial % 4, 4, 0.9);
    std::vector<int> start(r.num_nodes());
    for (int v = 0; v < r.num_nodes(); ++v) start[v] = static_cast<int>(rng() % r.num_candidates(v));
    absl::StatusOr<Solution> s = SolveCostGraph(r, local, {start});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_LE(s->objective, r.Objective(start)) << "trial " << trial;
    EXPECT_GE(s->objective, BruteForce(r).objective);
    absl::StatusOr<Solution> again = SolveCostGraph(r, local, {start});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->choice, s->choice);
  }
}

TEST(GraphSolver, DeterministicAcrossRuns) {
  std::mt19937_64 rng(11);
  CostGraph g = RandomGraph(rng, 9, 4, 0.9);
  SolverOptions local;
  local.max_exact_product = 0;
  absl::StatusOr<Solution> a = SolveCostGraph(g, local, {});
  absl::StatusOr<Solution> b = SolveCostGraph(g, local, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->choice, b->choice);
}

TEST(GraphSolver, BadCostsAndStartsAreErrors) {
  CostGraph g;
  g.AddNode({1, -1});
  absl::StatusOr<Solution> s = SolveCostGraph(g, SolverOptions(), {});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("node 0 candidate 1"));
  CostGraph ok;
  ok.AddNode({1, 2});
  EXPECT_THAT(SolveCostGraph(ok, SolverOptions(), {{0, 0}}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SolveCostGraph(ok, SolverOptions(), {{2}}),
            StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(GraphSolver, InfeasibleEverywhereGivesInfinity) {
  CostGraph g;
  g.AddNode({kInfeasible, kInfeasible});
  g.AddNode({0});
  g.AddEdgeCost(0, 1, {0, 0});
  absl::StatusOr<Solution> s = SolveCostGraph(g, SolverOptions(), {});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->objective, kInfeasible);
}

}  // namespace
}  // namespace oneflow_sbp::graph
