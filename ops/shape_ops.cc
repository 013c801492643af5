// Layout ops (SPEC.md §6) and argwhere. transpose(input; perm) -> output: output dim i
// is input dim perm[i], so input:S(perm[i]) -> output:S(i); transposition
// is linear, so P -> P.
#include "ops/shape_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/extended_partials.h"
#include "ops/op_util.h"
#include "ops/slice_params.h"

namespace oneflow_sbp::ops {
namespace {

absl::Status TransposeShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("input");
  OFS_ASSIGN_OR_RETURN(std::vector<int> perm,
       ResolvePermutation(ctx.Attr<std::vector<int64_t>>("perm"), in.shape.rank()));
  std::vector<int64_t> dims;
  for (int p : perm) dims.push_back(in.shape.dim(p));
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "output_0"));
  ctx.set_output("output", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

absl::Status TransposeGetSbp(SbpContext& ctx) {
  const int rank = ctx.input_desc("input").shape.rank();
  OFS_ASSIGN_OR_RETURN(std::vector<int> perm,
       ResolvePermutation(ctx.Attr<std::vector<int64_t>>("perm"), rank));
  for (int i = 0; i < rank; ++i) {
    ctx.NewBuilder().Split(OpArg{"input", 0}, (perm)[i]).Split(OpArg{"output", 0}, i).Build();
  }
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// argwhere: the indices of the nonzero elements, padded to elem_cnt rows,
// and the number of valid rows. Which rows a rank owns depends on the data
// of all ranks, so there is no split rule: the op opts in to the
// broadcast-only fallback, as OneFlow's does.
absl::Status ArgwhereShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("input");
  absl::StatusOr<DataType> dtype = ParseDataType(ctx.Attr<std::string>("dtype"));
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("attribute dtype: ", dtype.status().message()));
  }
  if (*dtype != DataType::kInt32 && *dtype != DataType::kInt64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute dtype must be i32 or i64, got ", ctx.Attr<std::string>("dtype")));
  }
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape({in.shape.elem_cnt(), in.shape.rank()}, "output_0"));
  ctx.set_output("output", 0, TensorDesc{out, *dtype});
  ctx.set_output("output_size", 0, TensorDesc{Shape{1}, *dtype});
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterShapeOps(OpRegistry* registry) {
  OpDefBuilder transpose("transpose");
  transpose.Input("input").Output("output").RequiredAttr("perm", AttrType::kInts)
      .SetShapeFn(TransposeShape).SetGetSbpFn(TransposeGetSbp).SetExtendedSbpFn(MovePartials());
  OpDefBuilder argwhere("argwhere");
  argwhere.Input("input").Output("output").Output("output_size")
      .Attr("dtype", AttrValue("i64"))
      .Doc("Indices of nonzero elements; data-dependent, so every blob is broadcast.")
      .SetShapeFn(ArgwhereShape).BroadcastOnlyFallback();
  return RegisterAll(registry, {transpose, argwhere});
}

}  // namespace oneflow_sbp::ops
