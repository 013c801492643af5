// Normalisation ops and their gradients: layer_norm, rms_norm.
#ifndef OPS_NORM_OPS_H_
#define OPS_NORM_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterNormOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_NORM_OPS_H_
