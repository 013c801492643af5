#include "boxing/collective_moves.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "boxing/byte_count.h"
#include "boxing/group_move.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/hierarchy_reduction.h"

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

// Classes of groups that are translates of one another: the move prices
// one group per class. The search's fast path needs only the busiest
// rank's bytes, so it evaluates one group per class; a detailed step
// looks up each group's class and copies that class's per-member bytes.
//
// Why that is exact. A rank's range of dim d is [0, D) cut by the axes
// that split d, in axis order (SliceAt). Within a group, the axes outside
// `axes` have fixed coordinates and carry the same SBP before and after
// the move, and the group's own axes all carry one SBP before (`from`)
// and one after (`to`), never a split of the same dim in both. So, per
// dim and per layout, the members' ranges are fixed by a prefix range P
// (cut by the outside axes before the first group axis) and: when the
// group's SBP splits d, the group's coordinates and the coordinates of
// the outside axes splitting d after the first group axis; otherwise
// those outside coordinates alone, the same range for every member. Both
// layouts start from the same P, so every range of the dim, before and
// after, is P's begin plus a function of (P's size, those later outside
// coordinates, member coordinates). Exactness and byte counts only
// compare, intersect and measure ranges, which translating every range of
// a dim by one offset preserves. So the key of a dim is the size of its
// range in each layout at the first group axis (P's size where the group
// splits d, the final range's size elsewhere) and, where the group splits
// d, the later outside coordinates. Each outside axis splits at most one
// dim, so the classes of different dims combine freely: the groups'
// classes are the product of the dims' classes, found from each dim's
// outside axes alone, never by walking every group. A mesh of 16,384
// ranks with balanced even splits has one class per move.
class TranslateClasses {
 public:
  TranslateClasses(const LayoutSpace& space, const NdSbp& before, const NdSbp& after,
                   MeshAxisMask axes);

  // Calls `group(outside)` with the mesh coordinates of one representative
  // group per class (group axes at 0), stopping when it returns false.
  template <typename PerGroup>
  void ForEachClass(PerGroup group) const;

  // The class of the group holding mesh coordinate `coord`, as a key.
  void GroupKey(const MeshCoord& coord, std::vector<int64_t>* key) const;

 private:
  // Appends dim d's class of the group at `coord` to `key`.
  void AppendDimKey(int d, const MeshCoord& coord, std::vector<int64_t>* key) const;
  // One representative coordinate per class of dim d: every other entry
  // of `coord` left as given.
  std::vector<MeshCoord> DimRepresentatives(int d) const;

  const LayoutSpace& space_;
  const NdSbp& before_;
  const NdSbp& after_;
  int first_group_axis_ = 0;
  // Per dim: the axes outside the group splitting it (the same before and
  // after the move), ascending.
  std::vector<std::vector<int>> outside_;
};

TranslateClasses::TranslateClasses(const LayoutSpace& space, const NdSbp& before,
                                   const NdSbp& after, MeshAxisMask axes)
    : space_(space), before_(before), after_(after) {
  const int n_axes = before.size();
  first_group_axis_ = n_axes;
  for (int i = n_axes - 1; i >= 0; --i) {
    if (axes & AxisBit(i)) first_group_axis_ = i;
  }
  outside_.resize(space.shape().rank());
  for (int i = 0; i < n_axes; ++i) {
    if (!(axes & AxisBit(i)) && before[i].is_split()) {
      outside_[before[i].split_axis()].push_back(i);
    }
  }
}

void TranslateClasses::AppendDimKey(int d, const MeshCoord& coord,
                                    std::vector<int64_t>* key) const {
  const absl::Span<const int64_t> h = space_.placement().hierarchy();
  const std::vector<int>& outside = outside_[d];
  const SbpParallel group_sbp[2] = {before_[first_group_axis_], after_[first_group_axis_]};
  bool later_coords = false;
  for (int x = 0; x < 2; ++x) {
    const bool group_splits = group_sbp[x].is_split() && group_sbp[x].split_axis() == d;
    later_coords = later_coords || group_splits;
    IndexRange r{0, space_.shape().dim(d)};
    for (int a : outside) {
      if (group_splits && a > first_group_axis_) break;
      r = BalancedPart(r, h[a], coord[a]);
    }
    key->push_back(r.size());
  }
  if (later_coords) {
    for (int a : outside) {
      if (a > first_group_axis_) key->push_back(coord[a]);
    }
  }
}

void TranslateClasses::GroupKey(const MeshCoord& coord, std::vector<int64_t>* key) const {
  key->clear();
  for (int d = 0; d < space_.shape().rank(); ++d) AppendDimKey(d, coord, key);
}

