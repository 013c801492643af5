#include "graph/cost_graph.h"

#include <algorithm>

#include "oneflow_sbp/values/check.h"

namespace oneflow_sbp::graph {

int CostGraph::AddNode(std::vector<double> unary) {
  OFS_CHECK(!unary.empty());
  unary_.push_back(std::move(unary));
  return num_nodes() - 1;
}

int CostGraph::FindEdge(int a, int b) const {
  auto it = edge_index_.find(std::make_pair(std::min(a, b), std::max(a, b)));
  return it == edge_index_.end() ? -1 : it->second;
}

void CostGraph::AddEdgeCost(int a, int b, absl::Span<const double> cost) {
  OFS_CHECK(a != b && a >= 0 && b >= 0 && a < num_nodes() && b < num_nodes());
  const int ka = num_candidates(a);
  const int kb = num_candidates(b);
  OFS_CHECK(static_cast<int64_t>(cost.size()) == int64_t{ka} * kb);
  const auto key = std::make_pair(std::min(a, b), std::max(a, b));
  auto [it, inserted] = edge_index_.emplace(key, static_cast<int>(edges_.size()));
  if (inserted) {
    edges_.push_back(CostEdge{a, b, std::vector<double>(cost.begin(), cost.end())});
    return;
  }
  CostEdge& e = edges_[it->second];
  if (e.a == a) {
    for (size_t i = 0; i < cost.size(); ++i) e.cost[i] += cost[i];
    return;
  }
  // Stored as (b, a): add the transpose.
  for (int xa = 0; xa < ka; ++xa) {
    for (int xb = 0; xb < kb; ++xb) e.cost[xb * ka + xa] += cost[xa * kb + xb];
  }
}

double CostGraph::Objective(absl::Span<const int> choice) const {
  OFS_CHECK(static_cast<int>(choice.size()) == num_nodes());
  double total = 0;
  for (int v = 0; v < num_nodes(); ++v) total += unary_[v][choice[v]];
  for (const CostEdge& e : edges_) {
    total += e.cost[choice[e.a] * num_candidates(e.b) + choice[e.b]];
  }
  return total;
}

void CostGraph::AddScaled(const CostGraph& other, double scale) {
  OFS_CHECK(other.num_nodes() == num_nodes() && other.edges_.size() == edges_.size());
  for (int v = 0; v < num_nodes(); ++v) {
    OFS_CHECK(other.unary_[v].size() == unary_[v].size());
    for (size_t x = 0; x < unary_[v].size(); ++x) unary_[v][x] += scale * other.unary_[v][x];
  }
  for (size_t e = 0; e < edges_.size(); ++e) {
    const CostEdge& o = other.edges_[e];
    OFS_CHECK(o.a == edges_[e].a && o.b == edges_[e].b);
    for (size_t i = 0; i < o.cost.size(); ++i) edges_[e].cost[i] += scale * o.cost[i];
  }
}

}  // namespace oneflow_sbp::graph
