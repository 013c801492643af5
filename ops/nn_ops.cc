#include "ops/nn_ops.h"

namespace oneflow_sbp::ops {

absl::Status RegisterNnOps(OpRegistry* registry) { return absl::OkStatus(); }

}  // namespace oneflow_sbp::ops
