// Attention building blocks of LLaMA-style decoders and BERT-style
// encoders: scaled dot-product attention (causal mask, optional key padding
// mask), rotary position embedding and the causal (lower-triangular) mask,
// with their grads. See attention_ops.cc for the rules.
#ifndef OPS_ATTENTION_OPS_H_
#define OPS_ATTENTION_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterAttentionOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_ATTENTION_OPS_H_
