#include "boxing/group_move.h"

#include <algorithm>

#include "boxing/byte_count.h"

namespace oneflow_sbp::boxing {

void MemberSlices::Assign(const Shape& shape, const NdSbp& layout,
                          absl::Span<const int64_t> hierarchy, absl::Span<const int> group_axes,
                          absl::Span<const int64_t> coord) {
  MeshCoord at(coord.begin(), coord.end());
  size_ = 1;
  for (int a : group_axes) {
    at[a] = 0;
    size_ *= static_cast<int>(hierarchy[a]);
  }
  base_ = SliceAt(shape, layout, hierarchy, at);
  const SbpParallel group_sbp = layout[group_axes.front()];
  dim_ = group_sbp.is_split() ? group_sbp.split_axis() : -1;
  others_ = 1;
  for (int d = 0; d < base_.rank(); ++d) {
    if (d != dim_) others_ *= std::max<int64_t>(base_.range(d).size(), 0);
  }
  ranges_.clear();
  if (dim_ < 0) return;
  // Cut dim_ level by level in axis order: an outside axis keeps its part
  // of every range so far, a group axis splits each range into all its
  // parts. Members come out in SubGroup's order (the last group axis
  // fastest), with no division per member.
  ranges_.reserve(size_);
  ranges_.push_back(IndexRange{0, shape.dim(dim_)});
  std::vector<IndexRange> next;
  for (int i = 0; i < layout.size(); ++i) {
    if (!layout[i].is_split() || layout[i].split_axis() != dim_) continue;
    const int64_t parts = hierarchy[i];
    const bool group_axis = std::find(group_axes.begin(), group_axes.end(), i) != group_axes.end();
    if (!group_axis) {
      for (IndexRange& r : ranges_) r = BalancedPart(r, parts, at[i]);
      continue;
    }
    next.clear();
    next.reserve(ranges_.size() * parts);
    for (const IndexRange& r : ranges_) AppendBalancedParts(r, parts, &next);
    ranges_.swap(next);
  }
  // Group axes that do not split dim_ cannot exist (they all carry the
  // group's SBP), so every member has its range.
}

int64_t MemberSlices::ElemCnt(int k) const {
  return dim_ < 0 ? others_ : others_ * std::max<int64_t>(ranges_[k].size(), 0);
}

TensorSlice MemberSlices::At(int k) const {
  TensorSlice s = base_;
  if (dim_ >= 0) s.set_range(dim_, ranges_[k]);
  return s;
}

bool MemberSlices::AllEqual() const {
  for (int k = 1; k < static_cast<int>(ranges_.size()); ++k) {
    if (ranges_[k] != ranges_[0]) return false;
  }
  return true;
}

namespace {

// The smallest box holding every member's slice: per dim, the hull of the
// non-empty ranges, or member 0's range when all are empty.
TensorSlice BoundingBox(const MemberSlices& s) {
  TensorSlice box = s.At(0);
  if (s.dim() < 0) return box;
  IndexRange b = box.range(s.dim());
  for (int k = 0; k < s.size(); ++k) {
    const IndexRange r = s.Range(k, s.dim());
    if (r.empty()) continue;
    if (b.empty()) {
      b = r;
    } else {
      b.begin = std::min(b.begin, r.begin);
      b.end = std::max(b.end, r.end);
    }
  }
  box.set_range(s.dim(), b);
  return box;
}

bool Within(IndexRange inner, IndexRange outer) {
  return inner.begin >= outer.begin && inner.end <= outer.end;
}

// Every member's slice lies in `box` (empty slices lie anywhere).
bool AllContained(const MemberSlices& s, const TensorSlice& box) {
  bool others_within = true;
  for (int d = 0; d < box.rank(); ++d) {
    if (d != s.dim()) others_within = others_within && Within(s.Range(0, d), box.range(d));
  }
  for (int k = 0; k < s.size(); ++k) {
    if (s.ElemCnt(k) == 0) continue;
    if (!others_within) return false;
    if (s.dim() >= 0 && !Within(s.Range(k, s.dim()), box.range(s.dim()))) return false;
  }
  return true;
}

// True if the members' slices exactly cover `box` without overlapping.
// Called only for layouts in which the group's axes split a dim, and then
// the slices never overlap, so no pass over pairs is needed: within one
// layout the ranges of a dim are parts of one nested balanced partition
// (SliceAt), so two members, whose coordinates differ on some group axis,
// hold disjoint ranges of the dim it splits (or an empty one). Disjoint
// slices inside the box tile it exactly when their sizes sum to its size.
bool Tiles(const MemberSlices& s, const TensorSlice& box) {
  if (!AllContained(s, box)) return false;
  const int64_t whole = box.elem_cnt();
  int64_t total = 0;
  for (int k = 0; k < s.size(); ++k) {
    // Slices inside the box that sum past it overlap; stopping here also
    // keeps the sum of huge (hostile) extents from overflowing.
    if (s.ElemCnt(k) > whole - total) return false;
    total += s.ElemCnt(k);
  }
  return total == whole;
}

// Every member holds exactly `box`.
bool AllAre(const MemberSlices& s, const TensorSlice& box) {
  return s.AllEqual() && s.At(0) == box;
}

// Whether the move is exact on the group, per the table in
// collective_moves.h.
bool IsExact(StepKind kind, const MemberSlices& before, const MemberSlices& after,
             const TensorSlice& box) {
  switch (kind) {
    case StepKind::kAllGather:
    case StepKind::kLocalScatter:
      return Tiles(before, box) && AllAre(after, box);
    case StepKind::kReduceScatter:
      return before.AllEqual() && Tiles(after, box);
    case StepKind::kAllReduce:
    case StepKind::kLocalPartial:
      return before.AllEqual() && AllAre(after, box);
    case StepKind::kAllToAll:
      return Tiles(before, box) && Tiles(after, box);
    case StepKind::kLocalSlice:
      return before.AllEqual() && AllContained(after, box);
    case StepKind::kPointToPoint:
      return false;
  }
  return false;
}

// Elements member k holds in both layouts.
int64_t KeptCount(const MemberSlices& before, const MemberSlices& after, int k, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    const IndexRange a = before.Range(k, d);
    const IndexRange b = after.Range(k, d);
    const int64_t lo = std::max(a.begin, b.begin);
    const int64_t hi = std::min(a.end, b.end);
    if (hi <= lo) return 0;
    n *= hi - lo;
  }
  return n;
}

}  // namespace

