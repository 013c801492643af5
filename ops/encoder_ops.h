// The head of a sentence encoder (sentence-transformers' Pooling and
// Normalize modules after a BERT trunk): masked mean pooling over the
// sequence and L2 normalisation, with their grads. See encoder_ops.cc for
// the formulas and the rules.
#ifndef OPS_ENCODER_OPS_H_
#define OPS_ENCODER_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterEncoderOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_ENCODER_OPS_H_
