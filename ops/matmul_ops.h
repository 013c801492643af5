// matmul, batch_matmul and broadcast_matmul.
#ifndef OPS_MATMUL_OPS_H_
#define OPS_MATMUL_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterMatmulOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_MATMUL_OPS_H_
