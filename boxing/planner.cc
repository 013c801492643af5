#include "boxing/planner.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "boxing/byte_count.h"
#include "boxing/collective_moves.h"
#include "boxing/missing_elements.h"
#include "boxing/p2p_exchange.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/hierarchy_reduction.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::boxing {

absl::Status ValidatePlanRequest(const PlanRequest& r) {
  for (const auto& [nd, placement, what] :
       {std::tuple<const NdSbp&, const Placement&, const char*>{r.src, r.src_placement, "source"},
        std::tuple<const NdSbp&, const Placement&, const char*>{r.dst, r.dst_placement,
                                                                "destination"}}) {
    absl::Status s = ValidateNdSbp(nd, r.shape, placement.hierarchy());
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("boxing ", what, " ", nd.ToString(), " on ", placement.ToString(), ": ",
                       s.message()));
    }
  }
  // The tensor's bytes must fit in int64 (the shape only checks elements).
  absl::StatusOr<int64_t> bytes = CheckedByteSize(r.shape, ByteSizeOf(r.dtype));
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("boxing ", DataTypeName(r.dtype), ": ", bytes.status().message()));
  }
  if (r.src_placement.device_type() != r.dst_placement.device_type()) {
    return absl::UnimplementedError(absl::StrCat(
        "boxing between device types (", r.src_placement.ToString(), " -> ",
        r.dst_placement.ToString(), ") is not supported"));
  }
  return absl::OkStatus();
}

namespace {

// Every SBP a mesh axis may take for a tensor of `rank` dims, in the fixed
// order edges are tried. P(max) and P(min) only when the request's source
// or destination holds them: no plan between OneFlow's layouts passes
// through one (it could not be cheaper: they are made from copies only and
// reduce like P), so those searches and their plans stay as they were.
std::vector<SbpParallel> AxisValues(const PlanRequest& r) {
  std::vector<SbpParallel> v = {SbpParallel::Broadcast(), SbpParallel::PartialSum()};
  for (int k = 0; k < r.shape.rank(); ++k) v.push_back(SbpParallel::Split(k));
  for (SbpParallel extra : {SbpParallel::PartialMin(), SbpParallel::PartialMax()}) {
    if (r.src.partial_kind() == extra.partial_kind() ||
        r.dst.partial_kind() == extra.partial_kind()) {
      v.push_back(extra);
    }
  }
  return v;
}

// A p2p exchange sums the pieces of a partial source; partials of a max or
// min are reduced by collectives on the source placement first.
bool P2pCanSend(const NdSbp& from) {
  return !from.any_partial() || from.any_partial_sum();
}

// Axis sets: single axes ascending, then larger sets by mask.
std::vector<MeshAxisMask> AxisSets(int axes) {
  std::vector<MeshAxisMask> sets;
  for (int i = 0; i < axes; ++i) sets.push_back(AxisBit(i));
  for (MeshAxisMask m = 1; m < (MeshAxisMask{1} << axes); ++m) {
    if (__builtin_popcount(m) >= 2) sets.push_back(m);
  }
  return sets;
}

struct Spaces {
  std::vector<int64_t> ranks;
  std::unique_ptr<LayoutSpace> src;
  std::unique_ptr<LayoutSpace> dst;  // == src when placements are equal
  bool same = true;
  LayoutSpace& side(int s) { return s == 0 || same ? *src : *dst; }
};

Spaces MakeSpaces(const PlanRequest& r) {
  Spaces sp;
  sp.same = r.src_placement == r.dst_placement;
  for (int64_t x : r.src_placement.ranks()) sp.ranks.push_back(x);
  if (!sp.same) {
    for (int64_t x : r.dst_placement.ranks()) sp.ranks.push_back(x);
    std::sort(sp.ranks.begin(), sp.ranks.end());
    sp.ranks.erase(std::unique(sp.ranks.begin(), sp.ranks.end()), sp.ranks.end());
  }
  auto index = [&](const Placement& p) {
    std::vector<int> idx;
    if (sp.same) {
      // The participants are the placement's ranks in its own order.
      idx.resize(p.parallel_num());
      for (int i = 0; i < static_cast<int>(idx.size()); ++i) idx[i] = i;
      return idx;
    }
    for (int64_t x : p.ranks()) {
      idx.push_back(static_cast<int>(std::lower_bound(sp.ranks.begin(), sp.ranks.end(), x) -
                                     sp.ranks.begin()));
    }
    return idx;
  };
  const int n = static_cast<int>(sp.ranks.size());
  sp.src = std::make_unique<LayoutSpace>(r.shape, r.dtype, r.src_placement,
                                         index(r.src_placement), n);
  if (!sp.same) {
    sp.dst = std::make_unique<LayoutSpace>(r.shape, r.dtype, r.dst_placement,
                                           index(r.dst_placement), n);
  }
  return sp;
}

BoxingPlan EmptyPlan(const PlanRequest& r, const Spaces& sp) {
  BoxingPlan plan;
  plan.shape = r.shape;
  plan.dtype = r.dtype;
  plan.src_placement = r.src_placement;
  plan.dst_placement = r.dst_placement;
  plan.src = r.src;
  plan.dst = r.dst;
  plan.ranks = sp.ranks;
  return plan;
}

void MapP2pGroup(const Spaces& sp, BoxingStep* step) {
  if (step->kind != StepKind::kPointToPoint) return;
  for (std::vector<int64_t>& g : step->groups) {
    for (int64_t& p : g) p = sp.ranks[p];
  }
}

// Bytes some rank must still receive to hold its destination slice.
int64_t MissingBytesLowerBound(LayoutSpace& space, const NdSbp& cur, const NdSbp& dst) {
  return MulBytes(
      MaxMissingElements(space.shape(), space.placement().hierarchy(), cur, dst),
      space.element_bytes());
}

// Bytes some rank must receive in a p2p exchange from `cur` to `dst` on
// one placement, where `dst` has no partial sums: what it lacks, and when
// `cur` holds k addends (partial sums on real axes), k addends of every
// element it needs. An exchange sums pieces on arrival and never adds on
// the way, and a device holds one addend, so at least k - 1 of them
// arrive for every element.
int64_t P2pBytesLowerBound(LayoutSpace& space, const NdSbp& cur, const NdSbp& dst) {
  int64_t addends = 1;
  for (int i = 0; i < cur.size(); ++i) {
    if (cur[i].is_partial()) addends *= space.placement().hierarchy()[i];
  }
  if (addends == 1) return MissingBytesLowerBound(space, cur, dst);
  int64_t worst = 0;
  for (const TensorSlice& need : space.Slices(dst)) worst = std::max(worst, need.elem_cnt());
  return MulBytes(MulBytes(worst, addends - 1), space.element_bytes());
}

}  // namespace

