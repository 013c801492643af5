#include "graph/graph_solver.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::graph {
namespace {

absl::Status CheckCosts(const CostGraph& g) {
  auto bad = [](double c) { return std::isnan(c) || c < 0; };
  for (int v = 0; v < g.num_nodes(); ++v) {
    for (int x = 0; x < g.num_candidates(v); ++x) {
      if (bad(g.unary(v)[x])) {
        return absl::InvalidArgumentError(absl::StrCat("cost graph: node ", v, " candidate ", x,
                                                       " has cost ", g.unary(v)[x],
                                                       "; costs must be >= 0"));
      }
    }
  }
  for (const CostEdge& e : g.edges()) {
    for (double c : e.cost) {
      if (bad(c)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cost graph: edge ", e.a, "-", e.b, " has cost ", c, "; costs must be >= 0"));
      }
    }
  }
  return absl::OkStatus();
}

// Per node: its edges, each as the neighbour's choice's column of costs:
// cost[y * K_self + x] is the edge's cost when this node takes x and the
// neighbour y, so that the costs of every x given the neighbour's choice
// are contiguous.
struct Neighbour {
  int node;
  std::vector<double> cost;  // K_node x K_self
  // The K_self costs given the neighbour's choice y.
  const double* given(int y, int k_self) const { return &cost[static_cast<size_t>(y) * k_self]; }
};

std::vector<std::vector<Neighbour>> Adjacency(const CostGraph& g) {
  std::vector<std::vector<Neighbour>> adj(g.num_nodes());
  for (const CostEdge& e : g.edges()) {
    const int ka = g.num_candidates(e.a), kb = g.num_candidates(e.b);
    std::vector<double> t(e.cost.size());
    for (int xa = 0; xa < ka; ++xa) {
      for (int xb = 0; xb < kb; ++xb) t[xb * ka + xa] = e.cost[xa * kb + xb];
    }
    adj[e.a].push_back(Neighbour{e.b, std::move(t)});
    adj[e.b].push_back(Neighbour{e.a, e.cost});
  }
  return adj;
}

class Enumerator {
 public:
  explicit Enumerator(const CostGraph& g) : g_(g), n_(g.num_nodes()), cur_(n_, 0) {
    // Edges to earlier nodes only: each edge is paid once, when its later
    // end is chosen.
    for (auto& list : Adjacency(g)) {
      back_.emplace_back();
      for (Neighbour& nb : list) {
        if (nb.node < static_cast<int>(back_.size()) - 1) back_.back().push_back(std::move(nb));
      }
    }
    suffix_.assign(n_ + 1, 0);
    for (int v = n_ - 1; v >= 0; --v) {
      double m = kInfeasible;
      for (double c : g.unary(v)) m = std::min(m, c);
      suffix_[v] = suffix_[v + 1] + m;
    }
  }

  // `bound`: a cost some choice reaches (from the starts), or infinity.
  void Run(double bound) {
    bound_ = bound;
    best_ = kInfeasible;
    best_choice_.assign(n_, 0);
    Visit(0, 0);
  }
  const std::vector<int>& best_choice() const { return best_choice_; }
  int64_t visited() const { return visited_; }

 private:
  void Visit(int d, double partial) {
    ++visited_;
    if (d == n_) {
      if (partial < best_) {
        best_ = partial;
        best_choice_ = cur_;
        bound_ = std::min(bound_, best_);
      }
      return;
    }
    const std::vector<double>& u = g_.unary(d);
    const int k = g_.num_candidates(d);
    for (int x = 0; x < k; ++x) {
      double c = partial + u[x];
      for (const Neighbour& nb : back_[d]) c += nb.given(cur_[nb.node], k)[x];
      const double lower = c + suffix_[d + 1];
      // A later choice must beat the best strictly; the starts' bound only
      // cuts what is strictly worse, so the first minimum is still found.
      if (!(lower < best_) || lower > bound_) continue;
      cur_[d] = x;
      Visit(d + 1, c);
    }
  }

  const CostGraph& g_;
  const int n_;
  std::vector<std::vector<Neighbour>> back_;
  std::vector<double> suffix_;
  std::vector<int> cur_;
  std::vector<int> best_choice_;
  double best_ = kInfeasible;
  double bound_ = kInfeasible;
  int64_t visited_ = 0;
};

// The cost of each candidate x of node v given its neighbours' choices,
// into (*out)[x]: unary, then each edge in adjacency order.
void LocalCosts(const CostGraph& g, const std::vector<std::vector<Neighbour>>& adj,
                const std::vector<int>& cur, int v, std::vector<double>* out) {
  const int k = g.num_candidates(v);
  out->assign(g.unary(v).begin(), g.unary(v).end());
  double* c = out->data();
  for (const Neighbour& nb : adj[v]) {
    const double* col = nb.given(cur[nb.node], k);
    for (int x = 0; x < k; ++x) c[x] += col[x];
  }
}

// Coordinate descent from `choice` (changed in place); returns the sweeps.
//
// A node whose neighbours have not changed since it last moved to its best
// candidate would stay where it is (its candidate is still the first
// minimum, within the 1e-12 tolerance), so each sweep visits only the
// nodes some neighbour's move touched since their last visit ("dirty"),
// in id order. The first sweep visits all. The result and the sweep count
// are those of visiting every node every sweep.
int Descend(const CostGraph& g, const std::vector<std::vector<Neighbour>>& adj, int max_sweeps,
            std::vector<int>* choice) {
  int sweeps = 0;
  std::vector<int>& cur = *choice;
  std::vector<char> dirty(g.num_nodes(), 1);
  std::vector<double> local;
  for (bool changed = true; changed && sweeps < max_sweeps; ++sweeps) {
    changed = false;
    for (int v = 0; v < g.num_nodes(); ++v) {
      if (!dirty[v]) continue;
      dirty[v] = 0;
      LocalCosts(g, adj, cur, v, &local);
      int best_x = cur[v];
      double best_c = local[best_x];
      for (int x = 0; x < g.num_candidates(v); ++x) {
        const double c = local[x];
        if (c < best_c * (1 - 1e-12)) {
          best_c = c;
          best_x = x;
        }
      }
      if (best_x != cur[v]) {
        cur[v] = best_x;
        changed = true;
        for (const Neighbour& nb : adj[v]) dirty[nb.node] = 1;
      }
    }
  }
  return sweeps;
}

}  // namespace

