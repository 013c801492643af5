// transpose, and argwhere (broadcast-only: its output depends on all data).
#ifndef OPS_SHAPE_OPS_H_
#define OPS_SHAPE_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterShapeOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_SHAPE_OPS_H_
