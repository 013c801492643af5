#include "boxing/p2p_exchange.h"

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
                                const NdSbp& to, const Calibration& calibration,
                                bool detailed) {
  const std::vector<TensorSlice>& src_slices = src.Slices(from);
  const std::vector<TensorSlice>& dst_slices = dst.Slices(to);
  const Placement& sp = src.placement();
  const Placement& dp = dst.placement();
  const int64_t es = src.element_bytes();

  // Distinct source pieces, in order of first holder: ranks with the same
  // addend (P coordinates) and the same slice hold copies of one piece.
  std::vector<std::vector<int64_t>> pieces;
  std::vector<int64_t> piece_addend;
  for (int64_t id = 0; id < sp.parallel_num(); ++id) {
    const int64_t addend = PartialKey(sp, from, id);
    bool found = false;
    for (size_t k = 0; k < pieces.size() && !found; ++k) {
      if (piece_addend[k] == addend && src_slices[pieces[k][0]] == src_slices[id]) {
        pieces[k].push_back(id);
        found = true;
      }
    }
    if (!found) {
      pieces.push_back({id});
      piece_addend.push_back(addend);
    }
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
    for (const std::vector<int64_t>& holders : pieces) {
      ++piece_index;
      const int64_t bytes = OverlapCount(src_slices[holders[0]], need) * es;
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
  step.time_s = calibration.P2pTime(step.max_rank_bytes());
  if (!detailed) {
    step.bytes_sent.clear();
    step.bytes_received.clear();
    return step;
  }
  std::vector<int64_t> ranks;
  for (int p = 0; p < src.num_participants(); ++p) {
    if (step.bytes_sent[p] > 0 || step.bytes_received[p] > 0) ranks.push_back(p);
  }
  step.groups.push_back(std::move(ranks));  // participant indices; the planner maps them
  return step;
}

}  // namespace oneflow_sbp::boxing
