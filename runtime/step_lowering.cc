#include "runtime/step_lowering.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::runtime {
namespace {

// Every rank's slice of the plan's tensor as `nd` on `placement`.
std::vector<TensorSlice> Slices(const boxing::BoxingPlan& plan, const Placement& placement,
                                const NdSbp& nd) {
  std::vector<TensorSlice> out;
  out.reserve(placement.parallel_num());
  for (int64_t id = 0; id < placement.parallel_num(); ++id) {
    out.push_back(SliceAt(plan.shape, nd, placement.hierarchy(), placement.CoordinateOf(id)));
  }
  return out;
}

// parallel_id of `device_rank` in `placement`, or -1.
int64_t ParallelIdOf(const Placement& placement, int64_t device_rank) {
  for (int64_t id = 0; id < placement.parallel_num(); ++id) {
    if (placement.RankOf(id) == device_rank) return id;
  }
  return -1;
}

TensorSlice BoundingBox(const std::vector<TensorSlice>& slices) {
  TensorSlice box = slices.front();
  for (const TensorSlice& s : slices) {
    for (int d = 0; d < box.rank(); ++d) {
      if (s.range(d).empty()) continue;
      IndexRange b = box.range(d);
      const IndexRange r = s.range(d);
      b = b.empty() ? r : IndexRange{std::min(b.begin, r.begin), std::max(b.end, r.end)};
      box.set_range(d, b);
    }
  }
  return box;
}

absl::StatusOr<RankStep> LowerCollective(const boxing::BoxingPlan& plan, const boxing::BoxingStep& s,
                                         const Placement& placement, const NdSbp& before,
                                         int64_t device_rank) {
  RankStep r;
  r.kind = s.kind;
  const int64_t me = ParallelIdOf(placement, device_rank);
  if (me < 0) return r;
  r.active = r.holds_input = r.holds_output = true;
  auto it = std::find_if(s.groups.begin(), s.groups.end(), [&](const std::vector<int64_t>& g) {
    return std::find(g.begin(), g.end(), device_rank) != g.end();
  });
  if (it == s.groups.end()) {
    return absl::InternalError(absl::StrCat("boxing step ", boxing::StepKindName(s.kind),
                                            ": rank ", device_rank, " is in no group"));
  }
  r.group = *it;
  r.position = static_cast<int>(std::find(r.group.begin(), r.group.end(), device_rank) -
                                r.group.begin());
  std::vector<TensorSlice> olds, news;
  for (int64_t rank : r.group) {
    const MeshCoord c = placement.CoordinateOf(ParallelIdOf(placement, rank));
    olds.push_back(SliceAt(plan.shape, before, placement.hierarchy(), c));
    news.push_back(SliceAt(plan.shape, s.result, placement.hierarchy(), c));
  }
  const int k = r.position;
  r.in = olds[k];
  r.out = news[k];
  switch (s.kind) {
    case boxing::StepKind::kAllGather:
      r.chunks = olds;
      break;
    case boxing::StepKind::kReduceScatter:
      r.chunks = news;
      break;
    case boxing::StepKind::kAllToAll:
      for (size_t j = 0; j < r.group.size(); ++j) {
        r.send.push_back({olds[k].Intersect(news[j])});
        r.recv.push_back({olds[j].Intersect(news[k])});
      }
      break;
    case boxing::StepKind::kLocalPartial:
      // P: one copy keeps the value and the others hold zeros; P(max) and
      // P(min): every copy is already a candidate equal to the value.
      r.keeps_value = k == 0 || !s.to.is_partial_sum();
      break;
    case boxing::StepKind::kLocalScatter:
      r.out = BoundingBox(olds);
      break;
    default:
      break;
  }
  return r;
}

absl::StatusOr<RankStep> LowerExchange(const boxing::BoxingPlan& plan, const boxing::BoxingStep& s,
                                       const Placement& from_placement, const NdSbp& before,
                                       int64_t device_rank) {
  RankStep r;
  r.kind = s.kind;
  r.sum = s.sum_pieces;
  const auto me_it = std::find(plan.ranks.begin(), plan.ranks.end(), device_rank);
  if (me_it == plan.ranks.end()) return r;
  const int me = static_cast<int>(me_it - plan.ranks.begin());
  r.active = true;
  r.group = plan.ranks;
  r.position = me;
  const int64_t in_id = ParallelIdOf(from_placement, device_rank);
  const int64_t out_id = ParallelIdOf(plan.dst_placement, device_rank);
  r.holds_input = in_id >= 0;
  r.holds_output = out_id >= 0;
  if (r.holds_input) r.in = Slices(plan, from_placement, before)[in_id];
  if (r.holds_output) r.out = Slices(plan, plan.dst_placement, s.result)[out_id];
  r.send.resize(plan.ranks.size());
  r.recv.resize(plan.ranks.size());
  for (const boxing::P2pPiece& piece : s.pieces) {
    if (piece.sender == me && piece.receiver == me) {
      r.local.push_back(piece.region);
    } else if (piece.sender == me) {
      r.send[piece.receiver].push_back(piece.region);
    } else if (piece.receiver == me) {
      r.recv[piece.sender].push_back(piece.region);
    }
  }
  if ((!r.local.empty() || !r.send.empty()) && !r.holds_input) {
    for (const auto& regions : r.send) {
      if (!regions.empty()) {
        return absl::InternalError(absl::StrCat("p2p step: rank ", device_rank,
                                                " sends but holds no source shard"));
      }
    }
  }
  return r;
}

}  // namespace

const NdSbp& LayoutBefore(const boxing::BoxingPlan& plan, int step) {
  return step == 0 ? plan.src : plan.steps[step - 1].result;
}

const Placement& PlacementBefore(const boxing::BoxingPlan& plan, int step) {
  return step == 0 || !plan.steps[step - 1].on_destination ? plan.src_placement
                                                           : plan.dst_placement;
}

absl::StatusOr<RankStep> LowerStep(const boxing::BoxingPlan& plan, int step, int64_t device_rank) {
  if (step < 0 || step >= static_cast<int>(plan.steps.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("boxing plan has ", plan.steps.size(), " steps; no step ", step));
  }
  const boxing::BoxingStep& s = plan.steps[step];
  const NdSbp& before = LayoutBefore(plan, step);
  const Placement& from = PlacementBefore(plan, step);
  if (s.kind == boxing::StepKind::kPointToPoint) {
    return LowerExchange(plan, s, from, before, device_rank);
  }
  const Placement& placement = s.on_destination ? plan.dst_placement : plan.src_placement;
  if (!(placement == from)) {
    return absl::InternalError("boxing plan: a collective step changes placement");
  }
  return LowerCollective(plan, s, placement, before, device_rank);
}

}  // namespace oneflow_sbp::runtime