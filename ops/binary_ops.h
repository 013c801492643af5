// Binary ops with NumPy broadcasting (broadcast_add/sub/mul/div/...,
// comparisons) and add_n.
#ifndef OPS_BINARY_OPS_H_
#define OPS_BINARY_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterBinaryOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_BINARY_OPS_H_
