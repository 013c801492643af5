// Neural-network ops (layer_norm, rms_norm and their grads, activation
// grads, dropout, sparse softmax cross entropy, bias_add, conv2d): shape
// functions and 1-D SBP rules; the candidate lists are listed in nn_ops.cc.
#ifndef OPS_NN_OPS_H_
#define OPS_NN_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterNnOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_NN_OPS_H_
