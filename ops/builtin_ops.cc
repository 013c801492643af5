#include "ops/builtin_ops.h"

#include "oneflow_sbp/check.h"
#include "ops/attention_ops.h"
#include "ops/binary_ops.h"
#include "ops/concat_slice_ops.h"
#include "ops/elementwise_ops.h"
#include "ops/encoder_ops.h"
#include "ops/index_ops.h"
#include "ops/matmul_ops.h"
#include "ops/nn_ops.h"
#include "ops/norm_ops.h"
#include "ops/optimizer_ops.h"
#include "ops/reduce_ops.h"
#include "ops/reshape_ops.h"
#include "ops/shape_ops.h"

namespace oneflow_sbp::ops {
namespace {

// Names users type for our ops: OneFlow's and PyTorch's, each mapping 1:1
// onto the op (same inputs, outputs and attribute names, same semantics),
// so a call written with the alias is the canonical call. Names whose
// attributes differ are deliberately absent: `unsqueeze` (dim, ours
// expand_dims: axis), `index_select` (dim, gather: axis), `sum`/`mean`
// (dim, keepdim; reduce_*: axis, keepdims), `permute` (dims, transpose:
// perm), `sub` (alpha) and `div` (rounding_mode); so is `add`, which
// OneFlow lowers to add_n for equal shapes (a different candidate list).
struct Alias {
  const char* alias;
  const char* canonical;
};
constexpr Alias kBuiltinAliases[] = {
    {"concat", "cat"},             // OneFlow's and PyTorch's other name for cat (issue 23)
    {"neg", "negative"},           // PyTorch's torch.neg
    {"sigmoid_v2", "sigmoid"},     // OneFlow's user op name (SPEC.md §6)
    {"view", "reshape"},           // OneFlow lowers view to reshape (SPEC.md §6.1); attr shape
    {"mul", "broadcast_mul"},      // x * y always lowers to broadcast_mul (SPEC.md §6.1)
};

}  // namespace

absl::Status RegisterBuiltinOps(OpRegistry* registry) {
  for (auto family : {RegisterElementwiseOps, RegisterBinaryOps, RegisterMatmulOps,
                      RegisterReduceOps, RegisterShapeOps, RegisterReshapeOps, RegisterNnOps, RegisterNormOps, RegisterIndexOps,
                      RegisterConcatSliceOps, RegisterAttentionOps, RegisterOptimizerOps,
                      RegisterEncoderOps}) {
    absl::Status s = family(registry);
    if (!s.ok()) return s;
  }
  for (const Alias& a : kBuiltinAliases) {
    absl::Status s = registry->RegisterAlias(a.alias, a.canonical);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

OpRegistry& BuiltinOpRegistry() {
  static const bool registered = [] {
    const absl::Status s = RegisterBuiltinOps(&OpRegistry::Global());
    OFS_CHECK(s.ok()) << s.message();
    return true;
  }();
  (void)registered;
  return OpRegistry::Global();
}

}  // namespace oneflow_sbp::ops
