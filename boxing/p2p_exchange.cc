#include "boxing/p2p_exchange.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "boxing/byte_count.h"
#include "oneflow_sbp/values/check.h"

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

// The source rank holding a piece on the device of a destination rank, if
// any: a table lookup instead of a scan of the piece's holders (a piece of
// a B source on 1,024 ranks has 1,024). A device holds at most one source
// rank (both spaces number the same participants, device ranks
// ascending), so the answer is unique.
class LocalHolder {
 public:
  LocalHolder(const LayoutSpace& src, const std::vector<SourcePiece>& pieces,
              const LayoutSpace& dst)
      : dst_(dst) {
    piece_of_.assign(src.placement().parallel_num(), -1);
    for (size_t k = 0; k < pieces.size(); ++k) {
      for (int64_t h : pieces[k].holders) piece_of_[h] = static_cast<int>(k);
    }
    src_at_.assign(src.num_participants(), -1);
    for (int64_t id = 0; id < src.placement().parallel_num(); ++id) {
      src_at_[src.participant(id)] = id;
    }
  }

  // The holder of pieces[piece] on destination parallel id q's device, or
  // -1.
  int64_t Find(int piece, int64_t q) const {
    const int64_t h = src_at_[dst_.participant(q)];
    return h >= 0 && piece_of_[h] == piece ? h : -1;
  }

