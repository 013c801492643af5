// Exact reduction of a CostGraph (cost_graph.h) by eliminating nodes of
// degree 0, 1 and 2, in the spirit of OneFlow's auto-parallel pass
// (SbpGraph: node, edge and leaf elimination).
//
// Rules, each exact (the reduced problem has the same optimum):
//   isolated  a node without edges takes its cheapest candidate;
//   leaf      a node v with one neighbour a folds into a's unary cost:
//               unary(a)[i] += min_j unary(v)[j] + cost(a, v)[i][j];
//   chain     a node v with two neighbours a and b becomes an edge a-b:
//               cost(a, b)[i][k] += min_j unary(v)[j] + cost(a, v)[i][j]
//                                               + cost(v, b)[j][k],
//             added into an existing a-b edge (parallel edges merge), which
//             can turn a and b into leaves in turn.
// Each elimination records the minimising j per neighbour choice; Expand
// replays them backwards to fill in the eliminated nodes once the core (the
// nodes left, every one of degree >= 3) is chosen.
//
// Order (deterministic): all nodes of degree <= 1, by a queue seeded in
// node order (a neighbour whose degree drops to 1 joins the back); when
// none is left, the degree-2 node with the least work K_a*K_v*K_b (ties:
// lowest id), if that work is at most max_chain_work; repeat.
// Tie order of the minimisers: the lowest candidate index j.
//
//   ReducedGraph r = ReducedGraph::Reduce(graph, {});
//   std::vector<int> core_choice = ...;      // one per r.core_nodes()
//   std::vector<int> all = r.Expand(core_choice);
//   // graph.Objective(all) == r.core().Objective(core_choice) + r.offset()
//   // (up to rounding)
#ifndef GRAPH_ELIMINATION_H_
#define GRAPH_ELIMINATION_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "graph/cost_graph.h"

namespace oneflow_sbp::graph {

struct ReductionOptions {
  // A degree-2 node is eliminated only if K_a * K_v * K_b is at most this
  // (the work of one elimination, also the size of its record is K_a*K_b).
  int64_t max_chain_work = int64_t{1} << 26;
};

struct ReductionStats {
  int isolated = 0;
  int leaves = 0;
  int chains = 0;
  // Chain eliminations whose new edge merged into an existing one.
  int merged_edges = 0;
};

class ReducedGraph {
 public:
  static ReducedGraph Reduce(const CostGraph& graph, const ReductionOptions& options);

  // Original ids of the nodes left, ascending; node i of core() is
  // core_nodes()[i]. Empty when everything was eliminated.
  const std::vector<int>& core_nodes() const { return core_nodes_; }
  // The core with every eliminated node's cost folded in.
  const CostGraph& core() const { return core_; }
  // The cost of the components eliminated down to a single node (their
  // cheapest candidates), which the core no longer carries.
  double offset() const { return offset_; }
  const ReductionStats& stats() const { return stats_; }

  // A full choice (one per original node) from one per core node.
  std::vector<int> Expand(absl::Span<const int> core_choice) const;

 private:
  enum class Kind : uint8_t { kIsolated, kLeaf, kChain };
  struct Record {
    Kind kind;
    int node;
    int a = -1;  // kLeaf, kChain
    int b = -1;  // kChain
    int kb = 0;  // K_b (kChain)
    // kIsolated: 1 entry; kLeaf: per choice of a; kChain: K_a x K_b.
    std::vector<int> best;
  };
  int num_nodes_ = 0;
  std::vector<Record> records_;  // in elimination order
  std::vector<int> core_nodes_;
  CostGraph core_;
  double offset_ = 0;
  ReductionStats stats_;
};

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_ELIMINATION_H_
