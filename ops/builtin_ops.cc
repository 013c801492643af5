#include "ops/builtin_ops.h"

#include <vector>

#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/attention_ops.h"
#include "ops/binary_ops.h"
#include "ops/concat_slice_ops.h"
#include "ops/elementwise_ops.h"
#include "ops/encoder_ops.h"
#include "ops/index_ops.h"
#include "ops/matmul_ops.h"
#include "ops/nn_ops.h"
#include "ops/norm_ops.h"
#include "ops/op_record.h"
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
    OFS_RETURN_IF_ERROR(s);
  }
  // Names users type for our ops, OneFlow's and PyTorch's, from the records
  // (ops/records/*.toml; Paddle's names are the Paddle front's). Each names
  // exactly our op for every call the name accepts (docs/OPS.md says why for
  // each); where the other framework names an attribute differently the
  // alias takes its name, and the op's name for it is an error on the alias.
  for (const OpRecord& record : BuiltinOpRecords()) {
    for (const OpAliasRecord& a : record.aliases) {
      if (!a.IsRegistryAlias()) continue;
      OFS_RETURN_IF_ERROR(registry->RegisterAlias(a.name, record.name, a.renamed));
    }
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
