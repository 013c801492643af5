// Normalisation ops and their gradients. Candidate lists in emission order
// (the engine appends all-B): OneFlow's own list first and exactly (SPEC.md §6 where listed,
// else OneFlow's GetSbp at the reference commit), then ours, each marked
// "ours" at the rule with the reason it is exact. r = rank of input 0.
//
// layer_norm(x, opt beta, opt gamma -> y, mean, inv_variance)
//   i < min(bna, bpa): x:S(i) beta,gamma:B -> y,mean,inv_variance:S(i)
// layer_norm_grad(dy, x, mean, inv_variance, opt gamma -> dx)
//   i < bna: dy,x,mean,inv_variance:S(i) gamma:B -> dx:S(i)
// layer_norm_param_grad(dy, x, mean, inv_variance -> gamma_diff, beta_diff)
//   i < bpa: all inputs S(i) -> *_diff:P; ours, j >= bpa:
//   dy,x:S(j) mean,inv_variance:B -> *_diff:S(j-bpa)
// rms_norm(x, opt weight -> y, inv_rms)  i < r - len(normalized_shape):
//   x:S(i) weight:B -> y,inv_rms:S(i)
// rms_norm_grad(dy, x, inv_rms, opt weight -> dx)  i < k = nd(inv_rms):
//   dy,x,inv_rms:S(i) weight:B -> dx:S(i)
// rms_norm_param_grad(dy, x, inv_rms -> weight_grad)  i < k: all S(i) ->
//   P; ours, j >= k: dy,x:S(j) inv_rms:B -> weight_grad:S(j-k)
//
// Axis attributes accept negative values (normalised as PyTorch does).
// Statistics (mean, inv_variance, inv_rms) are f32 for f16/bf16 inputs, as
// in OneFlow.
#include "ops/norm_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {


DataType StatsDtype(DataType x) {
  return x == DataType::kFloat16 || x == DataType::kBFloat16 ? DataType::kFloat32 : x;
}

// Per-row statistics of x: the leading `k` dims of x (k = the stats' own
// rank when k < 0), in StatsDtype(x).
absl::Status CheckStats(const TensorDesc& stats, absl::string_view bn, const TensorDesc& x,
                        int k, absl::string_view why) {
  if (k < 0) k = std::min(stats.shape.rank(), x.shape.rank());
  const TensorDesc want{SubShape(x.shape, 0, k), StatsDtype(x.dtype)};
  if (stats == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(bn, " is ", stats.ToString(), " but must be ", want.ToString(),
                              ": the leading dims of x_0 ", x.ToString(), why));
}

// A parameter (gamma, beta, weight) of shape `want` and x's dtype.
absl::Status CheckParam(const TensorDesc& p, absl::string_view bn, const TensorDesc& x,
                        const Shape& want, absl::string_view why) {
  if (p.shape != want) {
    return absl::InvalidArgumentError(absl::StrCat(bn, " is ", p.ToString(), " but must have shape ",
                                want.ToString(), why));
  }
  return CheckSameDtype(p, bn, x, "x_0");
}

const OpArg kX{"x", 0};
const OpArg kDy{"dy", 0};
const OpArg kDx{"dx", 0};
const OpArg kMean{"mean", 0};
const OpArg kInvVar{"inv_variance", 0};
const OpArg kGamma{"gamma", 0};
const OpArg kBeta{"beta", 0};
const OpArg kWeight{"weight", 0};
const OpArg kInvRms{"inv_rms", 0};

// ---------------------------------------------------------------------------
// layer_norm and its grads

absl::Status LayerNormShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(CheckRank(x, "x_0", 1, /*at_least=*/true));
  OFS_ASSIGN_OR_RETURN(int bna, AxisOf(ctx, "begin_norm_axis", x, "x_0"));
  OFS_ASSIGN_OR_RETURN(int bpa, AxisOf(ctx, "begin_params_axis", x, "x_0"));
  const Shape param = SubShape(x.shape, bpa, x.shape.rank());
  const std::string why = absl::StrCat(" = x_0.shape[begin_params_axis=", bpa, ":]");
  for (const char* arg : {"beta", "gamma"}) {
    if (ctx.has_input(arg)) OFS_RETURN_IF_ERROR(CheckParam(ctx.input(arg), FirstBlob(arg), x, param, why));
  }
  const TensorDesc stats{SubShape(x.shape, 0, bna), StatsDtype(x.dtype)};
  ctx.set_output("y", 0, x);
  ctx.set_output("mean", 0, stats);
  ctx.set_output("inv_variance", 0, stats);
  return absl::OkStatus();
}

absl::Status LayerNormGetSbp(SbpContext& ctx) {
  const TensorDesc& x = ctx.input_desc("x");
  OFS_ASSIGN_OR_RETURN(int bna, AxisOf(ctx, "begin_norm_axis", x, "x_0"));
  OFS_ASSIGN_OR_RETURN(int bpa, AxisOf(ctx, "begin_params_axis", x, "x_0"));
  // Rows are normalised independently; absent beta/gamma are skipped by the
  // builder (SPEC.md §9 #16).
  for (int i = 0; i < std::min(bna, bpa); ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i)
        .Broadcast({kGamma, kBeta}).Build();
  }
  return absl::OkStatus();
}