namespace {

// a * b, or INT64_MAX on overflow (work estimates only grow).
int64_t SatMul(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_mul_overflow(a, b, &out) ? INT64_MAX : out;
}
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_add_overflow(a, b, &out) ? INT64_MAX : out;
}
int64_t SatPow(int64_t base, int exp) {
  int64_t out = 1;
  for (int i = 0; i < exp; ++i) out = SatMul(out, base);
  return out;
}

}  // namespace

int64_t EstimatePlanWork(const PlanRequest& r) {
  if (r.collectives_only) return EstimateCollectiveSearchWork(r);
  const bool same = r.src_placement == r.dst_placement;
  const int64_t values = r.shape.rank() + 2;  // B, P, S(0..rank-1)
  const int64_t ps = r.src_placement.parallel_num();
  const int64_t pd = r.dst_placement.parallel_num();
  const int64_t p2p = SatMul(ps, pd);
  // Per side: layouts x (collective tries x ranks).
  auto side = [&](const Placement& p) {
    const int axes = p.num_axes();
    const int64_t layouts = SatPow(values, axes);
    const int64_t tries = SatMul((int64_t{1} << axes) - 1, values);
    return std::make_pair(layouts, SatMul(layouts, SatMul(tries, p.parallel_num())));
  };
  const auto [src_layouts, src_work] = side(r.src_placement);
  // Each exchange also prices balanced ownership within its budget
  // (p2p_exchange.h): two candidates into a destination with P on a real
  // axis, one (senders only) elsewhere.
  bool partial = false;
  for (int i = 0; i < r.dst.size(); ++i) {
    partial = partial || (r.dst[i].is_partial_sum() && r.dst_placement.hierarchy()[i] > 1);
  }
  const int64_t balanced = BalancedOwnershipBudget(ps, pd, partial);
  const int64_t to_dst = SatAdd(p2p, partial ? SatMul(2, balanced) : balanced);
  // Every source-side layout tries one p2p exchange to the destination.
  int64_t work = SatAdd(src_work, SatMul(src_layouts, to_dst));
  if (!same) {
    const auto [dst_layouts, dst_work] = side(r.dst_placement);
    // The source also moves to every destination layout without P.
    const int64_t to_layout = SatAdd(p2p, kBalancedSendersWork);
    work = SatAdd(work, SatAdd(dst_work, SatMul(SatPow(values - 1, r.dst_placement.num_axes()),
                                                to_layout)));
  }
  return work;
}

