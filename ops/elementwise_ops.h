// Elementwise unary ops (relu, gelu, tanh, exp, ...), scalar_* ops, cast,
// identity and copy.
#ifndef OPS_ELEMENTWISE_OPS_H_
#define OPS_ELEMENTWISE_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterElementwiseOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_ELEMENTWISE_OPS_H_
