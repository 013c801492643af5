#include "tests/rules/toy_backward.h"

#include "eager/apply.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::testing::toy {

absl::StatusOr<std::vector<eager::GlobalTensor>> ToyScaleGrad(eager::BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(eager::GlobalTensor dx,
                       eager::Apply1(c.ctx(), "toy_scale", {c.output_grad(0)}, c.op().attrs()));
  return std::vector<eager::GlobalTensor>{dx};
}

}  // namespace oneflow_sbp::testing::toy
