#include "boxing/p2p_exchange.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "boxing/byte_count.h"
#include "absl/container/flat_hash_map.h"

namespace oneflow_sbp::boxing {
namespace {

// Mesh coordinates of `id` on the axes where `nd` is (or is not) P, packed
// as one key.
int64_t AxesKey(const Placement& p, const NdSbp& nd, int64_t id, bool partial_axes) {
  const MeshCoord c = p.CoordinateOf(id);
  int64_t key = 0;
  for (int i = 0; i < nd.size(); ++i) {
    if (nd[i].is_partial_sum() == partial_axes) key = key * p.hierarchy()[i] + c[i];
  }
  return key;
}

// Mesh coordinates of `id` on the axes where `nd` splits.
int64_t SplitAxesKey(const Placement& p, const NdSbp& nd, int64_t id) {
  const MeshCoord c = p.CoordinateOf(id);
  int64_t key = 0;
  for (int i = 0; i < nd.size(); ++i) {
    if (nd[i].is_split()) key = key * p.hierarchy()[i] + c[i];
  }
  return key;
}

// Ranks with the same addend (P coordinates) and the same slice hold copies
// of one piece; pieces are listed in order of their first holder.
struct SourcePiece {
  std::vector<int64_t> holders;  // source parallel ids
  int64_t addend = 0;
};

std::vector<SourcePiece> DistinctPieces(const Placement& sp, const NdSbp& from,
                                        const std::vector<TensorSlice>& slices) {
  std::vector<SourcePiece> pieces;
  // (addend, slice bounds) -> piece: a hash lookup, not a scan of the
  // pieces so far, which was quadratic in the rank count.
  absl::flat_hash_map<std::vector<int64_t>, size_t> piece_of;
  std::vector<int64_t> key;
  for (int64_t id = 0; id < sp.parallel_num(); ++id) {
    const int64_t addend = AxesKey(sp, from, id, /*partial_axes=*/true);
    key.assign(1, addend);
    for (IndexRange r : slices[id].ranges()) {
      key.push_back(r.begin);
      key.push_back(r.end);
    }
    auto [it, fresh] = piece_of.try_emplace(key, pieces.size());
    if (fresh) {
      pieces.push_back(SourcePiece{{id}, addend});
    } else {
      pieces[it->second].holders.push_back(id);
    }
  }
  return pieces;
}

TensorSlice Overlap(const TensorSlice& a, const TensorSlice& b) { return a.Intersect(b); }

// Accumulates one candidate exchange: pieces (when detailed) and bytes.
class Exchange {
 public:
  Exchange(LayoutSpace& src, LayoutSpace& dst, bool detailed)
      : src_(src),
        dst_(dst),
        detailed_(detailed),
        sent_(src.num_participants(), 0),
        received_(src.num_participants(), 0) {}

  // `receiver` (destination parallel id) gets `region` from source rank
  // `sender` (source parallel id).
  void Add(int64_t sender, int64_t receiver, const TensorSlice& region) {
    const int s = src_.participant(sender);
    const int r = dst_.participant(receiver);
    if (s != r) {
      const int64_t bytes = MulBytes(region.elem_cnt(), src_.element_bytes());
      sent_[s] = AddBytes(sent_[s], bytes);
      received_[r] = AddBytes(received_[r], bytes);
    }
    if (detailed_) pieces_.push_back(P2pPiece{s, r, region});
  }

  int64_t max_rank_bytes() const {
    int64_t m = 0;
    for (size_t p = 0; p < sent_.size(); ++p) m = std::max({m, sent_[p], received_[p]});
    return m;
  }

  void MoveInto(BoxingStep* step) {
    step->bytes_sent = std::move(sent_);
    step->bytes_received = std::move(received_);
    step->pieces = std::move(pieces_);
  }

