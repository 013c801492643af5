// Minimises a CostGraph (cost_graph.h): exact where the reduced graph is
// small, local search elsewhere.
//
//   1. Reduce (elimination.h): isolated nodes, leaves and chains go, exactly.
//   2. The core left (every node of degree >= 3):
//      - empty, or the product of its candidate counts at most
//        max_exact_product: depth-first enumeration in core node order with
//        branch and bound (a partial choice is cut when its cost plus the
//        cheapest unary cost of every node after it exceeds the best found,
//        which is valid because costs are non-negative). Exact.
//      - otherwise: coordinate descent (each node in turn moves to its best
//        candidate given its neighbours, until a sweep changes nothing) from
//        every start the caller gives (e.g. the eager greedy choice), then
//        from `random_starts` seeded random choices (with block_descent,
//        each descent is followed by block descent: the core split into
//        induced forests, greedily in id order, and each forest in turn
//        solved exactly given the rest, until a round changes nothing);
//        the best end wins.
//        Because eliminated nodes are re-optimised for whatever the core
//        picks, the result is never worse than any start the caller gives.
//   3. Expand: eliminated nodes take their recorded minimisers.
//
// Tie order (deterministic, no hash order involved):
//   - enumeration keeps the first minimum in lexicographic order of the core
//     choice (core nodes by id, candidates by index): a later choice must be
//     strictly cheaper;
//   - coordinate descent moves a node only to a strictly cheaper candidate
//     (by more than 1e-12 relative), lowest index first among equals;
//     among starts, strictly lower cost wins, else the earlier start
//     (caller's starts in order, then random starts by seed);
//   - eliminated nodes take their lowest-index minimiser.
//
// Example:
//   absl::StatusOr<Solution> s = SolveCostGraph(graph, SolverOptions(), {greedy});
//   s->choice;       // one candidate index per node
//   s->objective;    // graph.Objective(s->choice)
//   s->stats.exact;  // true if the core was enumerated
#ifndef GRAPH_GRAPH_SOLVER_H_
#define GRAPH_GRAPH_SOLVER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/cost_graph.h"
#include "graph/elimination.h"

namespace oneflow_sbp::graph {

struct SolverOptions {
  ReductionOptions reduction;
  // Enumerate the core while the product of its candidate counts is at
  // most this; above it, local search.
  double max_exact_product = 4e6;
  // Random starts for local search, after the caller's; seeded by `seed`.
  int random_starts = 4;
  uint64_t seed = 1;
  // Coordinate-descent sweeps per start at most.
  int max_sweeps = 100;
  // Local search: after each start's coordinate descent, block descent
  // over induced forests of the core (each forest solved exactly given
  // the rest).
  bool block_descent = false;
  // Local search: also return every start's end (Solution::ends), for a
  // caller that weighs choices by more than the objective (the memory cap
  // search, program_planner.h).
  bool keep_ends = false;
};

struct SolverStats {
  int nodes = 0;
  int edges = 0;
  ReductionStats reduction;
  int core_nodes = 0;
  int core_edges = 0;
  // Product of the core's candidate counts (1 for an empty core).
  double core_product = 1;
  // True if the result is a proven minimum.
  bool exact = false;
  // Enumeration: partial choices visited. Local search: starts run and
  // sweeps in all.
  int64_t visited = 0;
  int starts = 0;
  int sweeps = 0;
  // Block descent: rounds over the forests, in all.
  int block_rounds = 0;
};

struct Solution {
  std::vector<int> choice;
  // graph.Objective(choice); +infinity if no choice is feasible.
  double objective = 0;
  SolverStats stats;
  // With SolverOptions::keep_ends and local search: each start's end as a
  // full choice, in start order (the caller's, then the random ones);
  // `choice` is one of them. Empty otherwise.
  std::vector<std::vector<int>> ends;
};

// kInvalidArgument for a negative or NaN cost (naming the node or edge) or
// a start of the wrong size or with an index out of range.
absl::StatusOr<Solution> SolveCostGraph(const CostGraph& graph, const SolverOptions& options,
                                        absl::Span<const std::vector<int>> starts);

// A secondary key for ties (e.g. memory): `secondary` is a cost graph over
// the same nodes (its own edges). Each node in turn (by id) moves to the
// candidate with the least secondary cost given its neighbours' current
// choices (its unary plus its edges in `secondary`) among those whose cost
// in `graph` given its neighbours' current choices is no higher than its
// current candidate's (ties: the lower cost, then the lower index). Neither
// the objective nor the secondary objective ever rises.
void PreferLowerSecondary(const CostGraph& graph, const CostGraph& secondary,
                          std::vector<int>* choice);

// Every choice, in lexicographic order (node 0 slowest): the minimum and
// the first choice reaching it. For tests; requires a small graph.
Solution BruteForce(const CostGraph& graph);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_GRAPH_SOLVER_H_
