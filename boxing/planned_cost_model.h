// The `planned` copy-cost policy: the cost of converting an input is the
// cost of the cheapest real boxing plan, in effective bytes (plan time x
// the reference bandwidth), so the ranking and the executor use one cost
// model.
//
// The Engine builds one over its own planner and registers the
// `planned` policy with it (engine.h):
//   auto model = std::make_shared<PlannedCostModel>(engine_planner);
//   PlannedSelection policy(model);
#ifndef BOXING_PLANNED_COST_MODEL_H_
#define BOXING_PLANNED_COST_MODEL_H_

#include <memory>
#include <string>

#include "boxing/planner.h"
#include "oneflow_sbp/inference/planned_selection.h"

namespace oneflow_sbp::boxing {

class PlannedCostModel : public NdCopyCostModel {
 public:
  // Bytes per second that turn plan time into effective bytes.
  static constexpr double kReferenceBandwidth = Calibration::kDefaultBandwidth;

  // Prices plans with `planner` (and its calibration and bounded cache),
  // which it shares with whoever else plans (the Engine, the executor).
  explicit PlannedCostModel(std::shared_ptr<BoxingPlanner> planner);

  absl::StatusOr<double> Cost(const Shape& shape, DataType dtype, const Placement& placement,
                              const NdSbp& from, const NdSbp& to) const override;
  const std::string& fingerprint() const override { return fingerprint_; }
  // EstimatePlanWork of the plan Cost would make. The budget of one
  // inference is that of eight plans: the estimates are worst cases, and
  // the A* search and the plan cache do far less, so this keeps 4-axis
  // meshes (a 2-D tensor on [2,2,2,2]: 1,296 candidates) while a 5-axis
  // mesh is refused at once instead of planning for 40 s.
  static constexpr int64_t kMaxInferWork = kMaxPlanWork * 8;
  int64_t WorkEstimate(const Shape& shape, DataType dtype, const Placement& placement,
                       const NdSbp& from, const NdSbp& to) const override;
  int64_t max_work() const override { return kMaxInferWork; }

 private:
  std::shared_ptr<BoxingPlanner> planner_;
  std::string fingerprint_;
};

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_PLANNED_COST_MODEL_H_
