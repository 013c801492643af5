// The `planned` copy-cost policy: the cost of converting an input is the
// cost of the cheapest real boxing plan, in effective bytes (plan time x
// the reference bandwidth), so the ranking and the executor use one cost
// model.
//
//   InferRequest req = ...;
//   req.cost.policy = CostPolicy::kPlanned;
//   req.cost.planned_model = boxing::PlannedCostModel::Default();
#ifndef BOXING_PLANNED_COST_MODEL_H_
#define BOXING_PLANNED_COST_MODEL_H_

#include <memory>
#include <string>

#include "boxing/planner.h"
#include "oneflow_sbp/copy_cost.h"

namespace oneflow_sbp::boxing {

class PlannedCostModel : public NdCopyCostModel {
 public:
  // Bytes per second that turn plan time into effective bytes.
  static constexpr double kReferenceBandwidth = Calibration::kDefaultBandwidth;

  explicit PlannedCostModel(Calibration calibration);
  // A process-wide model with the default calibration (its planner cache
  // is shared by every user).
  static std::shared_ptr<const PlannedCostModel> Default();

  absl::StatusOr<double> Cost(const Shape& shape, DataType dtype, const Placement& placement,
                              const NdSbp& from, const NdSbp& to) const override;
  const std::string& fingerprint() const override { return fingerprint_; }
  size_t fingerprint_hash() const override { return fingerprint_hash_; }

 private:
  mutable BoxingPlanner planner_;
  std::string fingerprint_;
  size_t fingerprint_hash_;
};

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_PLANNED_COST_MODEL_H_