absl::Status LayerNormGradShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(CheckRank(x, "x_0", 1, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("dy"), "dy_0", x, "x_0"));
  OFS_ASSIGN_OR_RETURN(int bna, AxisOf(ctx, "begin_norm_axis", x, "x_0"));
  const std::string why = absl::StrCat(" up to begin_norm_axis=", bna);
  OFS_RETURN_IF_ERROR(CheckStats(ctx.input("mean"), "mean_0", x, bna, why));
  OFS_RETURN_IF_ERROR(CheckStats(ctx.input("inv_variance"), "inv_variance_0", x, bna, why));
  if (ctx.has_input("gamma")) {
    // gamma covers x's trailing dims (from the forward's begin_params_axis).
    const TensorDesc& g = ctx.input("gamma");
    const int r = x.shape.rank();
    const int gr = std::min(g.shape.rank(), r);
    OFS_RETURN_IF_ERROR(CheckParam(g, "gamma_0", x, SubShape(x.shape, r - gr, r),
                                   absl::StrCat(": the trailing dims of x_0 ", x.ToString())));
  }
  ctx.set_output("dx", 0, x);
  return absl::OkStatus();
}

absl::Status LayerNormGradGetSbp(SbpContext& ctx) {
  const TensorDesc& x = ctx.input_desc("x");
  OFS_ASSIGN_OR_RETURN(int bna, AxisOf(ctx, "begin_norm_axis", x, "x_0"));
  for (int i = 0; i < bna; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Broadcast(kGamma).Build();
  }
  return absl::OkStatus();
}

// Shared by layer_norm_param_grad (stats mean + inv_variance, params from
// `pa`) and rms_norm_param_grad (stats inv_rms, params after the stats).
absl::Status CheckParamGradInputs(ShapeContext& ctx, const std::vector<const char*>& stats) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(CheckRank(x, "x_0", 1, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("dy"), "dy_0", x, "x_0"));
  for (const char* s : stats) OFS_RETURN_IF_ERROR(CheckStats(ctx.input(s), FirstBlob(s), x, -1, ""));
  if (stats.size() == 2) {
    OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input(stats[1]), FirstBlob(stats[1]), ctx.input(stats[0]),
                                      FirstBlob(stats[0])));
  }
  return absl::OkStatus();
}

// Param grads are sums over the batch dims of dy * f(x, stats), elementwise
// in the param dims. `pa` = first param dim, `k` = rank of the stats.
void EmitParamGradCandidates(SbpContext& ctx, int pa, int k,
                             const std::vector<OpArg>& stats) {
  const int r = ctx.input_desc("x").shape.rank();
  // OneFlow: a batch split sums a slice of the rows on each rank -> P. A
  // batch dim past the stats' rank leaves them whole (B); with stats of
  // rank pa (the usual case) this is OneFlow's Split(inputs(), i).
  for (int i = 0; i < pa; ++i) {
    SbpSignatureBuilder b = ctx.NewBuilder();
    b.Split({kDy, kX}, i).PartialSum(ctx.outputs());
    if (i < k) b.Split(stats, i); else b.Broadcast(stats);
    b.Build();
  }
  // Ours: a param dim j is never reduced, so splitting dy and x there
  // gives each rank whole sums for its slice of the params; the stats are
  // indexed by the batch dims only (B), or split alongside if they reach j.
  ctx.OursFollow();
  for (int j = pa; j < r; ++j) {
    SbpSignatureBuilder b = ctx.NewBuilder();
    b.Split({kDy, kX}, j).Split(ctx.outputs(), j - pa);
    if (j < k) b.Split(stats, j); else b.Broadcast(stats);
    b.Build();
  }
}

absl::Status LayerNormParamGradShape(ShapeContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckParamGradInputs(ctx, {"mean", "inv_variance"}));
  const TensorDesc& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(int bpa, AxisOf(ctx, "begin_params_axis", x, "x_0"));
  const TensorDesc param{SubShape(x.shape, bpa, x.shape.rank()), ctx.input("dy").dtype};
  ctx.set_output("gamma_diff", 0, param);
  ctx.set_output("beta_diff", 0, param);
  return absl::OkStatus();
}

absl::Status LayerNormParamGradGetSbp(SbpContext& ctx) {
  const TensorDesc& x = ctx.input_desc("x");
  OFS_ASSIGN_OR_RETURN(int bpa, AxisOf(ctx, "begin_params_axis", x, "x_0"));
  EmitParamGradCandidates(ctx, bpa, ctx.input_desc("mean").shape.rank(), {kMean, kInvVar});
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// rms_norm and its grads

absl::Status RmsNormShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  const std::vector<int64_t> ns = ctx.Attr<std::vector<int64_t>>("normalized_shape");
  const int r = x.shape.rank();
  const int n = static_cast<int>(ns.size());
  if (n > r || !std::equal(ns.begin(), ns.end(), x.shape.dims().end() - n)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute normalized_shape [", absl::StrJoin(ns, ","),
                                "] is not the trailing dims of x_0 ", x.ToString()));
  }
  if (ctx.has_input("weight")) {
    OFS_RETURN_IF_ERROR(CheckParam(ctx.input("weight"), "weight_0", x, SubShape(x.shape, r - n, r),
                                   " (attribute normalized_shape)"));
  }
  ctx.set_output("y", 0, x);
  ctx.set_output("inv_rms", 0, TensorDesc{SubShape(x.shape, 0, r - n), StatsDtype(x.dtype)});
  return absl::OkStatus();
}