namespace {

// Whether CollectiveMove rejects moving `axes` of `layout` to `to` before
// pricing anything (MoveSource and the mixed-partials check in
// collective_moves.cc): those tries cost a few comparisons.
bool RejectedUnpriced(const NdSbp& layout, MeshAxisMask axes, SbpParallel to, const Shape& shape,
                      absl::Span<const int64_t> h) {
  SbpParallel from;
  int64_t flat = 1;
  int count = 0;
  NdSbp next = layout;
  for (int i = 0; i < layout.size(); ++i) {
    if (!(axes & AxisBit(i))) continue;
    if (count > 0 && layout[i] != from) return true;
    from = layout[i];
    flat *= h[i];
    ++count;
    next.set(i, to);
  }
  if (from == to || (from.is_partial() && to.is_partial())) return true;
  if (from.is_split() && to.is_partial() && !to.is_partial_sum()) return true;
  if (count > 1) {
    for (SbpParallel s : {from, to}) {
      if (s.is_split() && !CanMergeSplit(shape.dim(s.split_axis()), flat)) return true;
    }
  }
  return next.mixes_partial_kinds();
}

// An upper bound on the member steps of one priced collective try
// (CollectiveMove without detail): its classes of translated groups
// (TranslateClasses) times the group size, plus the walk that finds the
// classes (every coordinate of each dim's outside axes). A dim's class is
// its range size in each layout at a fixed depth of nested balanced cuts,
// where sizes take at most two consecutive values, so at most 2 x 2
// combinations, times the coordinates of the outside axes after the first
// group axis where the group's SBP splits the dim; never more classes than
// groups.
int64_t PricedTryWork(const NdSbp& layout, MeshAxisMask axes, SbpParallel to, int rank,
                      absl::Span<const int64_t> h, int64_t ranks) {
  int first = -1;
  int64_t group = 1;
  for (int i = 0; i < layout.size(); ++i) {
    if (!(axes & AxisBit(i))) continue;
    if (first < 0) first = i;
    group = SatMul(group, h[i]);
  }
  const SbpParallel from = layout[first];
  int64_t walk = 0;
  int64_t classes = 1;
  for (int d = 0; d < rank; ++d) {
    const bool group_splits = (from.is_split() && from.split_axis() == d) ||
                              (to.is_split() && to.split_axis() == d);
    int64_t coords = 1;
    int64_t later = 1;
    for (int i = 0; i < layout.size(); ++i) {
      if ((axes & AxisBit(i)) || !layout[i].is_split() || layout[i].split_axis() != d) continue;
      coords = SatMul(coords, h[i]);
      if (group_splits && i > first) later = SatMul(later, h[i]);
    }
    walk = SatAdd(walk, coords);
    classes = SatMul(classes, std::min(coords, SatMul(4, later)));
  }
  classes = std::min(classes, ranks / group);
  return SatAdd(walk, SatMul(classes, group));
}

// The steps of MaxMissingElements(layout, dst), the A* bound of a node:
// each dim's ranges in both layouts, then per component of dims coupled by
// an axis splitting one in `layout` and another in `dst`, every
// coordinate of the axes splitting its dims.
int64_t BoundWork(const NdSbp& layout, const NdSbp& dst, int rank, absl::Span<const int64_t> h) {
  std::vector<int> parent(rank);
  for (int d = 0; d < rank; ++d) parent[d] = d;
  auto find = [&parent](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int i = 0; i < layout.size(); ++i) {
    if (layout[i].is_split() && dst[i].is_split()) {
      parent[find(layout[i].split_axis())] = find(dst[i].split_axis());
    }
  }
  int64_t work = 0;
  std::vector<int64_t> comp_coords(rank, 1);
  std::vector<bool> counted(layout.size(), false);
  for (const NdSbp* nd : {&layout, &dst}) {
    std::vector<int64_t> ranges(rank, 1);
    for (int i = 0; i < nd->size(); ++i) {
      if (!(*nd)[i].is_split()) continue;
      const int d = (*nd)[i].split_axis();
      ranges[d] = SatMul(ranges[d], h[i]);
      if (!counted[i]) {
        counted[i] = true;
        comp_coords[find(d)] = SatMul(comp_coords[find(d)], h[i]);
      }
    }
    for (int d = 0; d < rank; ++d) work = SatAdd(work, ranges[d]);
  }
  for (int d = 0; d < rank; ++d) {
    if (find(d) == d) work = SatAdd(work, comp_coords[d]);
  }
  return work;
}

// Enumerating every try costs about this many of them; beyond it the
// estimate charges every try the whole mesh instead.
constexpr int64_t kMaxEnumeratedTries = int64_t{1} << 20;

}  // namespace