std::optional<int64_t> EvaluateGroupMove(StepKind kind, const MemberSlices& before,
                                         const MemberSlices& after, int64_t es,
                                         std::vector<MemberBytes>* each) {
  const TensorSlice box = BoundingBox(before);
  if (!IsExact(kind, before, after, box)) return std::nullopt;
  const int n = before.size();
  if (each != nullptr) each->assign(n, MemberBytes{});
  if (IsLocal(kind)) return 0;
  // A saturated total makes every count of the step saturated, so the
  // planner refuses the plan.
  const int64_t total = MulBytes(box.elem_cnt(), es);
  const bool saturated = total >= kSaturatedBytes;
  // Neighbours on the ring, and the all-reduce's balanced parts of the
  // group's elements, without a division per member.
  auto prev = [n](int k) { return k == 0 ? n - 1 : k - 1; };
  auto next = [n](int k) { return k + 1 == n ? 0 : k + 1; };
  auto chunk = [&](const MemberSlices& s, int j) { return MulBytes(s.ElemCnt(j), es); };
  const int64_t part_q = box.elem_cnt() / n;
  const int64_t part_r = box.elem_cnt() % n;
  auto part = [&](int j) { return MulBytes(part_q + (j < part_r ? 1 : 0), es); };
  int64_t max_rank_bytes = 0;
  for (int k = 0; k < n; ++k) {
    MemberBytes bytes;
    switch (kind) {
      case StepKind::kAllGather:  // ring: forward all but the next rank's chunk
        bytes.sent = total - chunk(before, next(k));
        bytes.received = total - chunk(before, k);
        break;
      case StepKind::kReduceScatter:  // ring: rank k ends with its own chunk
        bytes.sent = total - chunk(after, k);
        bytes.received = total - chunk(after, prev(k));
        break;
      case StepKind::kAllReduce:
        // Reduce-scatter then all-gather over n balanced chunks of the
        // group's elements.
        bytes.sent = AddBytes(total - part(k), total - part(next(k)));
        bytes.received = AddBytes(total - part(prev(k)), total - part(k));
        break;
      case StepKind::kAllToAll: {
        // Both layouts tile the box (checked above), so what member k sends
        // is its old slice less what it keeps, and what it receives its new
        // slice less the same: no pass over the group.
        const int64_t kept = KeptCount(before, after, k, box.rank());
        bytes.sent = MulBytes(before.ElemCnt(k) - kept, es);
        bytes.received = MulBytes(after.ElemCnt(k) - kept, es);
        break;
      }
      default:
        break;
    }
    if (saturated) bytes.sent = bytes.received = kSaturatedBytes;
    max_rank_bytes = std::max({max_rank_bytes, bytes.sent, bytes.received});
    if (each != nullptr) (*each)[k] = bytes;
  }
  return max_rank_bytes;
}

}  // namespace oneflow_sbp::boxing
