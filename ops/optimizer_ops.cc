// Optimizer updates and fills.
//
// sgd_update(model!, model_diff) -> ()
//   model -= learning_rate * (scale * model_diff + weight_decay * model),
//   in place (`!` marks the mutable input, which inference never boxes: it
//   keeps its layout, and the gradient is boxed to it, as in OneFlow).
// adam_update(model!, model_diff, m!, v!) -> ()
//   m = beta1 m + (1-beta1) g; v = beta2 v + (1-beta2) g^2;
//   model -= lr * (m / bias_correction1) / (sqrt(v / bias_correction2) + eps)
//            + lr * weight_decay * model, with g = scale * model_diff.
//   Rules for both: parameters, gradients and optimizer state share a
//   layout: every S(i) on all of them, and B. Nothing is P (the update is
//   not linear in the state).
// fill(like) -> (out): `value` everywhere, with like's shape and dtype (or
//   attribute `dtype`). like:S(i) -> out:S(i); like:B -> out:B; and like:P
//   -> out:B (fill reads no value of like, so any layout of it gives a full
//   copy on every rank).
// zeros_like(like) -> (out): zeros; like:S(i) -> out:S(i), like:P -> out:P
//   (zeros add up to zero), as OneFlow's zero_like keeps P.
#include "ops/optimizer_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

// Every input must have model_0's shape and dtype.
absl::Status UpdateShape(ShapeContext& ctx) {
  const TensorDesc& model = ctx.input("model");
  OFS_RETURN_IF_ERROR(CheckFloatingDtype(model, "model_0"));
  for (const OpArg& in : ctx.op().inputs()) {
    OFS_RETURN_IF_ERROR(CheckSameDesc(model, "model_0", ctx.input(in.name, in.index),
                                      absl::StrCat(in.name, "_", in.index)));
  }
  return absl::OkStatus();
}

absl::Status SameLayoutEverywhere(SbpContext& ctx) {
  const int rank = ctx.input_desc("model").shape.rank();
  for (int axis = 0; axis < rank; ++axis) {
    ctx.NewBuilder().Split(ctx.inputs(), axis).Build();
  }
  return absl::OkStatus();
}

absl::Status FillShape(ShapeContext& ctx) {
  TensorDesc out = ctx.input("like");
  const std::string dtype = ctx.Attr<std::string>("dtype");
  if (!dtype.empty()) {
    absl::StatusOr<DataType> dt = ParseDataType(dtype);
    if (!dt.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("attribute dtype: ", dt.status().message()));
    }
    out.dtype = *dt;
  }
  ctx.set_output("out", 0, out);
  return absl::OkStatus();
}

absl::Status FillGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  ctx.NewBuilder().PartialSum(ctx.inputs()).Broadcast(ctx.outputs()).Build();
  return absl::OkStatus();
}

absl::Status ZerosLikeShape(ShapeContext& ctx) {
  ctx.set_output("out", 0, ctx.input("like"));
  return absl::OkStatus();
}

absl::Status ZerosLikeGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterOptimizerOps(OpRegistry* registry) {
  std::vector<OpDefBuilder> ops;
  ops.emplace_back("sgd_update");
  ops.back().MutableInput("model").Input("model_diff")
      .Attr("learning_rate", AttrValue(1e-3))
      .Attr("scale", AttrValue(1.0))
      .Attr("weight_decay", AttrValue(0.0))
      .Doc("model -= learning_rate * (scale * model_diff + weight_decay * model), in place.")
      .SetShapeFn(UpdateShape).SetGetSbpFn(SameLayoutEverywhere);
  ops.emplace_back("adam_update");
  ops.back().MutableInput("model").Input("model_diff").MutableInput("m").MutableInput("v")
      .Attr("learning_rate", AttrValue(1e-3))
      .Attr("beta1", AttrValue(0.9))
      .Attr("beta2", AttrValue(0.999))
      .Attr("epsilon", AttrValue(1e-8))
      .Attr("weight_decay", AttrValue(0.0))
      .Attr("scale", AttrValue(1.0))
      .Attr("bias_correction1", AttrValue(1.0))
      .Attr("bias_correction2", AttrValue(1.0))
      .Doc("Adam with decoupled weight decay; model, m and v are updated in place.")
      .SetShapeFn(UpdateShape).SetGetSbpFn(SameLayoutEverywhere);
  ops.emplace_back("fill");
  ops.back().Input("like").Output("out")
      .Attr("value", AttrValue(0.0))
      .Attr("dtype", AttrValue(""))
      .Doc("`value` everywhere, with like's shape (and like's dtype unless dtype is given).")
      .SetShapeFn(FillShape).SetGetSbpFn(FillGetSbp);
  ops.emplace_back("zeros_like");
  ops.back().Input("like").Output("out")
      .SetShapeFn(ZerosLikeShape).SetGetSbpFn(ZerosLikeGetSbp);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