std::vector<MeshCoord> TranslateClasses::DimRepresentatives(int d) const {
  const absl::Span<const int64_t> h = space_.placement().hierarchy();
  const std::vector<int>& outside = outside_[d];
  std::vector<MeshCoord> reps;
  absl::flat_hash_set<std::vector<int64_t>> seen;
  MeshCoord coord(h.size(), 0);
  std::vector<int64_t> key;
  while (true) {
    key.clear();
    AppendDimKey(d, coord, &key);
    if (seen.insert(key).second) reps.push_back(coord);
    // Next coordinates of the dim's outside axes, the last fastest.
    int j = static_cast<int>(outside.size()) - 1;
    for (; j >= 0; --j) {
      if (++coord[outside[j]] < h[outside[j]]) break;
      coord[outside[j]] = 0;
    }
    if (j < 0) return reps;
  }
}

template <typename PerGroup>
void TranslateClasses::ForEachClass(PerGroup group) const {
  const int rank = space_.shape().rank();
  std::vector<std::vector<MeshCoord>> per_dim;
  per_dim.reserve(rank);
  for (int d = 0; d < rank; ++d) per_dim.push_back(DimRepresentatives(d));
  std::vector<size_t> pick(rank, 0);
  MeshCoord outside(space_.placement().num_axes(), 0);
  while (true) {
    for (int d = 0; d < rank; ++d) {
      for (int a : outside_[d]) outside[a] = per_dim[d][pick[d]][a];
    }
    if (!group(outside)) return;
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++pick[d] < per_dim[d].size()) break;
      pick[d] = 0;
    }
    if (d < 0) return;
  }
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
  const int64_t es = space.element_bytes();

  BoxingStep step;
  step.kind = kind;
  step.axes = axes;
  step.from = *from;
  step.to = to;
  step.result = next;
  // Every group is priced through its class (TranslateClasses): the search
  // evaluates one group per class; a detailed step also walks every group
  // to place its members' bytes, but evaluates each class once.
  const absl::Span<const int64_t> h = space.placement().hierarchy();
  std::vector<int> group_axes;
  for (int i = 0; i < layout.size(); ++i) {
    if (axes & AxisBit(i)) group_axes.push_back(i);
  }
  const TranslateClasses classes(space, layout, next, axes);
  MemberSlices before;
  MemberSlices after;
  auto evaluate = [&](const MeshCoord& coord, std::vector<MemberBytes>* each) {
    before.Assign(space.shape(), layout, h, group_axes, coord);
    after.Assign(space.shape(), next, h, group_axes, coord);
    return EvaluateGroupMove(kind, before, after, es, each);
  };
  int64_t max_rank_bytes = 0;
  if (!detailed) {
    bool exact = true;
    classes.ForEachClass([&](const MeshCoord& coord) {
      std::optional<int64_t> bytes = evaluate(coord, nullptr);
      exact = bytes.has_value();
      if (exact) max_rank_bytes = std::max(max_rank_bytes, *bytes);
      return exact;
    });
    if (!exact) return std::nullopt;
  } else {
    struct ClassBytes {
      bool exact = false;
      std::vector<MemberBytes> members;
    };
    absl::flat_hash_map<std::vector<int64_t>, ClassBytes> by_class;
    std::vector<int64_t> key;
    step.bytes_sent.assign(space.num_participants(), 0);
    step.bytes_received.assign(space.num_participants(), 0);
    for (const std::vector<int64_t>& g : space.Groups(axes)) {
      const MeshCoord coord = space.placement().CoordinateOf(g[0]);
      classes.GroupKey(coord, &key);
      auto [it, fresh] = by_class.try_emplace(key);
      ClassBytes& c = it->second;
      if (fresh) {
        std::optional<int64_t> bytes = evaluate(coord, &c.members);
        c.exact = bytes.has_value();
        if (c.exact) max_rank_bytes = std::max(max_rank_bytes, *bytes);
      }
      if (!c.exact) return std::nullopt;
      std::vector<int64_t> ranks;
      ranks.reserve(g.size());
      for (size_t k = 0; k < g.size(); ++k) {
        const int p = space.participant(g[k]);
        step.bytes_sent[p] = AddBytes(step.bytes_sent[p], c.members[k].sent);
        step.bytes_received[p] = AddBytes(step.bytes_received[p], c.members[k].received);
        ranks.push_back(space.placement().RankOf(g[k]));
      }
      step.groups.push_back(std::move(ranks));
    }
  }
  step.time_s = IsLocal(kind) ? 0 : calibration.StepTime(axes, max_rank_bytes);
  return step;
}

}  // namespace oneflow_sbp::boxing
