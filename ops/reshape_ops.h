// View ops: reshape, flatten, expand_dims, squeeze.
#ifndef OPS_RESHAPE_OPS_H_
#define OPS_RESHAPE_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterReshapeOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_RESHAPE_OPS_H_
