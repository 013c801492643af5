#include "boxing/p2p_exchange.h"

#include <map>
#include <utility>
#include <vector>

namespace oneflow_sbp::boxing {
namespace {

// Mesh coordinates of `id` on the axes where `nd` is P, packed as one key.
int64_t PartialKey(const Placement& p, const NdSbp& nd, int64_t id) {
  const MeshCoord c = p.CoordinateOf(id);
  int64_t key = 0;
  for (int i = 0; i < nd.size(); ++i) {
    if (nd[i].is_partial_sum()) key = key * p.hierarchy()[i] + c[i];
  }
  return key;
}

bool IsPartialRoot(const Placement& p, const NdSbp& nd, int64_t id) {
  const MeshCoord c = p.CoordinateOf(id);
  for (int i = 0; i < nd.size(); ++i) {
    if (nd[i].is_partial_sum() && c[i] != 0) return false;
  }
  return true;
}

}  // namespace

BoxingStep PointToPointExchange(LayoutSpace& src, const NdSbp& from, LayoutSpace& dst,
                                const NdSbp& to, const Calibration& calibration) {
  const std::vector<TensorSlice> src_slices = src.Slices(from);
  const std::vector<TensorSlice>& dst_slices = dst.Slices(to);
  const Placement& sp = src.placement();
  const Placement& dp = dst.placement();
  const int64_t es = src.element_bytes();

  // Distinct source pieces: (addend key, slice) -> the parallel_ids holding
  // copies, ascending. std::map keeps the iteration deterministic.
  struct PieceKey {
    int64_t addend;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    bool operator<(const PieceKey& o) const {
      return std::tie(addend, ranges) < std::tie(o.addend, o.ranges);
    }
  };
  std::map<PieceKey, std::vector<int64_t>> pieces;
  for (int64_t id = 0; id < sp.parallel_num(); ++id) {
    PieceKey k{PartialKey(sp, from, id), {}};
    for (IndexRange r : src_slices[id].ranges()) k.ranges.emplace_back(r.begin, r.end);
    pieces[k].push_back(id);
  }

  BoxingStep step;
  step.kind = StepKind::kPointToPoint;
  step.result = to;
  step.on_destination = true;
  step.bytes_sent.assign(src.num_participants(), 0);
  step.bytes_received.assign(src.num_participants(), 0);
  for (int64_t q = 0; q < dp.parallel_num(); ++q) {
    if (!IsPartialRoot(dp, to, q)) continue;  // holds zeros
    const TensorSlice& need = dst_slices[q];
    if (need.elem_cnt() == 0) continue;
    const int receiver = dst.participant(q);
    const int64_t receiver_rank = dp.RankOf(q);
    int piece_index = 0;
    for (const auto& [key, holders] : pieces) {
      ++piece_index;
      TensorSlice piece = src_slices[holders[0]];
      const int64_t bytes = piece.Intersect(need).elem_cnt() * es;
      if (bytes == 0) continue;
      bool local = false;
      for (int64_t h : holders) local = local || sp.RankOf(h) == receiver_rank;
      if (local) continue;
      // Rotate over copies so that senders share the load.
      const int64_t sender = holders[(q + piece_index) % holders.size()];
      step.bytes_sent[src.participant(sender)] += bytes;
      step.bytes_received[receiver] += bytes;
    }
  }
  std::vector<int64_t> ranks;
  for (int p = 0; p < src.num_participants(); ++p) {
    if (step.bytes_sent[p] > 0 || step.bytes_received[p] > 0) ranks.push_back(p);
  }
  step.groups.push_back(std::move(ranks));  // participant indices; the planner maps them
  step.time_s = calibration.P2pTime(step.max_rank_bytes());
  return step;
}

}  // namespace oneflow_sbp::boxing
