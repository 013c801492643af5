#include "boxing/planned_cost_model.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::boxing {

PlannedCostModel::PlannedCostModel(std::shared_ptr<BoxingPlanner> planner)
    : planner_(std::move(planner)), fingerprint_(planner_->calibration().Fingerprint()) {}

absl::StatusOr<double> PlannedCostModel::Cost(const Shape& shape, DataType dtype,
                                              const Placement& placement, const NdSbp& from,
                                              const NdSbp& to) const {
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const BoxingPlan> plan, planner_->Plan(PlanRequest{shape,
      dtype, placement, from, placement, to}));
  return plan->time_s() * kReferenceBandwidth;
}

int64_t PlannedCostModel::WorkEstimate(const Shape& shape, DataType dtype,
                                       const Placement& placement, const NdSbp& from,
                                       const NdSbp& to) const {
  if (from == to) return 0;
  return EstimatePlanWork(PlanRequest{shape, dtype, placement, from, placement, to});
}

}  // namespace oneflow_sbp::boxing
