// The `planned` cost policy (SPEC.md §9, "improved"): candidates are priced
// by the cheapest real boxing plan of each input, so ranking and execution
// use one cost model.
//
// One rule for 1-D and N-D placements: candidates are deduplicated (first
// kept); every blob's split must fit its shape (inputs and outputs); every
// constraint applies (inputs and outputs); filtering keeps list order. The
// winner has the least cost: the cost of converting each input (plan time
// in effective bytes), plus, for an input the candidate turns into P, the
// partial penalty (by default the cost of reducing it back to the
// producer's layout), except on mesh axes where another input already
// arrives as P and stays P: the output is partial there anyway, so the
// conversion adds no reduction of its own. A partial output is charged its
// cheapest reduction (to B or a split): it must be reduced before most
// readers, and a candidate cheaper only because it defers that is not
// cheaper (add(S(0), P) -> S(0) + S(0) reduce-scatters the P input now;
// P + P would reduce the output later, and every rank would hold all of
// it meanwhile). Tie order: a candidate within kCostTieTolerance of the
// minimum ties; ties go to fewer inputs needing boxing, then to fewer
// output bytes per rank, then to the earlier candidate. Order values play no part. A mutable input that would
// need boxing makes the candidate unsupported.
//
//   PlannedSelection policy(model);   // model: a boxing planner's prices
//   InferSignature(request, policy);
#ifndef ONEFLOW_SBP_INFERENCE_PLANNED_SELECTION_H_
#define ONEFLOW_SBP_INFERENCE_PLANNED_SELECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/inference/selection_policy.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {

// Conversion prices computed outside the core library: the boxing planner
// implements this (boxing/planned_cost_model.h). Costs are in effective
// bytes (plan time x a reference bandwidth), so OneFlow's byte-based
// partial penalty can be added to them.
class NdCopyCostModel {
 public:
  virtual ~NdCopyCostModel() = default;
  // Cost of converting a tensor of `shape` and `dtype` laid out as `from`
  // into `to`, both on `placement`.
  virtual absl::StatusOr<double> Cost(const Shape& shape, DataType dtype,
                                      const Placement& placement, const NdSbp& from,
                                      const NdSbp& to) const = 0;
  // Exact text of everything that changes costs (the calibration).
  virtual const std::string& fingerprint() const = 0;
  // An upper bound on the work of one Cost call, in the model's own units;
  // 0 (the default) if the model is cheap. PlannedSelection sums it over
  // the conversions a call needs and refuses above max_work().
  virtual int64_t WorkEstimate(const Shape& shape, DataType dtype, const Placement& placement,
                               const NdSbp& from, const NdSbp& to) const {
    return 0;
  }
  virtual int64_t max_work() const { return INT64_MAX; }
};

class PlannedSelection : public SelectionPolicy {
 public:
  explicit PlannedSelection(std::shared_ptr<const NdCopyCostModel> model);

  const StageRules& rules() const override;
  absl::Status EmptyAfterFiltering(const SelectionInput& in) const override;
  absl::StatusOr<int> Choose(const SelectionInput& in, ExplainRecorder& explain) const override;
 private:
  struct PlannedCost {
    CopyCost cost;
    int mismatched = 0;  // inputs the candidate boxes
    int64_t output_bytes_per_rank = 0;
  };
  absl::StatusOr<CopyCost> DeferredReductionCost(const SelectionInput& in, int out,
                                                 const NdSbp& layout) const;
  absl::StatusOr<std::vector<PlannedCost>> CostSurvivors(const SelectionInput& in) const;
  absl::StatusOr<CopyCost> InputCost(const SelectionInput& in, int b, const NdSbp& wanted,
                                     uint32_t already_partial) const;

  std::shared_ptr<const NdCopyCostModel> model_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_PLANNED_SELECTION_H_