int64_t EstimateCollectiveSearchWork(const PlanRequest& r) {
  if (r.src_placement != r.dst_placement) return std::numeric_limits<int64_t>::max();
  const std::vector<SbpParallel> values = AxisValues(r);
  const int axes = r.src_placement.num_axes();
  const int64_t ranks = r.src_placement.parallel_num();
  const int64_t layouts = SatPow(static_cast<int64_t>(values.size()), axes);
  const int64_t tries =
      SatMul((int64_t{1} << axes) - 1, static_cast<int64_t>(values.size()));
  // The winning path visits each layout at most once, and each of its
  // steps is rebuilt in detail, rank by rank.
  const int64_t detail = SatMul(ranks, layouts);
  if (SatMul(layouts, tries) > kMaxEnumeratedTries) {
    // Every try, and every node's A* bound, charged the whole mesh (a try
    // walks at most every group and evaluates at most every member).
    return SatAdd(SatMul(layouts, SatMul(SatAdd(tries, 1), SatMul(ranks, 2))), detail);
  }
  // Every layout the search may settle, every try out of it.
  const absl::Span<const int64_t> h = r.src_placement.hierarchy();
  const std::vector<MeshAxisMask> sets = AxisSets(axes);
  int64_t work = detail;
  std::vector<size_t> digit(axes, 0);
  NdSbp layout;
  for (int i = 0; i < axes; ++i) layout.push_back(values[0]);
  while (true) {
    work = SatAdd(work, BoundWork(layout, r.dst, r.shape.rank(), h));
    for (MeshAxisMask set : sets) {
      for (SbpParallel to : values) {
        work = SatAdd(work, 1);
        if (RejectedUnpriced(layout, set, to, r.shape, h)) continue;
        work = SatAdd(work, PricedTryWork(layout, set, to, r.shape.rank(), h, ranks));
      }
    }
    int i = axes - 1;
    for (; i >= 0; --i) {
      if (++digit[i] < values.size()) break;
      digit[i] = 0;
    }
    if (i < 0) return work;
    for (int j = i; j < axes; ++j) layout.set(j, values[digit[j]]);
  }
}

namespace {

// Refuses a request that is invalid, or whose search would take more than
// kMaxPlanWork steps (a request that moves nothing needs no search).
absl::Status CheckSearchable(const PlanRequest& r) {
  absl::Status valid = ValidatePlanRequest(r);
  OFS_RETURN_IF_ERROR(valid);
  if (r.collectives_only && r.src_placement != r.dst_placement) {
    return absl::InvalidArgumentError(absl::StrCat(
        "boxing ", r.src.ToString(), " on ", r.src_placement.ToString(), " -> ",
        r.dst.ToString(), " on ", r.dst_placement.ToString(),
        ": collectives alone cannot change the placement (only a p2p exchange can)"));
  }
  if (r.src_placement == r.dst_placement && r.src == r.dst) return absl::OkStatus();
  const int64_t work = EstimatePlanWork(r);
  if (work > kMaxPlanWork) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "boxing ", r.src.ToString(), " on ", r.src_placement.ToString(), " -> ", r.dst.ToString(),
        " on ", r.dst_placement.ToString(), " for ", r.shape.ToString(),
        ": the plan search would take ~", work, " steps, over the limit of ", kMaxPlanWork,
        " (fewer mesh axes, fewer ranks or a lower-rank tensor stay within it)"));
  }
  return absl::OkStatus();
}

// Every layout of `axes` mesh axes without partial sums, each axis taking
// `values` in order, the first axis slowest.
std::vector<NdSbp> LayoutsWithoutPartialSums(const std::vector<SbpParallel>& values, int axes) {
  std::vector<NdSbp> layouts = {NdSbp()};
  for (int i = 0; i < axes; ++i) {
    std::vector<NdSbp> longer;
    for (const NdSbp& prefix : layouts) {
      for (SbpParallel v : values) {
        if (v.is_partial()) continue;
        NdSbp l = prefix;
        l.push_back(v);
        longer.push_back(l);
      }
    }
    layouts = std::move(longer);
  }
  return layouts;
}

// How a node was reached: a collective on `axes` to `to`, or a p2p
// exchange. The search keeps only this; the detailed steps (groups,
// per-rank bytes) are rebuilt for the winning path alone.
struct SearchEdge {
  bool p2p = false;
  MeshAxisMask axes = 0;
  SbpParallel to;
};

struct SearchNode {
  int side;
  NdSbp nd;
  double g;
  int comm;  // communication steps (p2p counts even when it moves nothing)
  int steps;
  int prev;
  SearchEdge via;
  bool settled;
};

struct QueueEntry {
  double f;
  double g;
  int comm;
  int steps;
  int64_t seq;
  int node;
  // A p2p exchange from `node` to the goal, not priced yet: f and g are
  // lower bounds of what pricing it gives (see Expand).
  bool pending_p2p = false;
  // f still lacks the node's bound (f == g); see Push.
  bool unbounded = false;
  bool operator>(const QueueEntry& o) const {
    return std::tie(f, g, comm, steps, seq) > std::tie(o.f, o.g, o.comm, o.steps, o.seq);
  }
};

