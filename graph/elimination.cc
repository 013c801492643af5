#include "graph/elimination.h"

#include <deque>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "oneflow_sbp/values/check.h"

namespace oneflow_sbp::graph {
namespace {

// The graph being reduced: nodes die, edges die, new edges appear.
class WorkGraph {
 public:
  explicit WorkGraph(const CostGraph& g) : unary_(g.num_nodes()), adj_(g.num_nodes()) {
    for (int v = 0; v < g.num_nodes(); ++v) unary_[v] = g.unary(v);
    alive_.assign(g.num_nodes(), true);
    for (const CostEdge& e : g.edges()) AddCost(e.a, e.b, e.cost);
  }

  int k(int v) const { return static_cast<int>(unary_[v].size()); }
  int degree(int v) const { return static_cast<int>(adj_[v].size()); }
  bool alive(int v) const { return alive_[v]; }
  std::vector<double>& unary(int v) { return unary_[v]; }
  const std::map<int, int>& neighbours(int v) const { return adj_[v]; }

  // The edge's costs oriented as (from, to): row-major K_from x K_to.
  std::vector<double> Oriented(int edge, int from) const {
    const Edge& e = edges_[edge];
    if (e.a == from) return e.cost;
    const int ka = k(e.a), kb = k(e.b);
    std::vector<double> t(e.cost.size());
    for (int xa = 0; xa < ka; ++xa) {
      for (int xb = 0; xb < kb; ++xb) t[xb * ka + xa] = e.cost[xa * kb + xb];
    }
    return t;
  }

  // Adds `cost` (K_a x K_b) to edge a-b; returns true if it merged into an
  // existing edge.
  bool AddCost(int a, int b, const std::vector<double>& cost) {
    auto it = adj_[a].find(b);
    if (it == adj_[a].end()) {
      const int id = static_cast<int>(edges_.size());
      edges_.push_back(Edge{a, b, cost, true});
      adj_[a][b] = id;
      adj_[b][a] = id;
      return false;
    }
    Edge& e = edges_[it->second];
    if (e.a == a) {
      for (size_t i = 0; i < cost.size(); ++i) e.cost[i] += cost[i];
    } else {
      const int ka = k(a), kb = k(b);
      for (int xa = 0; xa < ka; ++xa) {
        for (int xb = 0; xb < kb; ++xb) e.cost[xb * ka + xa] += cost[xa * kb + xb];
      }
    }
    return true;
  }

  void Kill(int v) {
    for (const auto& [n, edge] : adj_[v]) {
      adj_[n].erase(v);
      edges_[edge].alive = false;
    }
    adj_[v].clear();
    alive_[v] = false;
  }

  // Alive edges in creation order, as (a, b, cost).
  template <typename F>
  void ForEachEdge(F f) const {
    for (const Edge& e : edges_) {
      if (e.alive) f(e.a, e.b, e.cost);
    }
  }

