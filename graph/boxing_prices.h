// BoxingPrices: what converting one tensor between two layouts costs, from
// the same planner and calibration the executor uses (Engine::Plan),
// memoised per (desc, from, to) for the many lookups of a program.
//
//   BoxingPrices prices(engine, placement);
//   absl::StatusOr<BoxingPrice> p = prices.Price(desc, from, to);
//   p->time_s;   // plan time (0 when from == to)
//   p->bytes;    // bytes received over all ranks
//
// Time and Prefetch share one plan among pairs that differ only by a
// permutation of tensor dims of equal extent (S(0) and S(1) of an
// [8,8,128] tensor) and whose destination holds no partial sums: such
// pairs move the same bytes in the same steps, so the planner's cheapest
// time is the same (graph_plan_test compares every pair of four shapes on
// [2,2] and [2,4] with its own plan; a one-off check of all 115,509 pairs
// of six shapes on [2,4], [2,2], [3,2] and [2,2,2] found none differing).
// Pairs into P are not shared: the planner's split ownership of a
// destination's partial sums favours some dims (f32[6,5,6] on [2,4]:
// (S(0),P) -> (P,S(0)) is priced 1 ns above (S(2),P) -> (P,S(2)); 2,982 of
// 30,127 such pairs on the four meshes differ from their dim-swapped twin).
// Price plans the exact pair, for reports.
//
// A pair the planner has no path for (kUnimplemented) is priced
// unsupported: time +infinity, never an error. Other planner errors (a
// layout that does not fit the tensor) pass through.
//
// Work budget: before planning any pair not priced yet, its PricingWork is
// charged against a budget for the object's
// whole life (kDefaultWorkBudget unless set). A charge that would go over
// it is refused with kResourceExhausted before any of that planning is
// done, so a program on a mesh too large to price (a 3-op MLP on
// cpu:0-1023 [32,32]) is refused in milliseconds instead of planning for
// minutes. Prefetch charges its whole batch at once.
//
// Prefetch prices many pairs at once on several threads (the planner is
// thread-safe and deterministic, so the prices do not depend on the thread
// count). Otherwise not thread-safe: one planning run owns one object.
#ifndef GRAPH_BOXING_PRICES_H_
#define GRAPH_BOXING_PRICES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "boxing/boxing_plan.h"
#include "boxing/planner.h"
#include "engine/engine.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::graph {

struct BoxingPrice {
  double time_s = 0;
  // Sum over ranks of the bytes received.
  int64_t bytes = 0;
  // The plan's one-line summary ("all_reduce[1] P->B"); "" when nothing moves.
  std::string summary;
  bool supported = true;
};

class BoxingPrices {
 public:
  // The estimated work of planning one pair on one placement: the
  // planner's search terms (boxing::EstimatePlanWork: layouts x (collective
  // tries x ranks + a p2p exchange of ranks^2)) plus kPairOverhead per
  // layout, without EstimatePlanWork's worst-case balanced-ownership cap
  // (2^13 per layout whatever the mesh), which would charge small meshes
  // as much as large ones. A pair searched by collectives alone (asked
  // for, or over the planner's own limit) is charged that search
  // (boxing::EstimateCollectiveSearchWork) plus kPairOverhead per layout.
  // Saturates.
  static constexpr int64_t kPairOverhead = 64;
  // `without_exchanges` (optional): set to whether the planner prices the
  // pair by collectives alone (asked for, or over its own limit).
  static int64_t PricingWork(const boxing::PlanRequest& request,
                             bool* without_exchanges = nullptr);
  // The default budget: boxing::kMaxPlanWork (2^28) units of PricingWork.
  // tests/testdata/plan_mlp.json (~500 pairs) charges 1.0e6 on [2,2],
  // 3.9e7 on [8,8] (2 s wall on two shared cores) and 1.4e8 on [8,16]
  // (4 s, 127 MB); [16,16] (5.5e8: 17 s, 430 MB) and [32,32] (7.9e9:
  // 258 s, 3.95 GB) are refused.
  static constexpr int64_t kDefaultWorkBudget = boxing::kMaxPlanWork;

  // `engine` must outlive this object. `work_budget` > 0. With
  // `collectives_only`, every pair is priced by its cheapest plan made of
  // collectives (boxing::PlanRequest::collectives_only), never by a p2p
  // exchange, whose pricing is O(ranks^2).
  BoxingPrices(engine::Engine& engine, Placement placement,
               int64_t work_budget = kDefaultWorkBudget, bool collectives_only = false);

  absl::StatusOr<BoxingPrice> Price(const TensorDesc& desc, const NdSbp& from, const NdSbp& to);
  // Price(...)->time_s without copying the price.
  absl::StatusOr<double> Time(const TensorDesc& desc, const NdSbp& from, const NdSbp& to);

  struct Request {
    TensorDesc desc;
    NdSbp from;
    NdSbp to;
  };
  // Prices every request not memoised yet, on up to `threads` threads
  // (<= 1: this thread). Errors: the first failing request's, in list
  // order.
  absl::Status Prefetch(const std::vector<Request>& requests, int threads);

  engine::Engine& engine() const { return engine_; }
  const Placement& placement() const { return placement_; }
  // Plans made so far for Time and Prefetch (after sharing).
  size_t num_time_plans() const { return times_.size(); }
  // Estimated planner steps charged so far, and the budget.
  int64_t work_spent() const { return work_spent_; }
  int64_t work_budget() const { return work_budget_; }
  bool collectives_only() const { return collectives_only_; }
  // Of num_time_plans(), those priced by collectives alone: all of them
  // with collectives_only(), else the pairs over the planner's own limit
  // (large meshes), where it drops the exchanges itself.
  int64_t pairs_without_exchanges() const { return pairs_without_exchanges_; }

 private:
  struct Key {
    TensorDesc desc;
    NdSbp from;
    NdSbp to;
    friend bool operator==(const Key& a, const Key& b) {
      return a.from == b.from && a.to == b.to && a.desc == b.desc;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.desc, k.from, k.to);
    }
  };
  // The representative of the pair's class under permutations of dims of
  // equal extent: the least (from, to) by packed value.
  static Key Canonical(const TensorDesc& desc, const NdSbp& from, const NdSbp& to);
  // Plans one pair (no memo).
  // The planner's request for one pair on this placement, in this mode.
  boxing::PlanRequest RequestFor(const TensorDesc& desc, const NdSbp& from,
                                 const NdSbp& to) const;
  absl::StatusOr<BoxingPrice> Compute(const TensorDesc& desc, const NdSbp& from,
                                      const NdSbp& to) const;
  // Charges the estimated work of planning `keys` (pairs that fail
  // validation cost nothing here: planning them fails at once); over the
  // budget, kResourceExhausted and nothing is charged.
  // `count`: the keys are plans num_time_plans() counts, so those priced
  // without exchanges count in pairs_without_exchanges().
  absl::Status Charge(const std::vector<Key>& keys, bool count);
  engine::Engine& engine_;
  Placement placement_;
  int64_t work_budget_;
  bool collectives_only_;
  int64_t pairs_without_exchanges_ = 0;
  int64_t work_spent_ = 0;
  // Exact pairs (Price).
  absl::flat_hash_map<Key, BoxingPrice> prices_;
  // Canonical pairs -> time (Time, Prefetch).
  absl::flat_hash_map<Key, double> times_;
};

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_BOXING_PRICES_H_