// A best-first (A*) search from the source layout to the destination one
// over (side, layout) nodes: side 0 is the source placement, side 1 the
// destination placement (the source's when they are equal). Paths compare
// by time, then communication steps, then steps.
class PlanSearch {
 public:
  PlanSearch(const PlanRequest& r, const Calibration& cal, PartialOwnership ownership, Spaces& sp,
             bool collectives_only)
      : r_(r),
        cal_(cal),
        ownership_(ownership),
        collectives_only_(collectives_only),
        sp_(sp),
        goal_side_(sp.same ? 0 : 1),
        dst_partial_(r.dst.any_partial()),
        values_(AxisValues(r)),
        axis_sets_(AxisSets(r.src.size())),
        dst_axis_sets_(AxisSets(r.dst.size())) {}

  // The detailed steps of the best path; nullopt only when collectives
  // alone cannot reach the destination (with p2p edges the goal is always
  // reached).
  std::optional<std::vector<BoxingStep>> Run() {
    const int goal = FindGoal();
    if (goal < 0) {
      OFS_CHECK(collectives_only_) << "the p2p edge always reaches the destination";
      return std::nullopt;
    }
    return RebuildPath(goal);
  }

 private:
  int FindGoal();
  void Expand(int from);
  double Bound(int side, const NdSbp& nd);
  void Push(int id, int side, double g, int comm, int steps);
  double ComputeBound(int side, const NdSbp& nd);
  void Relax(int from, const BoxingStep& step, SearchEdge edge, int side);
  bool P2pToGoalCannotWin(int from, double low);
  double P2pLowerBoundTime(int from);
  std::vector<BoxingStep> RebuildPath(int goal);

  const PlanRequest& r_;
  const Calibration& cal_;
  const PartialOwnership ownership_;
  const bool collectives_only_;
  Spaces& sp_;
  const int goal_side_;
  const bool dst_partial_;
  const std::vector<SbpParallel> values_;
  const std::vector<MeshAxisMask> axis_sets_;
  const std::vector<MeshAxisMask> dst_axis_sets_;
  std::vector<SearchNode> nodes_;
  std::map<std::pair<int, uint64_t>, int> index_;  // ordered: no hash order anywhere
  absl::flat_hash_map<std::pair<int, uint64_t>, double> bounds_;  // lookups only
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<QueueEntry>> queue_;
  int64_t seq_ = 0;
};

// The goal node, or -1 if the queue runs dry first.
int PlanSearch::FindGoal() {
  nodes_.push_back(SearchNode{0, r_.src, 0, 0, 0, -1, SearchEdge(), false});
  index_.emplace(std::make_pair(0, r_.src.packed()), 0);
  Push(0, 0, 0, 0, 0);
  while (!queue_.empty()) {
    const QueueEntry e = queue_.top();
    queue_.pop();
    if (e.pending_p2p) {
      if (!P2pToGoalCannotWin(e.node, e.g)) {
        Relax(e.node,
              PointToPointExchange(*sp_.src, nodes_[e.node].nd, sp_.side(1), r_.dst, cal_, false,
                                   ownership_),
              SearchEdge{true}, goal_side_);
      }
      continue;
    }
    if (nodes_[e.node].settled) continue;
    if (e.unbounded) {
      // Its bound now, under the same sequence number: the entry takes
      // the place it would have had with its bound from the start.
      const double h = Bound(nodes_[e.node].side, nodes_[e.node].nd);
      if (h > 0) {
        queue_.push(QueueEntry{e.g + h, e.g, e.comm, e.steps, e.seq, e.node, false, false});
        continue;
      }
    }
    nodes_[e.node].settled = true;
    if (nodes_[e.node].side == goal_side_ && nodes_[e.node].nd == r_.dst) return e.node;
    Expand(e.node);
  }
  return -1;
}

// Queues node `id` reached at (g, comm, steps). Its A* bound costs a walk
// over the mesh on a large one and most queued nodes are never popped, so
// an unknown bound is computed when the entry is first popped, and the
// entry requeued under its bound with its sequence number: an entry is
// only acted on once bounded, and a lower key never passes a higher one,
// so nodes settle in the same order as with every bound computed at once.
void PlanSearch::Push(int id, int side, double g, int comm, int steps) {
  auto known = bounds_.find(std::make_pair(side, nodes_[id].nd.packed()));
  if (known != bounds_.end()) {
    queue_.push(QueueEntry{g + known->second, g, comm, steps, seq_++, id, false, false});
  } else {
    queue_.push(QueueEntry{g, g, comm, steps, seq_++, id, false, true});
  }
}

