// Reductions (reduce_sum/mean/max/min/prod), softmax and log_softmax.
#ifndef OPS_REDUCE_OPS_H_
#define OPS_REDUCE_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterReduceOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_REDUCE_OPS_H_
