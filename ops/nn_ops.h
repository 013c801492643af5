// (being written)
#ifndef OPS_NN_OPS_H_
#define OPS_NN_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterNnOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_NN_OPS_H_
