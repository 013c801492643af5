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

absl::Status RegisterBuiltinOps(OpRegistry* registry) {
  for (auto family : {RegisterElementwiseOps, RegisterBinaryOps, RegisterMatmulOps,
                      RegisterReduceOps, RegisterShapeOps, RegisterReshapeOps, RegisterNnOps, RegisterNormOps, RegisterIndexOps,
                      RegisterConcatSliceOps, RegisterAttentionOps, RegisterOptimizerOps,
                      RegisterEncoderOps}) {
    absl::Status s = family(registry);
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
