// The boxing planner: the cheapest exact plan that turns a tensor laid out
// as `src` on one placement into `dst` on the same or another placement.
//
// Example:
//   BoxingPlanner planner;
//   absl::StatusOr<std::shared_ptr<const BoxingPlan>> plan = planner.Plan(
//       {Shape{8, 6}, DataType::kFloat32, P("cpu:0-3 [2,2]"), Nd("(S(0),S(1))"),
//        P("cpu:0-3 [2,2]"), Nd("(S(1),S(0))")});
//   (*plan)->Summary();
//
// Search: Dijkstra with an admissible A* bound over intermediate layouts
// (every NdSbp on the source placement, and on the destination's when the
// placements differ). Edges are the exact one-step collectives of
// collective_moves.h (on one mesh axis, or several flattened), and exact
// point-to-point exchanges (p2p_exchange.h) from any source-side layout to
// the destination, and from the source to any destination-side layout
// without P when placements differ. Cost = sum of step times from the
// calibration (latency + max per-rank bytes / bandwidth). An exchange to
// the destination is priced lazily: it waits in the queue under a lower
// bound of its time and is priced only if the search reaches that bound
// first (most lose to collectives, and pricing one costs O(ranks^2)).
//
// Tie-breaks, in order: lower time, fewer communication steps (a p2p
// exchange counts even when it moves nothing), fewer steps, then the path
// found first,
// with edges tried in a fixed order (mesh axes ascending, single axes before
// flattened sets, targets B, P, S(0), S(1), ...; p2p last). No hash order
// is involved, so plans are the same on every run.
//
// Lower bound used by A*: the largest number of bytes any rank must receive
// that it does not hold, at the fastest bandwidth, plus the smallest
// latency whenever a step is unavoidable (missing bytes, or partial sums
// the destination does not have); 0 when placements differ or the
// destination holds partial sums. Computed without per-rank slices
// (missing_elements.h).
#ifndef BOXING_PLANNER_H_
#define BOXING_PLANNER_H_

#include <cstdint>
#include <list>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "boxing/p2p_exchange.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::boxing {

struct PlanRequest {
  Shape shape;
  DataType dtype = DataType::kFloat32;
  Placement src_placement;
  NdSbp src;
  Placement dst_placement;
  NdSbp dst;
  // Search collective moves alone, never a p2p exchange: the cheapest plan
  // made of collectives. For pricing many pairs on a large mesh, where an
  // exchange costs O(ranks^2) to price (graph planning's
  // `collectives_only`). Needs one placement (kInvalidArgument otherwise);
  // kResourceExhausted where collectives cannot make `dst`.
  bool collectives_only = false;
};

// Checks a request: nd_sbps match their hierarchies, no unset entries,
// splits within the tensor's rank, one device type. kInvalidArgument (or
// kUnimplemented for cpu <-> cuda) with the offending value named.
absl::Status ValidatePlanRequest(const PlanRequest& request);

// The planner's work limit (docs/RELIABILITY.md, "Limits"). The search
// visits up to (rank+2)^axes layouts per placement; each costs a
// collective try per axis set and target at O(ranks), and a p2p exchange
// at O(source ranks x destination ranks). EstimatePlanWork adds these up
// before searching, an upper bound in units of one rank visited (a few
// ns each), and PlanBoxing refuses a request above kMaxPlanWork with
// kResourceExhausted before doing any of it. The limit keeps every plan
// under about a second; a 1,024-rank [8,128] or [2,4,128] mesh is far
// inside it, a 256-rank 8-axis one is not.
//
// Large meshes (1,024 to 65,536 ranks on one placement): a p2p exchange
// costs O(ranks^2) to price, so the full search is over the limit long
// before the collectives are. When only the p2p edges put a request over
// it, and source and destination share one placement, PlanBoxing searches
// the collectives alone (EstimateCollectiveSearchWork: layouts x
// collective tries, each charged its classes of groups), so planning on
// [16,1024] answers; the plan is
// exact and the cheapest made of collectives, but a p2p exchange might
// have been cheaper. Layouts that collectives cannot reach are refused.
// The collective estimate enumerates the search's layouts and tries (up to
// kMaxEnumeratedTries of them; beyond, every try is charged the mesh) and
// charges each priced try its classes of translated groups times the group
// size (collective_moves.cc), bounded without walking groups: a dim's
// class is a pair of range sizes, each one of two consecutive values,
// times the coordinates of the outside axes after the group's first axis
// where the group splits the dim. So `sbp plan` prices a program on
// [16,1024] within the default budget; a [16,1024] pair plans in a few ms
// (docs/PERFORMANCE.md).
inline constexpr int64_t kMaxPlanWork = int64_t{1} << 28;
// Saturates at INT64_MAX. Requires a request that passed
// ValidatePlanRequest.
// A request with collectives_only is charged its collective search alone.
int64_t EstimatePlanWork(const PlanRequest& request);
// The search without p2p edges; INT64_MAX when the placements differ.
int64_t EstimateCollectiveSearchWork(const PlanRequest& request);