 private:
  const LayoutSpace& dst_;
  std::vector<int> piece_of_;    // by source parallel id
  std::vector<int64_t> src_at_;  // source parallel id by participant, or -1
};

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
void OwnByRoot(const std::vector<SourcePiece>& pieces, const LocalHolder& local_holder,
               const PieceIndex& index, const std::vector<TensorSlice>& src_slices, int64_t q,
               const TensorSlice& need, Exchange& ex) {
  for (int k : index.Candidates(need)) {
    const SourcePiece& piece = pieces[k];
    const int piece_index = k + 1;
    // Counted first: many candidates miss, and counting builds no slice.
    if (OverlapCount(src_slices[piece.holders[0]], need) == 0) continue;
    const TensorSlice region = Overlap(src_slices[piece.holders[0]], need);
    const int64_t local = local_holder.Find(k, q);
    // Rotate over copies so that senders share the load.
    const int64_t sender =
        local >= 0 ? local : piece.holders[(q + piece_index) % piece.holders.size()];
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

std::vector<Ownership> SplitOwnership(const std::vector<SourcePiece>& pieces,
                                      const LocalHolder& local_holder,
                                      const std::vector<TensorSlice>& src_slices,
                                      const std::vector<int64_t>& members,
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
      if (local_holder.Find(static_cast<int>(k), members[m]) >= 0) keeper = m;
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

void OwnAsPlanned(const std::vector<SourcePiece>& pieces, const LocalHolder& local_holder,
                  const std::vector<int64_t>& members, const std::vector<Ownership>& owners,
                  Exchange& ex) {
  for (const Ownership& o : owners) {
    const SourcePiece& piece = pieces[o.piece];
    const int64_t m = members[o.member];
    const int64_t local = local_holder.Find(o.piece, m);
    const int64_t sender =
        local >= 0 ? local : piece.holders[(m + o.piece + 1) % piece.holders.size()];
    ex.Add(sender, m, o.region);
  }
}

// --- Balanced ownership: every group of a class, every sender's load ------
//
// The split rule above decides a class's ownership on its first group only,
// and sends by a fixed rotation over a piece's copies. On (S(0),S(0)) ->
// (B,P) on [2,2] that makes rank (1,0) receive a quarter and a half
// quarter too many (1,536,000 bytes where 1,024,000 suffice). Balanced
// ownership decides each part's member position from the loads of ALL
// ranks at that position across the class's groups, and picks each
// transfer's sender among the piece's copies by least bytes sent so far.

// One part of a class's region that a single member position owns.
struct OwnedPart {
  TensorSlice region;
  int piece = 0;
  int64_t bytes = 0;
};

// Plans balanced ownership class by class on shared sender/receiver loads.
class BalancedOwner {
 public:
  BalancedOwner(LayoutSpace& src, const std::vector<SourcePiece>& pieces,
                const std::vector<TensorSlice>& src_slices, LayoutSpace& dst, int64_t budget)
      : src_(src),
        dst_(dst),
        pieces_(pieces),
        src_slices_(src_slices),
        sent_(src.num_participants(), 0),
        received_(src.num_participants(), 0),
        budget_(budget) {
    // Half the budget may go to exact search; the rest keeps the greedy
    // answer affordable after a search that ran out.
    search_budget_ = budget / 2;
    holder_participants_.resize(pieces.size());
  }

  // True once the greedy answer itself cost more than the budget: the
  // candidate is then dropped.
  bool exhausted() const { return spent_ > budget_; }

  // True if some part was kept whole (not cut g ways) so far.
  bool kept_whole() const { return kept_whole_; }

  // Owns one class's region `need` (groups of equal size g that differ
  // only on the destination's B axes) and adds its transfers to `ex`.
  // `fine`: cut every part into g balanced parts (searched exactly while
  // the budget lasts); otherwise only parts no member of the class holds
  // are cut, and whole ones go to one position.
  void OwnClass(const std::vector<const std::vector<int64_t>*>& groups, const TensorSlice& need,
                const std::vector<int>& candidates, bool fine, Exchange& ex) {
    groups_ = &groups;
    g_ = static_cast<int>(groups[0]->size());
    // Loads only grow, so the max so far is where this class starts.
    base_max_ = global_max_;
    touched_max_ = base_max_;
    MakeParts(need, candidates, fine);
    if (exhausted()) return;
    // Greedy seed: each part in order to the position with the lowest
    // resulting max load among the ranks it touches; ties: fewer bytes
    // moved (more members already holding it), then the lowest position.
    std::vector<int> greedy(parts_.size());
    for (size_t i = 0; i < parts_.size(); ++i) {
      greedy[i] = Order(i).front();
      Apply(i, greedy[i]);
    }
    best_ = greedy;
    best_cost_ = MaxLoad();
    for (size_t i = parts_.size(); i-- > 0;) Undo();
    // Exact search over positions (branch and bound on the max per-rank
    // bytes, sent and received) while the budget lasts; the greedy result
    // stays when it runs out.
    if (parts_.size() > 1 && g_ > 1) {
      current_.assign(parts_.size(), 0);
      Search(0);
    }
    for (size_t i = 0; i < parts_.size(); ++i) {
      Apply(i, best_[i]);
      for (size_t t = starts_.back(); t < log_.size(); ++t) {
        ex.Add(log_[t].sender, log_[t].receiver, parts_[i].region);
      }
    }
    global_max_ = touched_max_;
    log_.clear();
    starts_.clear();
    max_log_.clear();
  }

 private:
  struct Transfer {
    int64_t sender;    // source parallel id
    int64_t receiver;  // destination parallel id
    bool moves;        // false when the receiver's device holds the piece
  };

  void Spend(int64_t units) { spent_ += units; }
  bool SearchOver() const { return spent_ > search_budget_; }

  const std::vector<int>& HolderParticipants(int piece) {
    std::vector<int>& h = holder_participants_[piece];
    if (h.empty()) {
      for (int64_t id : pieces_[piece].holders) h.push_back(src_.participant(id));
      std::sort(h.begin(), h.end());
    }
    return h;
  }

  // The holder of `piece` on `receiver`'s device, or -1.
  int64_t LocalHolder(int piece, int64_t receiver) {
    const std::vector<int>& h = HolderParticipants(piece);
    const int r = dst_.participant(receiver);
    if (!std::binary_search(h.begin(), h.end(), r)) return -1;
    for (int64_t id : pieces_[piece].holders) {
      if (src_.participant(id) == r) return id;
    }
    return -1;
  }

  void MakeParts(const TensorSlice& need, const std::vector<int>& candidates, bool fine) {
    parts_.clear();
    min_moved_.clear();
    // Each part will fill g x groups entries of the position table below:
    // charged as it is made, so a class too large for the budget stops
    // here, before that table is allocated.
    const int64_t per_part = int64_t{g_} * static_cast<int64_t>(groups_->size());
    for (int k : candidates) {
      Spend(1);
      if (exhausted()) return;
      if (OverlapCount(src_slices_[pieces_[k].holders[0]], need) == 0) continue;
      const TensorSlice region = Overlap(src_slices_[pieces_[k].holders[0]], need);
      bool held = false;
      for (const std::vector<int64_t>* members : *groups_) {
        Spend(g_);
        for (int64_t q : *members) held = held || LocalHolder(k, q) >= 0;
      }
      if (!fine && held) {
        kept_whole_ = true;
        Spend(per_part);
        parts_.push_back(OwnedPart{region, k, MulBytes(region.elem_cnt(), src_.element_bytes())});
        continue;
      }
      for (int64_t part = 0; part < g_ && !exhausted(); ++part) {
        const std::optional<TensorSlice> sub = BoxPart(region, g_, part);
        if (!sub) continue;
        Spend(per_part);
        parts_.push_back(OwnedPart{*sub, k, MulBytes(sub->elem_cnt(), src_.element_bytes())});
      }
    }
    if (exhausted()) return;
    // Bytes each part must move at least (its cheapest position), summed
    // from the back: the search's lower bound on what is left.
    const size_t groups = groups_->size();
    local_.assign(parts_.size() * g_ * groups, -1);
    orders_.resize(parts_.size());
    std::vector<int64_t> least(parts_.size(), 0);
    for (size_t i = 0; i < parts_.size(); ++i) {
      if (exhausted()) return;
      int64_t fewest = INT64_MAX;
      for (int m = 0; m < g_; ++m) {
        int64_t moved = 0;
        for (size_t gi = 0; gi < groups; ++gi) {
          const int64_t h = LocalHolder(parts_[i].piece, (*(*groups_)[gi])[m]);
          local_[(i * g_ + m) * groups + gi] = h;
          if (h < 0) moved = AddBytes(moved, parts_[i].bytes);
        }
        fewest = std::min(fewest, moved);
      }
      least[i] = fewest;
    }
    min_moved_.assign(parts_.size() + 1, 0);
    for (size_t i = parts_.size(); i-- > 0;) min_moved_[i] = AddBytes(min_moved_[i + 1], least[i]);
    class_ranks_ = static_cast<int64_t>(groups_->size()) * g_;
    class_received_ = 0;
    for (const std::vector<int64_t>* members : *groups_) {
      for (int64_t q : *members) {
        class_received_ = AddBytes(class_received_, received_[dst_.participant(q)]);
      }
    }
  }

  // Gives part `i` to position `m` in every group: each receiver not
  // holding it gets it from the copy that has sent least so far (ties: the
  // lowest parallel id). Logged for Undo.
  void Apply(size_t i, int m) {
    const OwnedPart& part = parts_[i];
    const std::vector<int64_t>& holders = pieces_[part.piece].holders;
    const size_t groups = groups_->size();
    starts_.push_back(log_.size());
    for (size_t gi = 0; gi < groups; ++gi) {
      const int64_t q = (*(*groups_)[gi])[m];
      const int64_t local = local_[(i * g_ + m) * groups + gi];
      if (local >= 0) {
        log_.push_back(Transfer{local, q, false});
        continue;
      }
      int64_t sender = holders[0];
      for (int64_t h : holders) {
        if (sent_[src_.participant(h)] < sent_[src_.participant(sender)]) sender = h;
      }
      Spend(static_cast<int64_t>(holders.size()));
      const int s = src_.participant(sender);
      const int r = dst_.participant(q);
      // Distinct devices here: a receiver holding the piece was local.
      sent_[s] = AddBytes(sent_[s], part.bytes);
      received_[r] = AddBytes(received_[r], part.bytes);
      class_received_ = AddBytes(class_received_, part.bytes);
      touched_max_ = std::max({touched_max_, sent_[s], received_[r]});
      log_.push_back(Transfer{sender, q, true});
    }
    max_log_.push_back(touched_max_);
  }

  void Undo() {
    const size_t i = starts_.size() - 1;
    for (size_t k = starts_.back(); k < log_.size(); ++k) {
      const Transfer& t = log_[k];
      if (!t.moves) continue;
      sent_[src_.participant(t.sender)] -= parts_[i].bytes;
      received_[dst_.participant(t.receiver)] -= parts_[i].bytes;
      class_received_ -= parts_[i].bytes;
    }
    log_.resize(starts_.back());
    starts_.pop_back();
    max_log_.pop_back();
    touched_max_ = max_log_.empty() ? base_max_ : max_log_.back();
  }

  // The largest load so far (loads only grow as parts are added).
  int64_t MaxLoad() const { return touched_max_; }

  // Positions for part `i`, best first by the greedy key (see OwnClass).
  // Kept per part (orders_[i]) so the search's deeper levels do not
  // overwrite a level's order while it is being walked.
  const std::vector<int>& Order(size_t i) {
    keyed_.clear();
    for (int m = 0; m < g_; ++m) {
      const int64_t before = class_received_;
      Apply(i, m);
      keyed_.emplace_back(MaxLoad(), class_received_ - before, m);
      Undo();
    }
    std::sort(keyed_.begin(), keyed_.end());
    std::vector<int>& order = orders_[i];
    order.clear();
    for (const auto& k : keyed_) order.push_back(std::get<2>(k));
    return order;
  }

  // A lower bound on the max load of any completion: the loads so far, and
  // the class's receivers sharing at least the bytes still to move.
  int64_t LowerBound(size_t next) const {
    const int64_t total = AddBytes(class_received_, min_moved_[next]);
    const int64_t share = total / class_ranks_ + (total % class_ranks_ != 0 ? 1 : 0);
    return std::max(MaxLoad(), share);
  }

  void Search(size_t i) {
    if (SearchOver()) return;
    if (i == parts_.size()) {
      if (MaxLoad() < best_cost_) {
        best_cost_ = MaxLoad();
        best_ = current_;
      }
      return;
    }
    for (int m : Order(i)) {
      Apply(i, m);
      current_[i] = m;
      if (LowerBound(i + 1) < best_cost_) Search(i + 1);
      Undo();
      if (SearchOver()) return;
    }
  }

 private:
  LayoutSpace& src_;
  LayoutSpace& dst_;
  const std::vector<SourcePiece>& pieces_;
  const std::vector<TensorSlice>& src_slices_;
  std::vector<int64_t> sent_;      // by participant
  std::vector<int64_t> received_;  // by participant
  int64_t budget_;
  int64_t search_budget_ = 0;
  int64_t spent_ = 0;
  bool kept_whole_ = false;
  std::vector<std::vector<int>> holder_participants_;

  const std::vector<const std::vector<int64_t>*>* groups_ = nullptr;
  int g_ = 1;
  std::vector<OwnedPart> parts_;
  // The holder on the receiver's device, or -1, by (part, position, group).
  std::vector<int64_t> local_;
  std::vector<int64_t> min_moved_;
  int64_t class_ranks_ = 1;
  int64_t class_received_ = 0;
  int64_t global_max_ = 0;  // over every rank, after the classes so far
  int64_t base_max_ = 0;    // global_max_ when this class started
  int64_t touched_max_ = 0;
  std::vector<int64_t> max_log_;
  std::vector<std::tuple<int64_t, int64_t, int>> keyed_;
  std::vector<std::vector<int>> orders_;
  // Transfers of the parts applied so far, part i's from starts_[i].
  std::vector<Transfer> log_;
  std::vector<size_t> starts_;
  std::vector<int> current_;
  std::vector<int> best_;
  int64_t best_cost_ = INT64_MAX;
};

}  // namespace

int64_t BalancedOwnershipBudget(int64_t src_ranks, int64_t dst_ranks, bool partial_destination) {
  if (!partial_destination) return kBalancedSendersWork;
  int64_t pairs = 0;
  if (__builtin_mul_overflow(src_ranks, dst_ranks, &pairs) ||
      __builtin_mul_overflow(pairs, kBalancedOwnershipWorkPerPair, &pairs) ||
      __builtin_add_overflow(pairs, kBalancedOwnershipWorkFloor, &pairs)) {
    return INT64_MAX;
  }
  return pairs;
}

BoxingStep PointToPointExchange(LayoutSpace& src, const NdSbp& from, LayoutSpace& dst,
                                const NdSbp& to, const Calibration& calibration, bool detailed,
                                PartialOwnership ownership) {
  // Pieces of a partial source are summed on arrival; a P(max)/P(min)
  // source would be read as if it were B and give a wrong value, so the
  // planner reduces those by collectives first (P2pCanSend in planner.cc).
  OFS_CHECK(!from.any_partial() || from.any_partial_sum())
      << "PointToPointExchange from a max/min partial layout " << from.ToString();
  const std::vector<TensorSlice>& src_slices = src.Slices(from);
  const std::vector<TensorSlice>& dst_slices = dst.Slices(to);
  const Placement& dp = dst.placement();
  const std::vector<SourcePiece> pieces = DistinctPieces(src.placement(), from, src_slices);
  const PieceIndex index(pieces, src_slices);
  const LocalHolder local_holder(src, pieces, dst);

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
  // Classes in order of their first group, each with its groups in order.
  std::vector<int64_t> class_order;
  std::map<int64_t, std::vector<const std::vector<int64_t>*>> class_groups;
  for (int64_t key : group_order) {
    const std::vector<int64_t>& members = group_of[key];
    const TensorSlice& need = dst_slices[members[0]];
    if (need.elem_cnt() == 0) continue;
    OwnByRoot(pieces, local_holder, index, src_slices, members[0], need, root);
    std::vector<const std::vector<int64_t>*>& in_class = class_groups[class_of[key]];
    if (in_class.empty()) class_order.push_back(class_of[key]);
    in_class.push_back(&members);
    if (members.size() > 1 && ownership == PartialOwnership::kCheaperOfRootOrSplit) {
      any_split = true;
      auto [it, fresh] = class_owners.try_emplace(class_of[key]);
      if (fresh) it->second = SplitOwnership(pieces, local_holder, src_slices, members, need);
      OwnAsPlanned(pieces, local_holder, members, it->second, split);
    } else {
      OwnByRoot(pieces, local_holder, index, src_slices, members[0], need, split);
    }
  }
  // Candidates in order, the cheapest kept (ties: the earlier one, so a
  // plan changes only where a later candidate is strictly cheaper): root,
  // split, balanced over whole parts, balanced over parts cut g ways. A
  // balanced candidate that runs out of budget is dropped. P on a mesh
  // axis of size > 1 gives every group that size (any_split), so without
  // it every group has one member: split is root, and balanced differs
  // from root only by its choice of senders (one candidate, a small
  // constant budget: large meshes keep the rotation).
  std::vector<Exchange> candidates;
  candidates.push_back(std::move(root));
  if (any_split) candidates.push_back(std::move(split));
  // Without P every group has one member, so balanced ownership can only
  // choose other senders: none to choose when every piece has one copy.
  bool copies = false;
  for (const SourcePiece& piece : pieces) copies = copies || piece.holders.size() > 1;
  if (ownership == PartialOwnership::kCheaperOfRootOrSplit && (any_split || copies)) {
    const int64_t budget = BalancedOwnershipBudget(src.placement().parallel_num(),
                                                   dp.parallel_num(), any_split);
    // The fine candidate differs only where the first kept a part whole.
    bool kept_whole = true;
    for (bool fine : {false, true}) {
      if (fine && (!any_split || !kept_whole)) break;
      Exchange balanced(src, dst, detailed);
      BalancedOwner owner(src, pieces, src_slices, dst, budget);
      for (int64_t c : class_order) {
        const std::vector<const std::vector<int64_t>*>& groups = class_groups[c];
        const TensorSlice& need = dst_slices[(*groups[0])[0]];
        owner.OwnClass(groups, need, index.Candidates(need), fine, balanced);
        if (owner.exhausted()) break;
      }
      kept_whole = owner.kept_whole() || owner.exhausted();
      if (!owner.exhausted()) candidates.push_back(std::move(balanced));
    }
  }
  size_t pick = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (candidates[i].max_rank_bytes() < candidates[pick].max_rank_bytes()) pick = i;
  }
  Exchange& best = candidates[pick];

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
