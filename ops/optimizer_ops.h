// Optimizer updates (sgd_update, adam_update) and constant fills
// (fill, zeros_like). See optimizer_ops.cc for the rules.
#ifndef OPS_OPTIMIZER_OPS_H_
#define OPS_OPTIMIZER_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterOptimizerOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_OPTIMIZER_OPS_H_