// Relaxes every move out of a settled node.
void PlanSearch::Expand(int from) {
  // Copies: relaxing may grow nodes_.
  const int side = nodes_[from].side;
  const NdSbp nd = nodes_[from].nd;
  LayoutSpace& space = sp_.side(side);
  for (MeshAxisMask axes : side == 0 ? axis_sets_ : dst_axis_sets_) {
    for (SbpParallel to : values_) {
      std::optional<BoxingStep> step =
          CollectiveMove(space, nd, axes, to, cal_, /*detailed=*/false);
      if (step) Relax(from, *step, SearchEdge{false, axes, to}, side);
    }
  }
  if (collectives_only_ || side != 0 || !P2pCanSend(nd)) return;
  // Pricing an exchange costs O(source x destination ranks), most of a
  // search on a large mesh, and most exchanges lose to collectives. So the
  // edge waits in the queue under a lower bound of its time (the bytes
  // some rank lacks), and is priced only if the search reaches that bound
  // before settling the goal. Plans are the cheapest either way (the bound
  // never exceeds the real time). The bound walks the mesh: computed once,
  // and carried in the entry as its g.
  const SearchNode& n = nodes_[from];
  const double low = n.g + P2pLowerBoundTime(from);
  if (!P2pToGoalCannotWin(from, low)) {
    queue_.push(QueueEntry{low, low, n.comm + 1, n.steps + 1, seq_++, from, true, false});
  }
  if (!sp_.same && from == 0) {
    // Move first, convert on the destination: every layout there
    // without partial sums.
    for (const NdSbp& d : LayoutsWithoutPartialSums(values_, r_.dst.size())) {
      if (d == r_.dst) continue;
      Relax(from, PointToPointExchange(*sp_.src, nd, *sp_.dst, d, cal_, false, ownership_),
            SearchEdge{true}, 1);
    }
  }
}

// Admissible lower bound on the time still needed from (side, nd):
// a rank missing bytes must receive them (one step at the fastest link);
// partial sums on an axis where the destination has none must be
// reduced, which takes at least one communication step.
double PlanSearch::Bound(int side, const NdSbp& nd) {
  // Memoised: Relax asks again for every cheaper path to a node, and on a
  // large mesh each answer walks every rank.
  auto [it, fresh] = bounds_.try_emplace(std::make_pair(side, nd.packed()), 0.0);
  if (fresh) it->second = ComputeBound(side, nd);
  return it->second;
}

double PlanSearch::ComputeBound(int side, const NdSbp& nd) {
  if (!sp_.same || side != goal_side_ || dst_partial_ || nd == r_.dst) return 0.0;
  bool must_reduce = false;
  for (int i = 0; i < nd.size(); ++i) {
    must_reduce = must_reduce || (nd[i].is_partial() && nd[i] != r_.dst[i] &&
                                  r_.src_placement.hierarchy()[i] > 1);
  }
  const int64_t missing = MissingBytesLowerBound(sp_.side(side), nd, r_.dst);
  if (missing == 0 && !must_reduce) return 0.0;
  return cal_.MinLatency() + static_cast<double>(missing) / cal_.MaxBandwidth();
}

void PlanSearch::Relax(int from, const BoxingStep& step, SearchEdge edge, int side) {
  const double g = nodes_[from].g + step.time_s;
  const int comm = nodes_[from].comm + (IsLocal(step.kind) ? 0 : 1);
  const int steps = nodes_[from].steps + 1;
  const auto key = std::make_pair(side, step.result.packed());
  auto it = index_.find(key);
  if (it != index_.end()) {
    SearchNode& n = nodes_[it->second];
    if (n.settled || std::tie(g, comm, steps) >= std::tie(n.g, n.comm, n.steps)) return;
    n.g = g;
    n.comm = comm;
    n.steps = steps;
    n.prev = from;
    n.via = edge;
    Push(it->second, side, g, comm, steps);
    return;
  }
  const int id = static_cast<int>(nodes_.size());
  index_.emplace(key, id);
  NdSbp nd = step.result;
  nodes_.push_back(SearchNode{side, nd, g, comm, steps, from, edge, false});
  Push(id, side, g, comm, steps);
}

// A p2p exchange costs O(source x destination ranks), most of a search
// on a large mesh. Before pricing the one from `from` to the goal, a
// lower bound on its time (the bytes some rank lacks, as in Bound)
// tells whether it could beat the path the goal already has; if not,
// Relax would reject it, so it is not computed at all (plans are
// unchanged; only work is saved).
// A lower bound on the time of the p2p exchange from `from` to the goal.
double PlanSearch::P2pLowerBoundTime(int from) {
  if (!sp_.same || dst_partial_) return 0.0;
  return cal_.P2pTime(P2pBytesLowerBound(*sp_.src, nodes_[from].nd, r_.dst));
}

