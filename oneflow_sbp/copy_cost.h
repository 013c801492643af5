// Copy cost: what it costs to turn an input's producer layout into the
// layout a candidate signature asks for. A pluggable policy; `oneflow`
// reproduces OneFlow's eager formulas exactly (SPEC.md §2 and §4), so that
// users coming from OneFlow get the same choices. The boxing planner adds
// `planned` (bytes of the cheapest real plan).
//
// Example:
//   absl::StatusOr<double> c = OneFlowEagerNdCost(
//       NdSbp{P, P}, NdSbp{B, B}, /*in_hierarchy=*/{2, 3}, /*out_hierarchy=*/{2, 3},
//       /*same_devices=*/true, Shape{12, 10}, /*bytes=*/480,
//       /*requires_same_sbp=*/false, /*penalty_policy=*/2);
//   // 4800: (P,P)->(B,B) reduces to P->B on [6], 2·T·(6-1)
//
// Cost values are doubles. kUnsupportedCost (FLT_MAX) marks a conversion
// that may not happen (e.g. a mutable input that would need boxing); it is
// never summed on, the selection stops at it.
#ifndef ONEFLOW_SBP_COPY_COST_H_
#define ONEFLOW_SBP_COPY_COST_H_

#include <cfloat>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/data_type.h"
#include "oneflow_sbp/nd_sbp.h"
#include "oneflow_sbp/placement.h"
#include "oneflow_sbp/shape.h"

namespace oneflow_sbp {

enum class CostPolicy : uint8_t {
  kOneFlow,  // OneFlow's eager formulas and selection quirks (default)
  kPlanned,  // cost of the cheapest real boxing plan; improved selection
};

// "oneflow", "planned".
absl::string_view CostPolicyName(CostPolicy policy);
absl::StatusOr<CostPolicy> ParseCostPolicy(absl::string_view text);

// Costs computed outside the core library: the boxing planner implements
// this for the `planned` policy (boxing/planned_cost_model.h). Costs are in
// effective bytes (plan time x a reference bandwidth), so OneFlow's
// byte-based partial penalty can be added to them.
class NdCopyCostModel {
 public:
  virtual ~NdCopyCostModel() = default;
  // Cost of converting a tensor of `shape` and `dtype` laid out as `from`
  // into `to`, both on `placement`.
  virtual absl::StatusOr<double> Cost(const Shape& shape, DataType dtype,
                                      const Placement& placement, const NdSbp& from,
                                      const NdSbp& to) const = 0;
  // Everything that changes costs (calibration), for cache keys.
  virtual const std::string& fingerprint() const = 0;
  virtual size_t fingerprint_hash() const = 0;
};

// Options that change costs; part of every inference cache key.
struct CostOptions {
  CostPolicy policy = CostPolicy::kOneFlow;
  // OneFlow's ONEFLOW_PENALTY_FOR_PARTIAL_IN_CONSUMER_POLICY, passed
  // explicitly: 1 -> 1.0; 2 -> 4·T·(np+nc) (default); other -> FLT_MAX.
  // Under `planned` it is added for every input the candidate turns into P.
  int partial_penalty_policy = 2;
  // Required by kPlanned, ignored otherwise.
  std::shared_ptr<const NdCopyCostModel> planned_model;

  friend bool operator==(const CostOptions& a, const CostOptions& b) {
    if (a.policy != b.policy || a.partial_penalty_policy != b.partial_penalty_policy) {
      return false;
    }
    if (a.planned_model == b.planned_model) return true;
    return a.planned_model != nullptr && b.planned_model != nullptr &&
           a.planned_model->fingerprint() == b.planned_model->fingerprint();
  }
  size_t model_hash() const {
    return planned_model == nullptr ? 0 : planned_model->fingerprint_hash();
  }
};

inline constexpr double kUnsupportedCost = FLT_MAX;
inline constexpr double kMaxValidCost = 0.8 * static_cast<double>(FLT_MAX);

// --- 1-D selection cost (SPEC.md §2) ---------------------------------------
// equal 0; anything -> P 2^63; B -> S INT32_MAX; other changes T. The
// device count plays no role (OneFlow's crude 1-D cost, reproduced).
double OneFlow1DCopyCost(SbpParallel producer, SbpParallel consumer, double bytes);

// --- Eager N-D cost (SPEC.md §4) --------------------------------------------
// Penalty(T, np, nc) for a consumer that wants P.
double PartialPenalty(double bytes, int64_t np, int64_t nc, int penalty_policy);

// c1: per-axis cost of a -> b (SPEC.md §4.2). Unset SBPs are rejected by
// callers.
double OneFlowAxisCost(SbpParallel a, SbpParallel b, double bytes,
                       bool same_devices, int64_t np, int64_t nc,
                       int penalty_policy);

// OneFlow's ComputeEagerCopyCostBetweenNdSbp for producer `in` on
// `in_hierarchy` and consumer `out` on `out_hierarchy` (SPEC.md §4.4).
// `requires_same_sbp`: the input may not be boxed (mutable args), giving
// kUnsupportedCost unless the reduced layouts are equal. kInvalidArgument
// for an empty nd_sbp or an unset entry.
absl::StatusOr<double> OneFlowEagerNdCost(const NdSbp& in, const NdSbp& out,
                                          absl::Span<const int64_t> in_hierarchy,
                                          absl::Span<const int64_t> out_hierarchy,
                                          bool same_devices, const Shape& shape,
                                          double bytes, bool requires_same_sbp,
                                          int penalty_policy);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_COPY_COST_H_
