#include "graph/elimination.h"

#include <deque>
#include <map>

#include "oneflow_sbp/check.h"

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
      const std::vector<double>& uv = w.unary(v);
      if (w.degree(v) == 0) {
        int best = 0;
        for (int j = 1; j < w.k(v); ++j) {
          if (uv[j] < uv[best]) best = j;
        }
        r.offset_ += uv[best];
        r.records_.push_back(Record{Kind::kIsolated, v, -1, -1, 0, {best}});
        ++r.stats_.isolated;
        w.Kill(v);
        continue;
      }
      const auto [a, edge] = *w.neighbours(v).begin();
      const std::vector<double> cav = w.Oriented(edge, a);  // K_a x K_v
      const int ka = w.k(a), kv = w.k(v);
      Record rec{Kind::kLeaf, v, a, -1, 0, std::vector<int>(ka, 0)};
      std::vector<double>& ua = w.unary(a);
      for (int i = 0; i < ka; ++i) {
        double best = kInfeasible;
        for (int j = 0; j < kv; ++j) {
          const double c = uv[j] + cav[i * kv + j];
          if (c < best) {
            best = c;
            rec.best[i] = j;
          }
        }
        ua[i] += best;
      }
      r.records_.push_back(std::move(rec));
      ++r.stats_.leaves;
      w.Kill(v);
      enqueue(a);
    }
    // The cheapest chain elimination, if any is allowed.
    int chosen = -1;
    int64_t chosen_work = 0;
    for (int v = 0; v < graph.num_nodes(); ++v) {
      if (!w.alive(v) || w.degree(v) != 2) continue;
      auto it = w.neighbours(v).begin();
      const int a = it->first;
      const int b = std::next(it)->first;
      const int64_t work = int64_t{w.k(a)} * w.k(v) * w.k(b);
      if (work > options.max_chain_work) continue;
      if (chosen < 0 || work < chosen_work) {
        chosen = v;
        chosen_work = work;
      }
    }
    if (chosen < 0) break;
    const int v = chosen;
    auto it = w.neighbours(v).begin();
    const int a = it->first, ea = it->second;
    const int b = std::next(it)->first, eb = std::next(it)->second;
    const int ka = w.k(a), kv = w.k(v), kb = w.k(b);
    const std::vector<double> cav = w.Oriented(ea, a);  // K_a x K_v
    const std::vector<double> cvb = w.Oriented(eb, v);  // K_v x K_b
    const std::vector<double>& uv = w.unary(v);
    std::vector<double> cab(static_cast<size_t>(ka) * kb, kInfeasible);
    Record rec{Kind::kChain, v, a, b, kb, std::vector<int>(static_cast<size_t>(ka) * kb, 0)};
    for (int i = 0; i < ka; ++i) {
      double* row = &cab[static_cast<size_t>(i) * kb];
      int* arg = &rec.best[static_cast<size_t>(i) * kb];
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
    w.Kill(v);
    if (w.AddCost(a, b, cab)) ++r.stats_.merged_edges;
    r.records_.push_back(std::move(rec));
    ++r.stats_.chains;
    enqueue(a);
    enqueue(b);
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