 private:
  LayoutSpace& src_;
  LayoutSpace& dst_;
  bool detailed_;
  std::vector<int64_t> sent_;
  std::vector<int64_t> received_;
  std::vector<P2pPiece> pieces_;
};

// True if source rank `holder` is the same device as destination rank `q`.
bool SameDevice(LayoutSpace& src, int64_t holder, LayoutSpace& dst, int64_t q) {
  // Both spaces number the same participants (device ranks, ascending), so
  // equal participants are equal devices: a table lookup, not RankOf.
  return src.participant(holder) == dst.participant(q);
}

// Finds the pieces that may overlap a region without scanning them all
// (a scan per receiver made exchanges O(ranks^2) even where each receiver
// needs few pieces). Pieces are bucketed by their range on one dim, the one
// with the most distinct ranges, when those ranges are equal or disjoint
// (as balanced splits make them); otherwise every piece is a candidate.
class PieceIndex {
 public:
  PieceIndex(const std::vector<SourcePiece>& pieces, const std::vector<TensorSlice>& slices) {
    std::vector<int> live;
    for (size_t k = 0; k < pieces.size(); ++k) {
      if (slices[pieces[k].holders[0]].elem_cnt() != 0) live.push_back(static_cast<int>(k));
    }
    all_ = live;
    const int rank = slices.empty() ? 0 : slices[0].rank();
    size_t best = 1;
    for (int d = 0; d < rank; ++d) {
      std::vector<IndexRange> ranges;
      for (int k : live) ranges.push_back(slices[pieces[k].holders[0]].range(d));
      std::sort(ranges.begin(), ranges.end(), [](IndexRange a, IndexRange b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
      });
      ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
      bool disjoint = true;
      for (size_t i = 1; i < ranges.size() && disjoint; ++i) {
        disjoint = ranges[i].begin >= ranges[i - 1].end;
      }
      if (!disjoint || ranges.size() <= best) continue;
      best = ranges.size();
      dim_ = d;
      leaves_ = std::move(ranges);
    }
    if (dim_ < 0) return;
    at_leaf_.assign(leaves_.size(), {});
    for (int k : live) {
      const IndexRange r = slices[pieces[k].holders[0]].range(dim_);
      at_leaf_[Leaf(r.begin)].push_back(k);
    }
  }

