// CostGraph: a choice problem over nodes with pairwise costs, the form
// graph-level selection reduces a program to (selection_problem.h) and the
// solver works on (elimination.h, graph_solver.h).
//
// Every node picks one of its candidates (0 .. K-1). A choice costs
//   sum over nodes v of unary(v)[x_v]
//   + sum over edges (a, b) of cost(a, b)[x_a][x_b].
// Costs are non-negative; +infinity marks an infeasible candidate or pair
// and absorbs sums (it never wins against a finite cost). NaN and negative
// costs are rejected by the solver.
//
// Example:
//   CostGraph g;
//   int a = g.AddNode({1.0, 0.0});          // two candidates
//   int b = g.AddNode({0.0, 2.0});
//   g.AddEdgeCost(a, b, {0, 5,              // cost[x_a * K_b + x_b]
//                        5, 0});
//   g.Objective({0, 0});                    // 1 + 0 + 0 = 1
//
// Parallel edges merge on insertion: adding a cost between two nodes that
// already share an edge adds into that edge (transposed if given as (b, a)),
// so the graph is simple.
#ifndef GRAPH_COST_GRAPH_H_
#define GRAPH_COST_GRAPH_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"

namespace oneflow_sbp::graph {

inline constexpr double kInfeasible = std::numeric_limits<double>::infinity();

struct CostEdge {
  int a = 0;
  int b = 0;
  // K_a x K_b, row-major: cost[x_a * K_b + x_b].
  std::vector<double> cost;
};

class CostGraph {
 public:
  // A node with unary.size() >= 1 candidates; returns its id (0, 1, ...).
  int AddNode(std::vector<double> unary);
  // Adds `cost` (K_a x K_b row-major) to the edge between a and b, creating
  // it if absent. Requires a != b, both existing, and the right size
  // (internal invariants: callers build the matrices from the nodes).
  void AddEdgeCost(int a, int b, absl::Span<const double> cost);

  int num_nodes() const { return static_cast<int>(unary_.size()); }
  int num_candidates(int node) const { return static_cast<int>(unary_[node].size()); }
  const std::vector<double>& unary(int node) const { return unary_[node]; }
  std::vector<double>& mutable_unary(int node) { return unary_[node]; }
  const std::vector<CostEdge>& edges() const { return edges_; }
  // The edge between a and b (either order), or -1.
  int FindEdge(int a, int b) const;

  // The cost of a full choice (one index per node), summed in a fixed
  // order: unary costs by node, then edges in creation order.
  double Objective(absl::Span<const int> choice) const;

  // Adds `scale` times `other`'s costs into this graph's, node by node and
  // edge by edge (e.g. memory priced at a time per byte). Requires `other`
  // to have the same candidate counts and the same edges in the same order
  // (an internal invariant: both built by the same calls).
  void AddScaled(const CostGraph& other, double scale);

 private:
  std::vector<std::vector<double>> unary_;
  std::vector<CostEdge> edges_;
  // (min(a,b), max(a,b)) -> edge index.
  absl::flat_hash_map<std::pair<int, int>, int> edge_index_;
};

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_COST_GRAPH_H_
