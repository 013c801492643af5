#include "graph/graph_solver.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

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

// The nodes split into induced forests, greedily in id order: a node
// joins the forest being built unless two of its neighbours already in it
// are connected there (the forest would close a cycle); the nodes it
// leaves out start the next forest. Every node is in exactly one. Each
// forest is kept as its trees, rooted at their lowest node, in an order
// where every child comes before its parent.
struct Forests {
  // Per forest: its nodes, children before parents.
  std::vector<std::vector<int>> order;
  // Per node: its parent in its tree (-1 for a root), and the entries of
  // adj[node] that are its children.
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
};

Forests InducedForests(const std::vector<std::vector<Neighbour>>& adj) {
  const int n = static_cast<int>(adj.size());
  std::vector<int> forest(n, -1);
  std::vector<int> uf(n);
  auto find = [&](int v) {
    while (uf[v] != v) v = uf[v] = uf[uf[v]];
    return v;
  };
  std::vector<int> roots;
  int forests = 0;
  for (int left = n; left > 0; ++forests) {
    for (int v = 0; v < n; ++v) uf[v] = v;
    for (int v = 0; v < n; ++v) {
      if (forest[v] >= 0) continue;
      roots.clear();
      for (const Neighbour& nb : adj[v]) {
        if (forest[nb.node] == forests) roots.push_back(find(nb.node));
      }
      std::sort(roots.begin(), roots.end());
      if (std::adjacent_find(roots.begin(), roots.end()) != roots.end()) continue;
      forest[v] = forests;
      for (int r : roots) uf[r] = v;
      --left;
    }
  }
  Forests out;
  out.order.resize(forests);
  out.parent.assign(n, -1);
  out.children.resize(n);
  std::vector<char> seen(n, 0);
  std::vector<int> bfs;
  for (int root = 0; root < n; ++root) {
    if (seen[root]) continue;
    // Breadth first from the tree's lowest node: parents before children.
    bfs.assign(1, root);
    seen[root] = 1;
    for (size_t i = 0; i < bfs.size(); ++i) {
      const int v = bfs[i];
      for (size_t e = 0; e < adj[v].size(); ++e) {
        const int c = adj[v][e].node;
        if (forest[c] != forest[v] || seen[c]) continue;
        seen[c] = 1;
        out.parent[c] = v;
        out.children[v].push_back(static_cast<int>(e));
        bfs.push_back(c);
      }
    }
    std::vector<int>& order = out.order[forest[root]];
    order.insert(order.end(), bfs.rbegin(), bfs.rend());
  }
  return out;
}

// Block coordinate descent from `choice` (changed in place): each forest in
// turn takes its exact best choice given every other node's (its nodes'
// unary costs plus their edges to nodes outside it, and the edges of its
// trees), by dynamic programming from the leaves up (ties: the lowest
// candidate index), if that is cheaper than its current choice by more
// than 1e-12 relative; rounds over all forests until one changes nothing,
// at most `max_rounds`. Returns the rounds. It moves many nodes at once (a
// weight, the ops reading it and their outputs), which single-node
// descent cannot.
int BlockDescend(const CostGraph& g, const std::vector<std::vector<Neighbour>>& adj,
                 const Forests& forests, int max_rounds, std::vector<int>* choice) {
  std::vector<int>& cur = *choice;
  const int n = g.num_nodes();
  std::vector<char> in_block(n, 0);
  // Per node: its subtree's best cost per candidate; per candidate of its
  // parent, its best candidate.
  std::vector<std::vector<double>> subtree(n);
  std::vector<std::vector<int>> best_given_parent(n);
  std::vector<int> next(n);
  std::vector<double> best;
  int rounds = 0;
  for (bool changed = true; changed && rounds < max_rounds; ++rounds) {
    changed = false;
    for (const std::vector<int>& order : forests.order) {
      for (int v : order) in_block[v] = 1;
      double now = 0;  // the forest's cost as it stands
      for (int v : order) {
        const int k = g.num_candidates(v);
        std::vector<double>& cost = subtree[v];
        cost.assign(g.unary(v).begin(), g.unary(v).end());
        for (const Neighbour& nb : adj[v]) {
          if (in_block[nb.node]) continue;
          const double* col = nb.given(cur[nb.node], k);
          for (int x = 0; x < k; ++x) cost[x] += col[x];
        }
        now += cost[cur[v]];
        for (int e : forests.children[v]) {
          const Neighbour& nb = adj[v][e];
          now += nb.given(cur[nb.node], k)[cur[v]];
          // min over the child's y of edge(x, y) + subtree(child)[y].
          const std::vector<double>& below = subtree[nb.node];
          std::vector<int>& arg = best_given_parent[nb.node];
          best.assign(k, kInfeasible);
          arg.assign(k, 0);
          for (int y = 0; y < g.num_candidates(nb.node); ++y) {
            const double* col = nb.given(y, k);
            for (int x = 0; x < k; ++x) {
              const double c = col[x] + below[y];
              if (c < best[x]) {
                best[x] = c;
                arg[x] = y;
              }
            }
          }
          for (int x = 0; x < k; ++x) cost[x] += best[x];
        }
      }
      double total = 0;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const int v = *it;
        if (forests.parent[v] < 0) {
          const std::vector<double>& cost = subtree[v];
          next[v] = static_cast<int>(std::min_element(cost.begin(), cost.end()) - cost.begin());
          total += cost[next[v]];
        } else {
          next[v] = best_given_parent[v][next[forests.parent[v]]];
        }
      }
      for (int v : order) in_block[v] = 0;
      if (!(total < now * (1 - 1e-12))) continue;
      for (int v : order) cur[v] = next[v];
      changed = true;
    }
  }
  return rounds;
}

}  // namespace

absl::StatusOr<Solution> SolveCostGraph(const CostGraph& graph, const SolverOptions& options,
                                        absl::Span<const std::vector<int>> starts) {
  absl::Status s = CheckCosts(graph);
  OFS_RETURN_IF_ERROR(s);
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
    const Forests forests = InducedForests(adj);
    double best = kInfeasible;
    for (std::vector<int>& c : core_starts) {
      sol.stats.sweeps += Descend(core, adj, options.max_sweeps, &c);
      if (options.block_descent) {
        sol.stats.block_rounds += BlockDescend(core, adj, forests, options.max_sweeps, &c);
      }
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
