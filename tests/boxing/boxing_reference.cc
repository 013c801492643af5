#include "tests/boxing/boxing_reference.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "boxing/collective_moves.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::boxing::reference {
namespace {

std::vector<int> Identity(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

// An independent model of a final p2p exchange from `from` to `to` on one
// placement (participant = parallel id); the model is ReferenceBest's
// (boxing_reference.h). Whole pieces are the case of all parts at one
// position, so root ownership and split ownership are covered. Choices are
// tried cheapest first; a node cap keeps the search bounded, and the best
// found by then is still a legal exchange, so "planner <= reference" stays
// sound.
class ReferenceExchange {
 public:
  ReferenceExchange(LayoutSpace& space, const NdSbp& from, const NdSbp& to) {
    const Placement& p = space.placement();
    n_ = p.parallel_num();
    const int64_t eb = space.element_bytes();
    const std::vector<TensorSlice>& have = space.Slices(from);
    const std::vector<TensorSlice>& need = space.Slices(to);
    auto key = [&](int64_t id, const NdSbp& nd, auto keep) {
      std::vector<int64_t> k;
      const MeshCoord c = p.CoordinateOf(id);
      for (int i = 0; i < nd.size(); ++i) k.push_back(keep(nd[i]) ? c[i] : -1);
      return k;
    };
    // Source pieces: (P coordinates, slice) -> holders.
    std::map<std::vector<int64_t>, std::vector<int>> pieces;
    for (int64_t id = 0; id < n_; ++id) {
      std::vector<int64_t> k = key(id, from, [](SbpParallel s) { return s.is_partial_sum(); });
      for (IndexRange r : have[id].ranges()) {
        k.push_back(r.begin);
        k.push_back(r.end);
      }
      pieces[k].push_back(static_cast<int>(id));
    }
    // Destination groups (same non-P coordinates, members by P coordinates)
    // and classes (same S coordinates).
    std::map<std::vector<int64_t>, std::map<std::vector<int64_t>, std::vector<int>>> classes;
    for (int64_t id = 0; id < n_; ++id) {
      const auto cls = key(id, to, [](SbpParallel s) { return s.is_split(); });
      const auto grp = key(id, to, [](SbpParallel s) { return !s.is_partial_sum(); });
      classes[cls][grp].push_back(static_cast<int>(id));
    }
    for (const auto& [cls, groups] : classes) {
      std::vector<std::vector<int>> members;
      for (const auto& [grp, ranks] : groups) members.push_back(ranks);
      const int g = static_cast<int>(members[0].size());
      const TensorSlice& region = need[members[0][0]];
      for (const auto& [k, holders] : pieces) {
        const TensorSlice overlap = have[holders[0]].Intersect(region);
        if (overlap.elem_cnt() == 0) continue;
        int dim = -1;
        for (int d = 0; d < overlap.rank() && dim < 0; ++d) {
          if (overlap.range(d).size() >= 2) dim = d;
        }
        for (int part = 0; part < (dim < 0 ? 1 : g); ++part) {
          TensorSlice cut = overlap;
          if (dim >= 0) cut.set_range(dim, BalancedPart(overlap.range(dim), g, part));
          if (cut.elem_cnt() == 0) continue;
          parts_.push_back(Part{cut.elem_cnt() * eb, holders, members});
        }
      }
    }
    // Least bytes each part must move (at its best position), summed from
    // the back, for the lower bound.
    rest_.assign(parts_.size() + 1, 0);
    for (size_t i = parts_.size(); i-- > 0;) {
      rest_[i] = rest_[i + 1] + parts_[i].bytes * MovesAt(parts_[i], BestPositions(parts_[i])[0]);
    }
    sent_.assign(n_, 0);
    received_.assign(n_, 0);
  }

  // The least max bytes any rank sends or receives found within `node_cap`
  // search nodes (the optimum unless capped).
  ReferenceExchangeResult Search(int64_t node_cap, const Calibration& cal) {
    cap_ = node_cap;
    // A lower bound on every exchange's max: no exchange moves fewer than
    // rest_[0] bytes in all, so some rank receives at least an n-th of
    // them; and the copies of the parts with holders H must leave H, so
    // some member of H sends at least an |H|-th of them. Once an exchange
    // reaches the bound it is optimal and the search stops.
    floor_ = (rest_[0] + n_ - 1) / n_;
    std::map<std::vector<int>, int64_t> leaving;
    for (const Part& part : parts_) {
      leaving[part.holders] += part.bytes * MovesAt(part, BestPositions(part)[0]);
    }
    for (const auto& [holders, bytes] : leaving) {
      const int64_t h = static_cast<int64_t>(holders.size());
      floor_ = std::max(floor_, (bytes + h - 1) / h);
    }
    Place(0);
    ReferenceExchangeResult out;
    out.max_rank_bytes = best_;
    out.time_s = cal.P2pTime(best_);
    out.nodes = nodes_;
    out.capped = nodes_ > cap_;
    return out;
  }

 private:
  struct Part {
    int64_t bytes;
    std::vector<int> holders;
    std::vector<std::vector<int>> groups;
  };

  static bool Holds(const Part& part, int rank) {
    return std::find(part.holders.begin(), part.holders.end(), rank) != part.holders.end();
  }
  static int64_t MovesAt(const Part& part, int m) {
    int64_t moves = 0;
    for (const std::vector<int>& g : part.groups) moves += Holds(part, g[m]) ? 0 : 1;
    return moves;
  }
  // Positions by bytes moved, then position.
  static std::vector<int> BestPositions(const Part& part) {
    std::vector<std::pair<int64_t, int>> keyed;
    for (int m = 0; m < static_cast<int>(part.groups[0].size()); ++m) {
      keyed.emplace_back(MovesAt(part, m), m);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<int> out;
    for (const auto& k : keyed) out.push_back(k.second);
    return out;
  }

  int64_t Max() const {
    int64_t m = 0;
    for (int r = 0; r < n_; ++r) m = std::max({m, sent_[r], received_[r]});
    return m;
  }

  void Place(size_t i) {
    if (best_ <= floor_ || ++nodes_ > cap_) return;
    if (i == parts_.size()) {
      best_ = std::min(best_, Max());
      return;
    }
    for (int m : BestPositions(parts_[i])) Send(i, m, 0);
  }

  // Senders for part i at position m, group `gi` onwards.
  void Send(size_t i, int m, size_t gi) {
    const Part& part = parts_[i];
    if (gi == part.groups.size()) {
      int64_t total = 0;
      for (int r = 0; r < n_; ++r) total += received_[r];
      const int64_t bound = std::max(Max(), (total + rest_[i + 1] + n_ - 1) / n_);
      if (bound < best_) Place(i + 1);
      return;
    }
    const int r = part.groups[gi][m];
    if (Holds(part, r)) {
      Send(i, m, gi + 1);
      return;
    }
    std::vector<int> senders = part.holders;
    std::stable_sort(senders.begin(), senders.end(),
                     [&](int a, int b) { return sent_[a] < sent_[b]; });
    for (int s : senders) {
      sent_[s] += part.bytes;
      received_[r] += part.bytes;
      if (std::max(sent_[s], received_[r]) < best_ && nodes_ <= cap_) Send(i, m, gi + 1);
      sent_[s] -= part.bytes;
      received_[r] -= part.bytes;
    }
  }

  int n_ = 0;
  std::vector<Part> parts_;
  std::vector<int64_t> rest_;
  std::vector<int64_t> sent_;
  std::vector<int64_t> received_;
  int64_t best_ = INT64_MAX;
  int64_t nodes_ = 0;
  int64_t cap_ = 0;
  int64_t floor_ = 0;  // a lower bound on every exchange's max
};

}  // namespace

std::vector<NdSbp> AllLayouts(int axes, int rank) {
  std::vector<NdSbp> out = {NdSbp()};
  for (int i = 0; i < axes; ++i) {
    std::vector<NdSbp> next;
    for (const NdSbp& prefix : out) {
      for (int v = -2; v < rank; ++v) {
        NdSbp l = prefix;
        l.push_back(v == -2 ? SbpParallel::Broadcast()
                            : v == -1 ? SbpParallel::PartialSum() : SbpParallel::Split(v));
        next.push_back(l);
      }
    }
    out = std::move(next);
  }
  return out;
}

ReferenceAnswer ReferenceBest(const PlanRequest& r, const Calibration& cal, int max_steps,
                              int64_t node_cap, ReferenceMemo* memo) {
  const int n = r.src_placement.parallel_num();
  LayoutSpace space(r.shape, r.dtype, r.src_placement, Identity(n), n);
  std::vector<SbpParallel> values = {SbpParallel::Broadcast(), SbpParallel::PartialSum()};
  for (int k = 0; k < r.shape.rank(); ++k) values.push_back(SbpParallel::Split(k));
  // Cheapest time to each layout in at most d steps, d = 0..max_steps.
  std::map<std::string, std::pair<NdSbp, double>> reach = {{r.src.ToString(), {r.src, 0.0}}};
  std::map<std::string, std::pair<NdSbp, double>> frontier = reach;
  for (int d = 0; d < max_steps; ++d) {
    std::map<std::string, std::pair<NdSbp, double>> next;
    for (const auto& [name, at] : frontier) {
      for (MeshAxisMask m = 1; m < (MeshAxisMask{1} << at.first.size()); ++m) {
        for (SbpParallel to : values) {
          std::optional<BoxingStep> s = CollectiveMove(space, at.first, m, to, cal);
          if (!s) continue;
          const double t = at.second + s->time_s;
          const std::string key = s->result.ToString();
          auto it = next.find(key);
          if (it == next.end() || t < it->second.second) next[key] = {s->result, t};
          auto jt = reach.find(key);
          if (jt == reach.end() || t < jt->second.second) reach[key] = {s->result, t};
        }
      }
    }
    frontier = std::move(next);
  }
  ReferenceAnswer answer;
  answer.time_s = 1e300;
  for (const auto& [name, at] : reach) {
    if (at.first == r.dst && at.second < answer.time_s) {
      answer.time_s = at.second;
      answer.best_capped = false;
    }
    const auto memo_key = std::make_pair(name, r.dst.ToString());
    auto it = memo->find(memo_key);
    if (it == memo->end()) {
      it = memo->emplace(memo_key, ReferenceExchange(space, at.first, r.dst).Search(node_cap, cal))
               .first;
    }
    const ReferenceExchangeResult& x = it->second;
    answer.any_capped |= x.capped;
    answer.max_nodes = std::max(answer.max_nodes, x.nodes);
    if (at.second + x.time_s < answer.time_s) {
      answer.time_s = at.second + x.time_s;
      answer.best_capped = x.capped;
    }
  }
  return answer;
}

bool InReferenceSpace(const BoxingPlan& plan, int max_steps) {
  int collectives = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].kind == StepKind::kPointToPoint) {
      if (i + 1 != plan.steps.size()) return false;
    } else {
      ++collectives;
    }
  }
  return collectives <= max_steps;
}

}  // namespace oneflow_sbp::boxing::reference