// `low` is a lower bound on the path's time through that exchange
// (nodes_[from].g + P2pLowerBoundTime(from)).
bool PlanSearch::P2pToGoalCannotWin(int from, double low) {
  if (!sp_.same || dst_partial_) return false;
  auto it = index_.find(std::make_pair(goal_side_, r_.dst.packed()));
  if (it == index_.end()) return false;
  const SearchNode& goal_node = nodes_[it->second];
  // As Relax compares: a p2p step adds one communication and one step.
  const int comm = nodes_[from].comm + 1;
  const int steps = nodes_[from].steps + 1;
  return std::tie(low, comm, steps) >= std::tie(goal_node.g, goal_node.comm, goal_node.steps);
}

// The steps from the source to `goal`, rebuilt in detail.
std::vector<BoxingStep> PlanSearch::RebuildPath(int goal) {
  std::vector<int> path;
  for (int n = goal; nodes_[n].prev >= 0; n = nodes_[n].prev) path.push_back(n);
  std::reverse(path.begin(), path.end());
  std::vector<BoxingStep> steps;
  for (int n : path) {
    const SearchNode& prev = nodes_[nodes_[n].prev];
    const SearchEdge& edge = nodes_[n].via;
    BoxingStep step;
    if (edge.p2p) {
      step = PointToPointExchange(sp_.side(prev.side), prev.nd, sp_.side(nodes_[n].side),
                                  nodes_[n].nd, cal_, /*detailed=*/true, ownership_);
      MapP2pGroup(sp_, &step);
    } else {
      std::optional<BoxingStep> s =
          CollectiveMove(sp_.side(prev.side), prev.nd, edge.axes, edge.to, cal_);
      OFS_CHECK(s.has_value()) << "a searched move is valid when rebuilt";
      step = *std::move(s);
    }
    step.on_destination = nodes_[n].side == goal_side_;
    steps.push_back(std::move(step));
  }
  return steps;
}

absl::StatusOr<BoxingPlan> Search(const PlanRequest& r, const Calibration& cal,
                                  PartialOwnership ownership) {
  absl::Status searchable = CheckSearchable(r);
  // Over the limit only because of p2p exchanges (a large mesh): search
  // the collectives alone (see kMaxPlanWork).
  const bool collectives_only =
      (searchable.ok() && r.collectives_only) ||
      (!searchable.ok() && !r.collectives_only &&
       searchable.code() == absl::StatusCode::kResourceExhausted &&
       EstimateCollectiveSearchWork(r) <= kMaxPlanWork);
  if (!searchable.ok() && !collectives_only) return searchable;
  Spaces sp = MakeSpaces(r);
  BoxingPlan plan = EmptyPlan(r, sp);
  if (sp.same && r.src == r.dst) return plan;
  std::optional<std::vector<BoxingStep>> steps =
      PlanSearch(r, cal, ownership, sp, collectives_only).Run();
  if (!steps) {
    const std::string why = r.collectives_only
                                ? absl::StrCat("boxing ", r.src.ToString(), " -> ",
                                               r.dst.ToString(), " on ",
                                               r.src_placement.ToString(), " for ",
                                               r.shape.ToString(), " with collectives only")
                                : std::string(searchable.message());
    return absl::ResourceExhaustedError(absl::StrCat(why, "; collectives alone cannot make ",
                                                     r.dst.ToString(), " from ",
                                                     r.src.ToString()));
  }
  plan.steps = *std::move(steps);
  return plan;
}

// Byte sums saturate during planning; a plan with a saturated count is
// refused here, so no caller prints a wrapped (negative) count.
absl::StatusOr<BoxingPlan> Checked(absl::StatusOr<BoxingPlan> plan) {
  OFS_RETURN_IF_ERROR(plan.status());
  OFS_RETURN_IF_ERROR(CheckPlanBytes(*plan));
  return plan;
}

absl::StatusOr<BoxingPlan> NaivePlanUnchecked(const PlanRequest& r, const Calibration& cal);

}  // namespace

absl::StatusOr<BoxingPlan> PlanBoxing(const PlanRequest& r, const Calibration& cal) {
  return Checked(Search(r, cal, PartialOwnership::kCheaperOfRootOrSplit));
}

absl::StatusOr<BoxingPlan> PlanBoxingWithRootOwnership(const PlanRequest& r,
                                                       const Calibration& cal) {
  return Checked(Search(r, cal, PartialOwnership::kRootOnly));
}

absl::StatusOr<BoxingPlan> NaivePerAxisPlan(const PlanRequest& r, const Calibration& cal) {
  return Checked(NaivePlanUnchecked(r, cal));
}

