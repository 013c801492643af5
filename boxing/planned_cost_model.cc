#include "boxing/planned_cost_model.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace oneflow_sbp::boxing {

PlannedCostModel::PlannedCostModel(Calibration calibration)
    : planner_(std::move(calibration)),
      fingerprint_(absl::StrCat("planned:", planner_.calibration().Fingerprint())),
      fingerprint_hash_(absl::HashOf(fingerprint_)) {}

std::shared_ptr<const PlannedCostModel> PlannedCostModel::Default() {
  static const std::shared_ptr<const PlannedCostModel> model =
      std::make_shared<const PlannedCostModel>(Calibration::Defaults(NdSbp::kMaxAxes));
  return model;
}

absl::StatusOr<double> PlannedCostModel::Cost(const Shape& shape, DataType dtype,
                                              const Placement& placement, const NdSbp& from,
                                              const NdSbp& to) const {
  absl::StatusOr<std::shared_ptr<const BoxingPlan>> plan =
      planner_.Plan(PlanRequest{shape, dtype, placement, from, placement, to});
  if (!plan.ok()) return plan.status();
  return (*plan)->time_s() * kReferenceBandwidth;
}

}  // namespace oneflow_sbp::boxing