// Plans without caching. `calibration` covers mesh axes 0..7 of either
// placement (by axis index) and point-to-point links.
absl::StatusOr<BoxingPlan> PlanBoxing(const PlanRequest& request,
                                      const Calibration& calibration);

// For comparisons (tests, docs/BOXING.md): the planner with p2p exchanges
// restricted to root ownership of destination partial sums, as before
// split ownership existed.
absl::StatusOr<BoxingPlan> PlanBoxingWithRootOwnership(const PlanRequest& request,
                                                       const Calibration& calibration);

// The naive plan DTensor makes: mesh axes left to right, each converted on
// its own by the collective for that axis's change. Where such a
// collective is not exact (two mesh axes splitting one dim), it replicates
// (every axis to B, innermost first) and slices the destination out; a
// change of placement is one p2p exchange. For comparison only.
absl::StatusOr<BoxingPlan> NaivePerAxisPlan(const PlanRequest& request,
                                            const Calibration& calibration);

struct PlannerStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  size_t size = 0;
  size_t capacity = 0;
  // The cached plans' footprint (PlanFootprint) and its limit.
  size_t bytes = 0;
  size_t max_bytes = 0;
};

// About how much memory a plan holds: its per-rank vectors, groups and
// p2p pieces. A step on 16,384 ranks holds ~0.4 MB; an exchange on 1,024
// ranks can hold ~10 MB of pieces.
size_t PlanFootprint(const BoxingPlan& plan);

// A planner with a bounded cache keyed by (shape, dtype, placements,
// layouts, collectives_only); the calibration is fixed per planner. The cache holds at most
// `capacity` plans and `max_bytes` of them (PlanFootprint; the newest plan
// is kept even if it alone is larger): beyond either, the least recently
// used plans are evicted. Without the byte limit, pricing a program on
// 1,024 ranks kept 4.8 GB of plans. Thread-safe; plans are immutable and
// shared, so an evicted plan stays valid for whoever holds it.
class BoxingPlanner {
 public:
  static constexpr size_t kDefaultCapacity = 4096;
  static constexpr size_t kDefaultMaxBytes = size_t{256} << 20;

  BoxingPlanner() : BoxingPlanner(Calibration::Defaults(NdSbp::kMaxAxes)) {}
  // `capacity` < 1 is taken as 1 (the Engine validates its options).
  explicit BoxingPlanner(Calibration calibration, size_t capacity = kDefaultCapacity,
                         size_t max_bytes = kDefaultMaxBytes)
      : calibration_(std::move(calibration)),
        capacity_(capacity < 1 ? 1 : capacity),
        max_bytes_(max_bytes) {}

  absl::StatusOr<std::shared_ptr<const BoxingPlan>> Plan(const PlanRequest& request);

  const Calibration& calibration() const { return calibration_; }
  PlannerStats stats() const;
  void Clear();

 private:
  struct Key {
    Shape shape;
    DataType dtype;
    Placement src_placement;
    NdSbp src;
    Placement dst_placement;
    NdSbp dst;
    bool collectives_only = false;
    friend bool operator==(const Key& a, const Key& b) {
      return a.dtype == b.dtype && a.src == b.src && a.dst == b.dst && a.shape == b.shape &&
             a.collectives_only == b.collectives_only && a.src_placement == b.src_placement &&
             a.dst_placement == b.dst_placement;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.shape, k.dtype, k.src_placement.hash(), k.src,
                        k.dst_placement.hash(), k.dst, k.collectives_only);
    }
  };
  struct Slot {
    std::shared_ptr<const BoxingPlan> plan;
    std::list<Key>::iterator lru;  // position in lru_
    size_t bytes = 0;              // PlanFootprint(*plan)
  };
  const Calibration calibration_;
  const size_t capacity_;
  const size_t max_bytes_;
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Slot> cache_ ABSL_GUARDED_BY(mu_);
  // Most recently used first.
  std::list<Key> lru_ ABSL_GUARDED_BY(mu_);
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evictions_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_PLANNER_H_