 private:
  struct Edge {
    int a;
    int b;
    std::vector<double> cost;
    bool alive;
  };
  std::vector<std::vector<double>> unary_;
  std::vector<std::map<int, int>> adj_;  // neighbour -> edge (ordered: deterministic)
  std::vector<bool> alive_;
  std::vector<Edge> edges_;
};

// The cheapest candidate of a node without edges (ties: the lowest index).
int CheapestCandidate(const std::vector<double>& unary) {
  int best = 0;
  for (int j = 1; j < static_cast<int>(unary.size()); ++j) {
    if (unary[j] < unary[best]) best = j;
  }
  return best;
}

// Folds leaf `v` into the unary costs of its only neighbour `a` (over
// `edge`); returns v's minimising choice per choice of a.
std::vector<int> FoldLeaf(WorkGraph& w, int v, int a, int edge) {
  const std::vector<double>& uv = w.unary(v);
  const std::vector<double> cav = w.Oriented(edge, a);  // K_a x K_v
  const int ka = w.k(a), kv = w.k(v);
  std::vector<int> best_choice(ka, 0);
  std::vector<double>& ua = w.unary(a);
  for (int i = 0; i < ka; ++i) {
    double best = kInfeasible;
    for (int j = 0; j < kv; ++j) {
      const double c = uv[j] + cav[i * kv + j];
      if (c < best) {
        best = c;
        best_choice[i] = j;
      }
    }
    ua[i] += best;
  }
  return best_choice;
}

// The degree-2 node whose elimination costs the least work, at most
// `max_chain_work` (ties: the lowest id); -1 if there is none.
int CheapestChain(const WorkGraph& w, int num_nodes, int64_t max_chain_work) {
  int chosen = -1;
  int64_t chosen_work = 0;
  for (int v = 0; v < num_nodes; ++v) {
    if (!w.alive(v) || w.degree(v) != 2) continue;
    auto it = w.neighbours(v).begin();
    const int a = it->first;
    const int b = std::next(it)->first;
    const int64_t work = int64_t{w.k(a)} * w.k(v) * w.k(b);
    if (work > max_chain_work) continue;
    if (chosen < 0 || work < chosen_work) {
      chosen = v;
      chosen_work = work;
    }
  }
  return chosen;
}

// What eliminating the chain node between `a` and `b` leaves: the a-b
// costs that replace it and its minimising choice per (a, b) choice pair,
// both K_a x K_b row-major.
struct ChainFold {
  int a;
  int b;
  std::vector<double> cost;
  std::vector<int> best;
};

ChainFold FoldChain(WorkGraph& w, int v) {
  auto it = w.neighbours(v).begin();
  const int a = it->first, ea = it->second;
  const int b = std::next(it)->first, eb = std::next(it)->second;
  const int ka = w.k(a), kv = w.k(v), kb = w.k(b);
  const std::vector<double> cav = w.Oriented(ea, a);  // K_a x K_v
  const std::vector<double> cvb = w.Oriented(eb, v);  // K_v x K_b
  const std::vector<double>& uv = w.unary(v);
  ChainFold fold{a, b, std::vector<double>(static_cast<size_t>(ka) * kb, kInfeasible),
                 std::vector<int>(static_cast<size_t>(ka) * kb, 0)};
  for (int i = 0; i < ka; ++i) {
    double* row = &fold.cost[static_cast<size_t>(i) * kb];
    int* arg = &fold.best[static_cast<size_t>(i) * kb];
    for (int j = 0; j < kv; ++j) {
      const double base = uv[j] + cav[i * kv + j];
      if (!(base < kInfeasible)) continue;
      const double* to_b = &cvb[static_cast<size_t>(j) * kb];
      for (int k = 0; k < kb; ++k) {
        const double c = base + to_b[k];
        if (c < row[k]) {
          row[k] = c;
          arg[k] = j;
        }
      }
    }
  }
  return fold;
}

}  // namespace

ReducedGraph ReducedGraph::Reduce(const CostGraph& graph, const ReductionOptions& options) {
  ReducedGraph r;
  r.num_nodes_ = graph.num_nodes();
  WorkGraph w(graph);
  std::deque<int> queue;
  std::vector<bool> queued(graph.num_nodes(), false);
  auto enqueue = [&](int v) {
    if (w.alive(v) && !queued[v] && w.degree(v) <= 1) {
      queue.push_back(v);
      queued[v] = true;
    }
  };
  for (int v = 0; v < graph.num_nodes(); ++v) enqueue(v);

  while (true) {
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      queued[v] = false;
      if (!w.alive(v) || w.degree(v) > 1) continue;
      if (w.degree(v) == 0) {
        const int best = CheapestCandidate(w.unary(v));
        r.offset_ += w.unary(v)[best];
        r.records_.push_back(Record{Kind::kIsolated, v, -1, -1, 0, {best}});
        ++r.stats_.isolated;
        w.Kill(v);
        continue;
      }
      const auto [a, edge] = *w.neighbours(v).begin();
      r.records_.push_back(Record{Kind::kLeaf, v, a, -1, 0, FoldLeaf(w, v, a, edge)});
      ++r.stats_.leaves;
      w.Kill(v);
      enqueue(a);
    }
    // The cheapest chain elimination, if any is allowed.
    const int v = CheapestChain(w, graph.num_nodes(), options.max_chain_work);
    if (v < 0) break;
    ChainFold fold = FoldChain(w, v);
    w.Kill(v);
    if (w.AddCost(fold.a, fold.b, fold.cost)) ++r.stats_.merged_edges;
    r.records_.push_back(
        Record{Kind::kChain, v, fold.a, fold.b, w.k(fold.b), std::move(fold.best)});
    ++r.stats_.chains;
    enqueue(fold.a);
    enqueue(fold.b);
  }

  std::vector<int> core_index(graph.num_nodes(), -1);
  for (int v = 0; v < graph.num_nodes(); ++v) {
    if (!w.alive(v)) continue;
    core_index[v] = r.core_.AddNode(w.unary(v));
    r.core_nodes_.push_back(v);
  }
  w.ForEachEdge([&](int a, int b, const std::vector<double>& cost) {
    r.core_.AddEdgeCost(core_index[a], core_index[b], cost);
  });
  return r;
}

std::vector<int> ReducedGraph::Expand(absl::Span<const int> core_choice) const {
  OFS_CHECK(core_choice.size() == core_nodes_.size());
  std::vector<int> choice(num_nodes_, 0);
  for (size_t i = 0; i < core_nodes_.size(); ++i) choice[core_nodes_[i]] = core_choice[i];
  for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
    switch (it->kind) {
      case Kind::kIsolated: choice[it->node] = it->best[0]; break;
      case Kind::kLeaf: choice[it->node] = it->best[choice[it->a]]; break;
      case Kind::kChain:
        choice[it->node] = it->best[static_cast<size_t>(choice[it->a]) * it->kb + choice[it->b]];
        break;
    }
  }
  return choice;
}

}  // namespace oneflow_sbp::graph