absl::Status RmsNormGetSbp(SbpContext& ctx) {
  const int r = ctx.input_desc("x").shape.rank();
  const int n = static_cast<int>(ctx.Attr<std::vector<int64_t>>("normalized_shape").size());
  for (int i = 0; i < r - n; ++i) {
    ctx.NewBuilder().Split(kX, i).Broadcast(kWeight).Split(ctx.outputs(), i).Build();
  }
  return absl::OkStatus();
}

absl::Status RmsNormGradShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("dy"), "dy_0", x, "x_0"));
  OFS_RETURN_IF_ERROR(CheckStats(ctx.input("inv_rms"), "inv_rms_0", x, -1, ""));
  if (ctx.has_input("weight")) {
    const int k = ctx.input("inv_rms").shape.rank();
    OFS_RETURN_IF_ERROR(CheckParam(ctx.input("weight"), "weight_0", x,
                                   SubShape(x.shape, k, x.shape.rank()),
                                   " = x_0.shape[rank(inv_rms_0):]"));
  }
  ctx.set_output("dx", 0, x);
  return absl::OkStatus();
}

absl::Status RmsNormGradGetSbp(SbpContext& ctx) {
  const int k = ctx.input_desc("inv_rms").shape.rank();
  for (int i = 0; i < k; ++i) {
    ctx.NewBuilder().Split({kDy, kX, kInvRms}, i).Broadcast(kWeight).Split(kDx, i).Build();
  }
  return absl::OkStatus();
}

absl::Status RmsNormParamGradShape(ShapeContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckParamGradInputs(ctx, {"inv_rms"}));
  const TensorDesc& x = ctx.input("x");
  const int k = ctx.input("inv_rms").shape.rank();
  ctx.set_output("weight_grad", 0, TensorDesc{SubShape(x.shape, k, x.shape.rank()), x.dtype});
  return absl::OkStatus();
}

absl::Status RmsNormParamGradGetSbp(SbpContext& ctx) {
  const int k = ctx.input_desc("inv_rms").shape.rank();
  EmitParamGradCandidates(ctx, k, k, {kInvRms});
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterNormOps(OpRegistry* registry) {
  std::vector<OpDefBuilder> ops;
  ops.emplace_back("layer_norm");
  ops.back().Input("x").OptionalInput("beta").OptionalInput("gamma")
      .Output("y").Output("mean").Output("inv_variance")
      .Attr("begin_norm_axis", AttrValue(int64_t{1}))
      .Attr("begin_params_axis", AttrValue(int64_t{-1}))
      .Attr("epsilon", AttrValue(1e-5))
      .Attr("center", AttrValue(true))
      .Attr("scale", AttrValue(true))
      .Doc("Normalises x over dims >= begin_norm_axis; gamma/beta cover dims >= "
           "begin_params_axis (present inputs decide, not center/scale).")
      .SetShapeFn(LayerNormShape).SetGetSbpFn(LayerNormGetSbp);
  ops.emplace_back("layer_norm_grad");
  ops.back().Input("dy").Input("x").Input("mean").Input("inv_variance")
      .OptionalInput("gamma").Output("dx")
      .Attr("begin_norm_axis", AttrValue(int64_t{1}))
      .Attr("epsilon", AttrValue(1e-5))
      .SetShapeFn(LayerNormGradShape).SetGetSbpFn(LayerNormGradGetSbp);
  ops.emplace_back("layer_norm_param_grad");
  ops.back().Input("dy").Input("x").Input("mean").Input("inv_variance")
      .Output("gamma_diff").Output("beta_diff")
      .Attr("begin_params_axis", AttrValue(int64_t{-1}))
      .SetShapeFn(LayerNormParamGradShape).SetGetSbpFn(LayerNormParamGradGetSbp);
  ops.emplace_back("rms_norm");
  ops.back().Input("x").OptionalInput("weight").Output("y").Output("inv_rms")
      .RequiredAttr("normalized_shape", AttrType::kInts)
      .Attr("epsilon", AttrValue(1e-5))
      .SetShapeFn(RmsNormShape).SetGetSbpFn(RmsNormGetSbp);
  ops.emplace_back("rms_norm_grad");
  ops.back().Input("dy").Input("x").Input("inv_rms").OptionalInput("weight").Output("dx")
      .SetShapeFn(RmsNormGradShape).SetGetSbpFn(RmsNormGradGetSbp);
  ops.emplace_back("rms_norm_param_grad");
  ops.back().Input("dy").Input("x").Input("inv_rms").Output("weight_grad")
      .SetShapeFn(RmsNormParamGradShape).SetGetSbpFn(RmsNormParamGradGetSbp);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
