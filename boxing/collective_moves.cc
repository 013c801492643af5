#include "boxing/collective_moves.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "boxing/byte_count.h"
#include "oneflow_sbp/check.h"
#include "oneflow_sbp/hierarchy_reduction.h"

namespace oneflow_sbp::boxing {

LayoutSpace::LayoutSpace(const Shape& shape, DataType dtype, const Placement& placement,
                         std::vector<int> participant_index, int num_participants)
    : shape_(shape),
      element_bytes_(ByteSizeOf(dtype)),
      placement_(placement),
      participant_index_(std::move(participant_index)),
      num_participants_(num_participants) {}

const std::vector<TensorSlice>& LayoutSpace::Slices(const NdSbp& nd_sbp) {
  auto [it, fresh] = slices_.try_emplace(nd_sbp.packed());
  if (fresh) {
    it->second.reserve(placement_.parallel_num());
    for (int64_t id = 0; id < placement_.parallel_num(); ++id) {
      it->second.push_back(
          SliceAt(shape_, nd_sbp, placement_.hierarchy(), placement_.CoordinateOf(id)));
    }
  }
  return it->second;
}

const std::vector<std::vector<int64_t>>& LayoutSpace::Groups(MeshAxisMask axes) {
  auto [it, fresh] = groups_.try_emplace(axes);
  if (fresh) it->second = placement_.SubGroups(axes);
  return it->second;
}

namespace {

}  // namespace

int64_t OverlapCount(const TensorSlice& a, const TensorSlice& b) {
  int64_t n = 1;
  for (int d = 0; d < a.rank(); ++d) {
    const int64_t lo = std::max(a.range(d).begin, b.range(d).begin);
    const int64_t hi = std::min(a.range(d).end, b.range(d).end);
    if (hi <= lo) return 0;
    n *= hi - lo;
  }
  return n;
}

namespace {

bool Contains(const TensorSlice& outer, const TensorSlice& inner) {
  if (inner.elem_cnt() == 0) return true;
  for (int d = 0; d < outer.rank(); ++d) {
    if (inner.range(d).begin < outer.range(d).begin || inner.range(d).end > outer.range(d).end) {
      return false;
    }
  }
  return true;
}

// The smallest box holding every slice of the group.
TensorSlice BoundingBox(const std::vector<TensorSlice>& slices,
                        const std::vector<int64_t>& group) {
  TensorSlice box = slices[group[0]];
  for (int64_t m : group) {
    for (int d = 0; d < box.rank(); ++d) {
      const IndexRange r = slices[m].range(d);
      if (r.empty()) continue;
      IndexRange b = box.range(d);
      if (b.empty()) {
        b = r;
      } else {
        b.begin = std::min(b.begin, r.begin);
        b.end = std::max(b.end, r.end);
      }
      box.set_range(d, b);
    }
  }
  return box;
}

bool AllEqual(const std::vector<TensorSlice>& slices, const std::vector<int64_t>& group) {
  for (int64_t m : group) {
    if (slices[m] != slices[group[0]]) return false;
  }
  return true;
}

// True if no two non-empty slices of the group overlap. Pairwise, that
// is O(n^2) in the group size (seconds for one 8,192-rank group). Slices
// made by balanced splits have, on every dim, ranges that are equal or
// disjoint; then two slices overlap exactly when their ranges are equal
// on every dim, which a hash set finds in O(n). Groups without that
// structure are checked pairwise.
bool PairwiseDisjoint(const std::vector<TensorSlice>& slices, const std::vector<int64_t>& group) {
  std::vector<const TensorSlice*> live;
  for (int64_t m : group) {
    if (slices[m].elem_cnt() != 0) live.push_back(&slices[m]);
  }
  if (live.size() < 2) return true;
  // Small groups (every mesh of a normal cluster axis): pairs are cheaper
  // than sorting and hashing.
  bool structured = live.size() > 32;
  for (int d = 0; d < live[0]->rank() && structured; ++d) {
    std::vector<IndexRange> ranges;
    for (const TensorSlice* t : live) ranges.push_back(t->range(d));
    std::sort(ranges.begin(), ranges.end(), [](IndexRange a, IndexRange b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
    for (size_t i = 1; i < ranges.size() && structured; ++i) {
      structured = ranges[i].begin >= ranges[i - 1].end;
    }
  }
  if (structured) {
    absl::flat_hash_set<std::vector<int64_t>> seen;
    std::vector<int64_t> key;
    for (const TensorSlice* t : live) {
      key.clear();
      for (IndexRange r : t->ranges()) {
        key.push_back(r.begin);
        key.push_back(r.end);
      }
      if (!seen.insert(key).second) return false;
    }
    return true;
  }
  for (size_t a = 0; a < live.size(); ++a) {
    for (size_t b = a + 1; b < live.size(); ++b) {
      if (OverlapCount(*live[a], *live[b]) != 0) return false;
    }
  }
  return true;
}

// True if the group's slices are pairwise disjoint and exactly cover `box`.
bool Tiles(const std::vector<TensorSlice>& slices, const std::vector<int64_t>& group,
           const TensorSlice& box) {
  int64_t total = 0;
  for (int64_t m : group) {
    const TensorSlice& s = slices[m];
    if (!Contains(box, s)) return false;
    // Slices inside the box that sum past it overlap; stopping here also
    // keeps the sum of huge (hostile) extents from overflowing.
    if (s.elem_cnt() > box.elem_cnt() - total) return false;
    total += s.elem_cnt();
  }
  // Cheap test first: disjoint slices inside the box sum to its size.
  return total == box.elem_cnt() && PairwiseDisjoint(slices, group);
}

// The SBP every axis of `axes` carries in `layout`, when changing them all
// to `to` is a well-formed move: they agree, the SBP changes, and a split
// over a flattened group equals the nested one. Nullopt otherwise.
std::optional<SbpParallel> MoveSource(const LayoutSpace& space, const NdSbp& layout,
                                      MeshAxisMask axes, SbpParallel to) {
  const absl::Span<const int64_t> h = space.placement().hierarchy();
  SbpParallel from;
  int64_t flat = 1;
  int count = 0;
  for (int i = 0; i < layout.size(); ++i) {
    if (!(axes & AxisBit(i))) continue;
    if (count > 0 && layout[i] != from) return std::nullopt;
    from = layout[i];
    flat *= h[i];
    ++count;
  }
  if (count == 0 || from == to || from.is_unset() || to.is_unset()) return std::nullopt;
  // Partials of another kind (P(max), P(min)): reduced by their own kind
  // (all_reduce / reduce_scatter max or min) and made from copies only
  // (B -> P(max): every copy is a candidate). Never converted into one
  // another, and a shard is never padded to a P(max) (that would need a
  // -inf fill): both go through B.
  if (from.is_partial() && to.is_partial()) return std::nullopt;
  if (from.is_split() && to.is_partial() && !to.is_partial_sum()) return std::nullopt;
  if (count > 1) {
    // Flattened group: the nested split must equal the flat one.
    for (SbpParallel s : {from, to}) {
      if (s.is_split() && !CanMergeSplit(space.shape().dim(s.split_axis()), flat)) {
        return std::nullopt;
      }
    }
  }
  return from;
}

StepKind MoveKind(SbpParallel from, SbpParallel to) {
  if (from.is_split() && to.is_broadcast()) return StepKind::kAllGather;
  if (from.is_partial() && to.is_split()) return StepKind::kReduceScatter;
  if (from.is_partial() && to.is_broadcast()) return StepKind::kAllReduce;
  if (from.is_split() && to.is_split()) return StepKind::kAllToAll;
  if (from.is_broadcast() && to.is_split()) return StepKind::kLocalSlice;
  if (from.is_broadcast() && to.is_partial()) return StepKind::kLocalPartial;
  return StepKind::kLocalScatter;  // S -> P
}

// One mesh group of a collective move: its members (parallel ids), their
// slices before and after, and the box the old slices span.
struct GroupMove {
  StepKind kind;
  const std::vector<TensorSlice>& old_slices;
  const std::vector<TensorSlice>& new_slices;
  const std::vector<int64_t>& members;
  TensorSlice box;
};

// Whether the move is exact on the group. Validity per the table in the
// header.
bool IsExact(const GroupMove& group) {
  const std::vector<int64_t>& g = group.members;
  const bool old_copies = AllEqual(group.old_slices, g);
  const bool old_tiles = Tiles(group.old_slices, g, group.box);
  switch (group.kind) {
    case StepKind::kAllGather:
      return old_tiles && AllEqual(group.new_slices, g) && group.new_slices[g[0]] == group.box;
    case StepKind::kReduceScatter:
      return old_copies && Tiles(group.new_slices, g, group.box);
    case StepKind::kAllReduce:
      return old_copies && AllEqual(group.new_slices, g) && group.new_slices[g[0]] == group.box;
    case StepKind::kAllToAll:
      return old_tiles && Tiles(group.new_slices, g, group.box);
    case StepKind::kLocalSlice: {
      bool exact = old_copies;
      for (int64_t member : g) exact = exact && Contains(group.box, group.new_slices[member]);
      return exact;
    }
    case StepKind::kLocalPartial:
      return old_copies && AllEqual(group.new_slices, g) && group.new_slices[g[0]] == group.box;
    case StepKind::kLocalScatter:
      return old_tiles && AllEqual(group.new_slices, g) && group.new_slices[g[0]] == group.box;
    case StepKind::kPointToPoint:
      return false;
  }
  return false;
}

struct MemberBytes {
  int64_t sent = 0;
  int64_t received = 0;
};

// What member k of the group sends and receives, where `total` is the
// box's bytes; nothing for local steps.
MemberBytes MemberTraffic(const GroupMove& group, int64_t element_bytes, int64_t total, int k) {
  const std::vector<int64_t>& g = group.members;
  const int n = static_cast<int>(g.size());
  auto chunk = [&](const std::vector<TensorSlice>& s, int j) {
    return MulBytes(s[g[(j % n + n) % n]].elem_cnt(), element_bytes);
  };
  MemberBytes bytes;
  switch (group.kind) {
    case StepKind::kAllGather:  // ring: forward all but the next rank's chunk
      bytes.sent = total - chunk(group.old_slices, k + 1);
      bytes.received = total - chunk(group.old_slices, k);
      break;
    case StepKind::kReduceScatter:  // ring: rank k ends with its own chunk
      bytes.sent = total - chunk(group.new_slices, k);
      bytes.received = total - chunk(group.new_slices, k - 1);
      break;
    case StepKind::kAllReduce: {
      // Reduce-scatter then all-gather over n balanced chunks of the
      // group's elements.
      auto part = [&](int j) {
        const int jj = (j % n + n) % n;
        return MulBytes(BalancedPart(IndexRange{0, group.box.elem_cnt()}, n, jj).size(),
                        element_bytes);
      };
      bytes.sent = AddBytes(total - part(k), total - part(k + 1));
      bytes.received = AddBytes(total - part(k - 1), total - part(k));
      break;
    }
    case StepKind::kAllToAll: {
      // Both layouts tile the box (checked by IsExact), so what rank k sends
      // to the others is its old slice less what it keeps, and what it
      // receives its new slice less the same: no pass over the group.
      const int64_t kept = OverlapCount(group.old_slices[g[k]], group.new_slices[g[k]]);
      bytes.sent = MulBytes(group.old_slices[g[k]].elem_cnt() - kept, element_bytes);
      bytes.received = MulBytes(group.new_slices[g[k]].elem_cnt() - kept, element_bytes);
      break;
    }
    default:
      break;
  }
  return bytes;
}

}  // namespace

std::optional<BoxingStep> CollectiveMove(LayoutSpace& space, const NdSbp& layout,
                                         MeshAxisMask axes, SbpParallel to,
                                         const Calibration& calibration, bool detailed) {
  const std::optional<SbpParallel> from = MoveSource(space, layout, axes, to);
  if (!from) return std::nullopt;
  NdSbp next = layout;
  for (int i = 0; i < layout.size(); ++i) {
    if (axes & AxisBit(i)) next.set(i, to);
  }
  if (next.mixes_partial_kinds()) return std::nullopt;  // (P(max), P) is no value
  const StepKind kind = MoveKind(*from, to);

  const std::vector<TensorSlice>& old_slices = space.Slices(layout);
  const std::vector<TensorSlice>& new_slices = space.Slices(next);
  const std::vector<std::vector<int64_t>>& groups = space.Groups(axes);
  const int64_t es = space.element_bytes();

  BoxingStep step;
  step.kind = kind;
  step.axes = axes;
  step.from = *from;
  step.to = to;
  step.result = next;
  if (detailed) {
    step.bytes_sent.assign(space.num_participants(), 0);
    step.bytes_received.assign(space.num_participants(), 0);
  }
  int64_t max_rank_bytes = 0;

  for (const std::vector<int64_t>& g : groups) {
    const GroupMove move{kind, old_slices, new_slices, g, BoundingBox(old_slices, g)};
    if (!IsExact(move)) return std::nullopt;

    // Byte counts saturate (byte_count.h); a saturated total makes every
    // count of the step saturated, so the planner refuses the plan.
    const int64_t total = MulBytes(move.box.elem_cnt(), es);
    for (int k = 0; k < static_cast<int>(g.size()); ++k) {
      const int p = detailed ? space.participant(g[k]) : 0;
      MemberBytes bytes = MemberTraffic(move, es, total, k);
      if (total >= kSaturatedBytes && !IsLocal(kind)) {
        bytes.sent = bytes.received = kSaturatedBytes;
      }
      max_rank_bytes = std::max({max_rank_bytes, bytes.sent, bytes.received});
      if (detailed) {
        step.bytes_sent[p] = AddBytes(step.bytes_sent[p], bytes.sent);
        step.bytes_received[p] = AddBytes(step.bytes_received[p], bytes.received);
      }
    }
    if (detailed) {
      std::vector<int64_t> ranks;
      ranks.reserve(g.size());
      for (int64_t m : g) ranks.push_back(space.placement().RankOf(m));
      step.groups.push_back(std::move(ranks));
    }
  }
  step.time_s = IsLocal(kind) ? 0 : calibration.StepTime(axes, max_rank_bytes);
  return step;
}

}  // namespace oneflow_sbp::boxing