  // Piece indices, ascending, whose slices may overlap `region`.
  std::vector<int> Candidates(const TensorSlice& region) const {
    if (dim_ < 0) return all_;
    std::vector<int> out;
    const IndexRange r = region.range(dim_);
    if (r.empty()) return out;
    for (size_t i = Leaf(r.begin); i < leaves_.size() && leaves_[i].begin < r.end; ++i) {
      out.insert(out.end(), at_leaf_[i].begin(), at_leaf_[i].end());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  // The last leaf that begins at or before `x` (the first if none does).
  size_t Leaf(int64_t x) const {
    auto it = std::upper_bound(leaves_.begin(), leaves_.end(), x,
                               [](int64_t v, IndexRange l) { return v < l.begin; });
    return it == leaves_.begin() ? 0 : static_cast<size_t>(it - leaves_.begin() - 1);
  }

  int dim_ = -1;
  std::vector<IndexRange> leaves_;
  std::vector<std::vector<int>> at_leaf_;
  std::vector<int> all_;
};

// The old rule, also the only one without destination P: the member at P
// coordinate 0 receives everything, the other members hold zeros.
void OwnByRoot(LayoutSpace& src, const std::vector<SourcePiece>& pieces,
               const PieceIndex& index, const std::vector<TensorSlice>& src_slices,
               LayoutSpace& dst, int64_t q, const TensorSlice& need, Exchange& ex) {
  for (int k : index.Candidates(need)) {
    const SourcePiece& piece = pieces[k];
    const int piece_index = k + 1;
    // Counted first: many candidates miss, and counting builds no slice.
    if (OverlapCount(src_slices[piece.holders[0]], need) == 0) continue;
    const TensorSlice region = Overlap(src_slices[piece.holders[0]], need);
    auto local = std::find_if(piece.holders.begin(), piece.holders.end(),
                              [&](int64_t h) { return SameDevice(src, h, dst, q); });
    // Rotate over copies so that senders share the load.
    const int64_t sender = local != piece.holders.end()
                               ? *local
                               : piece.holders[(q + piece_index) % piece.holders.size()];
    ex.Add(sender, q, region);
  }
}

// Part `part` of `box` cut into `parts` along its first dim with extent >=
// 2, or nullopt for an empty part. A box of single elements (a scalar
// included) is not cut: part 0 is all of it.
std::optional<TensorSlice> BoxPart(const TensorSlice& box, int64_t parts, int64_t part) {
  for (int d = 0; d < box.rank(); ++d) {
    if (box.range(d).size() < 2) continue;
    TensorSlice out = box;
    out.set_range(d, BalancedPart(box.range(d), parts, part));
    if (out.elem_cnt() == 0) return std::nullopt;
    return out;
  }
  if (part == 0) return box;
  return std::nullopt;
}

// Who owns which part of a P group's region: (region, source piece, the
// owner's position in the group). Computed on the first group of a class
// of groups that differ only on the destination's B axes, and reused by
// the others, so B copies hold identical addends (as B requires) while
// each group still takes the cheapest sender for its own members.
struct Ownership {
  TensorSlice region;
  int piece = 0;
  int member = 0;
};

std::vector<Ownership> SplitOwnership(LayoutSpace& src, const std::vector<SourcePiece>& pieces,
                                      const std::vector<TensorSlice>& src_slices,
                                      LayoutSpace& dst, const std::vector<int64_t>& members,
                                      const TensorSlice& need) {
  const int64_t g = static_cast<int64_t>(members.size());
  std::vector<Ownership> owners;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const SourcePiece& piece = pieces[k];
    const int piece_index = static_cast<int>(k) + 1;
    const TensorSlice region = Overlap(src_slices[piece.holders[0]], need);
    if (region.elem_cnt() == 0) continue;
    int keeper = -1;
    for (int m = 0; m < g && keeper < 0; ++m) {
      for (int64_t h : piece.holders) {
        if (SameDevice(src, h, dst, members[m])) keeper = m;
      }
    }
    if (keeper >= 0) {
      owners.push_back(Ownership{region, static_cast<int>(k), keeper});
      continue;
    }
    for (int64_t part = 0; part < g; ++part) {
      const std::optional<TensorSlice> sub = BoxPart(region, g, part);
      if (!sub) continue;
      owners.push_back(Ownership{*sub, static_cast<int>(k),
                                 static_cast<int>((part + piece_index) % g)});
    }
  }
  return owners;
}

void OwnAsPlanned(LayoutSpace& src, const std::vector<SourcePiece>& pieces, LayoutSpace& dst,
                  const std::vector<int64_t>& members, const std::vector<Ownership>& owners,
                  Exchange& ex) {
  for (const Ownership& o : owners) {
    const SourcePiece& piece = pieces[o.piece];
    const int64_t m = members[o.member];
    auto local = std::find_if(piece.holders.begin(), piece.holders.end(),
                              [&](int64_t h) { return SameDevice(src, h, dst, m); });
    const int64_t sender = local != piece.holders.end()
                               ? *local
                               : piece.holders[(m + o.piece + 1) % piece.holders.size()];
    ex.Add(sender, m, o.region);
  }
}

}  // namespace

BoxingStep PointToPointExchange(LayoutSpace& src, const NdSbp& from, LayoutSpace& dst,
                                const NdSbp& to, const Calibration& calibration, bool detailed,
                                PartialOwnership ownership) {
  const std::vector<TensorSlice>& src_slices = src.Slices(from);
  const std::vector<TensorSlice>& dst_slices = dst.Slices(to);
  const Placement& dp = dst.placement();
  const std::vector<SourcePiece> pieces = DistinctPieces(src.placement(), from, src_slices);
  const PieceIndex index(pieces, src_slices);

  // Destination ranks by P group (same coordinates on the non-P axes),
  // groups in order of their first member; each group's class is its
  // coordinates on the S axes (groups of a class differ on B axes only).
  std::map<int64_t, std::vector<int64_t>> group_of;
  std::vector<int64_t> group_order;
  std::map<int64_t, int64_t> class_of;
  for (int64_t q = 0; q < dp.parallel_num(); ++q) {
    const int64_t key = AxesKey(dp, to, q, /*partial_axes=*/false);
    auto [it, fresh] = group_of.try_emplace(key);
    if (fresh) {
      group_order.push_back(key);
      class_of[key] = SplitAxesKey(dp, to, q);
    }
    it->second.push_back(q);
  }
  Exchange root(src, dst, detailed);
  Exchange split(src, dst, detailed);
  bool any_split = false;
  std::map<int64_t, std::vector<Ownership>> class_owners;
  for (int64_t key : group_order) {
    const std::vector<int64_t>& members = group_of[key];
    const TensorSlice& need = dst_slices[members[0]];
    if (need.elem_cnt() == 0) continue;
    OwnByRoot(src, pieces, index, src_slices, dst, members[0], need, root);
    if (members.size() > 1 && ownership == PartialOwnership::kCheaperOfRootOrSplit) {
      any_split = true;
      auto [it, fresh] = class_owners.try_emplace(class_of[key]);
      if (fresh) it->second = SplitOwnership(src, pieces, src_slices, dst, members, need);
      OwnAsPlanned(src, pieces, dst, members, it->second, split);
    } else {
      OwnByRoot(src, pieces, index, src_slices, dst, members[0], need, split);
    }
  }
  Exchange& best = any_split && split.max_rank_bytes() < root.max_rank_bytes() ? split : root;

  BoxingStep step;
  step.kind = StepKind::kPointToPoint;
  step.result = to;
  step.on_destination = true;
  step.sum_pieces = from.any_partial_sum();
  best.MoveInto(&step);
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