absl::StatusOr<Solution> SolveCostGraph(const CostGraph& graph, const SolverOptions& options,
                                        absl::Span<const std::vector<int>> starts) {
  absl::Status s = CheckCosts(graph);
  if (!s.ok()) return s;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (static_cast<int>(starts[i].size()) != graph.num_nodes()) {
      return absl::InvalidArgumentError(absl::StrCat("solver: start ", i, " has ",
                                                     starts[i].size(), " entries for ",
                                                     graph.num_nodes(), " nodes"));
    }
    for (int v = 0; v < graph.num_nodes(); ++v) {
      if (starts[i][v] < 0 || starts[i][v] >= graph.num_candidates(v)) {
        return absl::InvalidArgumentError(absl::StrCat("solver: start ", i, " picks candidate ",
                                                       starts[i][v], " of node ", v, ", which has ",
                                                       graph.num_candidates(v)));
      }
    }
  }
  Solution sol;
  sol.stats.nodes = graph.num_nodes();
  sol.stats.edges = static_cast<int>(graph.edges().size());
  const ReducedGraph reduced = ReducedGraph::Reduce(graph, options.reduction);
  const CostGraph& core = reduced.core();
  sol.stats.reduction = reduced.stats();
  sol.stats.core_nodes = core.num_nodes();
  sol.stats.core_edges = static_cast<int>(core.edges().size());
  for (int v = 0; v < core.num_nodes(); ++v) sol.stats.core_product *= core.num_candidates(v);

  // The caller's starts on the core.
  std::vector<std::vector<int>> core_starts;
  for (const std::vector<int>& start : starts) {
    std::vector<int> c;
    for (int v : reduced.core_nodes()) c.push_back(start[v]);
    core_starts.push_back(std::move(c));
  }

  std::vector<int> core_choice;
  if (sol.stats.core_product <= options.max_exact_product) {
    double bound = kInfeasible;
    for (const std::vector<int>& c : core_starts) bound = std::min(bound, core.Objective(c));
    Enumerator e(core);
    e.Run(bound);
    core_choice = e.best_choice();
    sol.stats.exact = true;
    sol.stats.visited = e.visited();
  } else {
    std::mt19937_64 rng(options.seed);
    for (int r = 0; r < options.random_starts; ++r) {
      std::vector<int> c(core.num_nodes());
      for (int v = 0; v < core.num_nodes(); ++v) {
        c[v] = static_cast<int>(rng() % static_cast<uint64_t>(core.num_candidates(v)));
      }
      core_starts.push_back(std::move(c));
    }
    const std::vector<std::vector<Neighbour>> adj = Adjacency(core);
    double best = kInfeasible;
    for (std::vector<int>& c : core_starts) {
      sol.stats.sweeps += Descend(core, adj, options.max_sweeps, &c);
      ++sol.stats.starts;
      const double cost = core.Objective(c);
      if (core_choice.empty() || cost < best) {
        best = cost;
        core_choice = c;
      }
      if (options.keep_ends) sol.ends.push_back(reduced.Expand(c));
    }
    sol.stats.visited = sol.stats.starts;
  }
  sol.choice = reduced.Expand(core_choice);
  sol.objective = graph.Objective(sol.choice);
  return sol;
}

void PreferLowerSecondary(const CostGraph& graph, const CostGraph& secondary,
                          std::vector<int>* choice) {
  const std::vector<std::vector<Neighbour>> adj = Adjacency(graph);
  const std::vector<std::vector<Neighbour>> adj2 = Adjacency(secondary);
  std::vector<int>& cur = *choice;
  std::vector<double> cost, second;
  for (int v = 0; v < graph.num_nodes(); ++v) {
    LocalCosts(graph, adj, cur, v, &cost);
    LocalCosts(secondary, adj2, cur, v, &second);
    const double now = cost[cur[v]];
    int best = cur[v];
    for (int x = 0; x < graph.num_candidates(v); ++x) {
      if (!(cost[x] <= now)) continue;
      if (second[x] < second[best] ||
          (second[x] == second[best] && (cost[x] < cost[best] || (cost[x] == cost[best] && x < best)))) {
        best = x;
      }
    }
    cur[v] = best;
  }
}

Solution BruteForce(const CostGraph& graph) {
  Solution sol;
  std::vector<int> cur(graph.num_nodes(), 0);
  sol.objective = kInfeasible;
  sol.choice = cur;
  while (true) {
    const double c = graph.Objective(cur);
    ++sol.stats.visited;
    if (c < sol.objective) {
      sol.objective = c;
      sol.choice = cur;
    }
    int v = graph.num_nodes() - 1;
    while (v >= 0 && ++cur[v] == graph.num_candidates(v)) cur[v--] = 0;
    if (v < 0) break;
  }
  sol.stats.exact = true;
  return sol;
}

}  // namespace oneflow_sbp::graph