namespace {

absl::StatusOr<BoxingPlan> NaivePlanUnchecked(const PlanRequest& r, const Calibration& cal) {
  absl::Status valid = ValidatePlanRequest(r);
  OFS_RETURN_IF_ERROR(valid);
  Spaces sp = MakeSpaces(r);
  BoxingPlan plan = EmptyPlan(r, sp);
  NdSbp cur = r.src;
  auto apply = [&](int axis, SbpParallel to) {
    std::optional<BoxingStep> step = CollectiveMove(*sp.src, cur, AxisBit(axis), to, cal);
    if (!step) return false;
    step->on_destination = sp.same;
    cur = step->result;
    plan.steps.push_back(*std::move(step));
    return true;
  };
  // Before a p2p exchange, partials of a max or min are all-reduced axis
  // by axis (P2pCanSend).
  auto reduce_for_p2p = [&] {
    for (int i = 0; i < cur.size() && !P2pCanSend(cur); ++i) {
      if (cur[i].is_partial()) apply(i, SbpParallel::Broadcast());
    }
  };
  if (!sp.same) {
    reduce_for_p2p();
    BoxingStep p2p = PointToPointExchange(*sp.src, cur, *sp.dst, r.dst, cal, true,
                                          PartialOwnership::kRootOnly);
    MapP2pGroup(sp, &p2p);
    plan.steps.push_back(std::move(p2p));
    return plan;
  }
  // DTensor's order: mesh axes left to right, each by its own collective.
  bool stuck = false;
  for (int i = 0; i < cur.size() && !stuck; ++i) {
    if (cur[i] != r.dst[i]) stuck = !apply(i, r.dst[i]);
  }
  if (stuck) {
    // A per-axis collective would not be exact here (e.g. two axes split
    // the same dim). DTensor then replicates: every axis to B, innermost
    // first, and slices the destination out axis by axis.
    for (int i = cur.size() - 1; i >= 0 && stuck; --i) {
      if (!cur[i].is_broadcast() && !apply(i, SbpParallel::Broadcast())) break;
    }
    for (int i = 0; i < cur.size(); ++i) {
      if (cur[i] != r.dst[i] && !apply(i, r.dst[i])) break;
    }
  }
  if (cur != r.dst) {
    reduce_for_p2p();
    BoxingStep p2p = PointToPointExchange(*sp.src, cur, *sp.src, r.dst, cal, true,
                                          PartialOwnership::kRootOnly);
    MapP2pGroup(sp, &p2p);
    plan.steps.push_back(std::move(p2p));
  }
  return plan;
}

}  // namespace

size_t PlanFootprint(const BoxingPlan& plan) {
  size_t bytes = sizeof(BoxingPlan) + plan.ranks.size() * sizeof(int64_t);
  for (const BoxingStep& step : plan.steps) {
    bytes += sizeof(BoxingStep) + (step.bytes_sent.size() + step.bytes_received.size()) *
                                      sizeof(int64_t);
    bytes += step.pieces.size() * sizeof(P2pPiece);
    for (const std::vector<int64_t>& g : step.groups) {
      bytes += sizeof(g) + g.size() * sizeof(int64_t);
    }
  }
  return bytes;
}

absl::StatusOr<std::shared_ptr<const BoxingPlan>> BoxingPlanner::Plan(const PlanRequest& r) {
  Key key{r.shape, r.dtype, r.src_placement, r.src, r.dst_placement, r.dst, r.collectives_only};
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.plan;
    }
    ++misses_;
  }
  // Planned outside the lock: two threads missing on one key both plan,
  // and the first to insert wins (plans are deterministic, so equal).
  OFS_ASSIGN_OR_RETURN(BoxingPlan plan, PlanBoxing(r, calibration_));
  auto shared = std::make_shared<const BoxingPlan>(std::move(plan));
  absl::MutexLock lock(&mu_);
  auto [it, fresh] = cache_.try_emplace(key);
  if (!fresh) return it->second.plan;
  lru_.push_front(std::move(key));
  const size_t bytes = PlanFootprint(*shared);
  it->second = Slot{shared, lru_.begin(), bytes};
  bytes_ += bytes;
  // Oldest first, never the plan just added.
  while (lru_.size() > 1 && (cache_.size() > capacity_ || bytes_ > max_bytes_)) {
    auto victim = cache_.find(lru_.back());
    bytes_ -= victim->second.bytes;
    cache_.erase(victim);
    lru_.pop_back();
    ++evictions_;
  }
  return shared;
}

PlannerStats BoxingPlanner::stats() const {
  absl::MutexLock lock(&mu_);
  return PlannerStats{hits_, misses_, evictions_, cache_.size(), capacity_, bytes_, max_bytes_};
}

void BoxingPlanner::Clear() {
  absl::MutexLock lock(&mu_);
  cache_.clear();
  lru_.clear();
  bytes_ = 0;
}

}  // namespace oneflow_sbp::boxing
