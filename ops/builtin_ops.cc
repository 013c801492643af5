#include "ops/builtin_ops.h"

#include <vector>

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

// Names users type for our ops: OneFlow's and PyTorch's. Each names
// exactly our op, for every call the name accepts (docs/OPS.md says why
// for each); where the other framework names an attribute differently the
// alias takes its name (`renamed`: alias's name, op's name), and the op's
// name for it is an error on the alias. The registry's only list of
// built-in aliases: `sbp ops`, "did you mean" and Python's ops() read it
// from there.
//
// Left out because some call means something else under the name:
// `index_select` (PyTorch keeps the dim for a 0-D index, gather drops it),
// `div`/`divide`/`true_divide` (PyTorch divides integers into floats,
// broadcast_div keeps the integer type), `sum` (PyTorch sums integers and
// bools into int64, reduce_sum keeps the type: a bool sum would be "any").
struct BuiltinAlias {
  const char* alias;
  const char* canonical;
  std::vector<AliasAttr> renamed;
};
const std::vector<BuiltinAlias>& BuiltinAliases() {
  static const auto* const aliases = new std::vector<BuiltinAlias>{
      // torch.add(x, y) / flow.add: x + y. No alpha. OneFlow lowers equal
      // shapes to add_n, whose candidates the shape filter makes these.
      {"add", "broadcast_add", {}},
      {"concat", "cat", {}},  // OneFlow's and PyTorch's other name for cat (issue 23)
      // torch.mean / flow.mean(x, dim, keepdim); an empty dim (every axis
      // there) is refused, since reduce_mean's empty axis reduces none.
      {"mean", "reduce_mean", {{"dim", "axis", /*non_empty=*/true}, {"keepdim", "keepdims"}}},
      {"mul", "broadcast_mul", {}},       // x * y always lowers to broadcast_mul (SPEC.md §6.1)
      {"multiply", "broadcast_mul", {}},  // PyTorch's other name for mul
      {"neg", "negative", {}},            // PyTorch's torch.neg
      {"permute", "transpose", {{"dims", "perm"}}},  // torch.permute / flow.permute(x, dims)
      {"sigmoid_v2", "sigmoid", {}},  // OneFlow's user op name (SPEC.md §6)
      {"sub", "broadcast_sub", {}},   // x - y always lowers to broadcast_sub (SPEC.md §6.1); no alpha
      {"subtract", "broadcast_sub", {}},             // PyTorch's other name for sub
      {"unsqueeze", "expand_dims", {{"dim", "axis"}}},  // torch/flow.unsqueeze(x, dim)
      {"view", "reshape", {}},  // OneFlow lowers view to reshape (SPEC.md §6.1); attr shape
  };
  return *aliases;
}

}  // namespace

absl::Status RegisterBuiltinOps(OpRegistry* registry) {
  for (auto family : {RegisterElementwiseOps, RegisterBinaryOps, RegisterMatmulOps,
                      RegisterReduceOps, RegisterShapeOps, RegisterReshapeOps, RegisterNnOps, RegisterNormOps, RegisterIndexOps,
                      RegisterConcatSliceOps, RegisterAttentionOps, RegisterOptimizerOps,
                      RegisterEncoderOps}) {
    absl::Status s = family(registry);
    if (!s.ok()) return s;
  }
  for (const BuiltinAlias& a : BuiltinAliases()) {
    absl::Status s = registry->RegisterAlias(a.alias, a.canonical, a.renamed);
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
