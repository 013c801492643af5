// Neural-network ops. Candidate lists in emission order (the engine appends
// all-B): OneFlow's own list first and exactly (SPEC.md §6 where listed,
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
// softmax_grad(y, dy -> dx), log_softmax_grad(prob, dy -> dx): i < r-1, all S(i)
// relu_grad(y, dy), gelu_grad(x, dy), silu_grad(x, dy) -> dx: all S(i), then
//   y|x:B dy:P -> dx:P (OneFlow's for gelu_grad, ours for the other two)
// dropout(in, opt _add_to_output -> out, mask): every blob S(i)
// dropout_grad(dy, mask -> dx): all S(i); ours: dy:P mask:B -> dx:P
// sparse_softmax_cross_entropy(prediction, label -> prob, out): all S(0);
//   _ms adds prediction:S(r-1) label:B -> prob:S(r-1) out:P
// sparse_softmax_cross_entropy[_ms]_grad(dy, label, prob -> prediction_diff):
//   all S(0); _ms adds dy,label:B prob:S(r-1) -> prediction_diff:S(r-1)
// bias_add(a, b -> out; axis): i != axis: a:S(i) b:B -> out:S(i); then
//   a:S(axis) b:S(0) -> out:S(axis); ours: a:P b:P -> out:P
// conv2d(in, weight, opt bias, opt _add_to_output -> out), NCHW only:
//   in:S(0) weight,bias:B -> out,_add_to_output:S(0); ours, groups == 1:
//   in:B weight,bias:S(0) -> out,_add_to_output:S(1) (out-channel split);
//   in,weight:S(1) bias,_add_to_output:P -> out:P (in-channel split)
//
// Axis attributes accept negative values (normalised as PyTorch does).
// Statistics (mean, inv_variance, inv_rms) are f32 for f16/bf16 inputs, as
// in OneFlow.
#include "ops/nn_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/data_type.h"
#include "oneflow_sbp/sbp_context.h"
#include "oneflow_sbp/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

// ---------------------------------------------------------------------------
// Shared helpers

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

std::string Bn(absl::string_view arg) { return absl::StrCat(arg, "_0"); }

// dims [begin, end) of `s`.
Shape SubShape(const Shape& s, int begin, int end) {
  return *Shape::Make(s.dims().subspan(begin, end - begin));
}

DataType StatsDtype(DataType x) {
  return x == DataType::kFloat16 || x == DataType::kBFloat16 ? DataType::kFloat32 : x;
}

// The axis attribute `attr` of blob `bn`, normalised.
template <typename Ctx>
absl::StatusOr<int> AxisOf(const Ctx& ctx, absl::string_view attr, const TensorDesc& d,
                           absl::string_view bn) {
  return NormalizeAxisOf(ctx.template Attr<int64_t>(attr), d, bn, attr);
}

absl::Status CheckSameDesc(const TensorDesc& a, absl::string_view an, const TensorDesc& b,
                           absl::string_view bn) {
  if (a == b) return absl::OkStatus();
  return Invalid(absl::StrCat(an, " is ", a.ToString(), " but ", bn, " is ", b.ToString(),
                              "; they must have the same shape and dtype"));
}

// Per-row statistics of x: the leading `k` dims of x (k = the stats' own
// rank when k < 0), in StatsDtype(x).
absl::Status CheckStats(const TensorDesc& stats, absl::string_view bn, const TensorDesc& x,
                        int k, absl::string_view why) {
  if (k < 0) k = std::min(stats.shape.rank(), x.shape.rank());
  const TensorDesc want{SubShape(x.shape, 0, k), StatsDtype(x.dtype)};
  if (stats == want) return absl::OkStatus();
  return Invalid(absl::StrCat(bn, " is ", stats.ToString(), " but must be ", want.ToString(),
                              ": the leading dims of x_0 ", x.ToString(), why));
}

// A parameter (gamma, beta, weight) of shape `want` and x's dtype.
absl::Status CheckParam(const TensorDesc& p, absl::string_view bn, const TensorDesc& x,
                        const Shape& want, absl::string_view why) {
  if (p.shape != want) {
    return Invalid(absl::StrCat(bn, " is ", p.ToString(), " but must have shape ",
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
const OpArg kAddTo{"_add_to_output", 0};

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
    if (ctx.has_input(arg)) OFS_RETURN_IF_ERROR(CheckParam(ctx.input(arg), Bn(arg), x, param, why));
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
  for (const char* s : stats) OFS_RETURN_IF_ERROR(CheckStats(ctx.input(s), Bn(s), x, -1, ""));
  if (stats.size() == 2) {
    OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input(stats[1]), Bn(stats[1]), ctx.input(stats[0]),
                                      Bn(stats[0])));
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
    return Invalid(absl::StrCat("attribute normalized_shape [", absl::StrJoin(ns, ","),
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

// ---------------------------------------------------------------------------
// Activation grads: (saved, dy) -> dx with saved and dy alike.

absl::Status ActivationGradShape(ShapeContext& ctx) {
  const OpArg& saved = ctx.op().inputs()[0];
  OFS_RETURN_IF_ERROR(
      CheckSameDesc(ctx.input("dy"), "dy_0", ctx.input(saved.name), Bn(saved.name)));
  ctx.set_output("dx", 0, ctx.input("dy"));
  return absl::OkStatus();
}

// softmax_grad / log_softmax_grad: the last dim is reduced over.
absl::Status SoftmaxGradGetSbp(SbpContext& ctx) {
  const int r = ctx.input_desc("dy").shape.rank();
  for (int i = 0; i + 1 < r; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  return absl::OkStatus();
}

// relu_grad, gelu_grad, silu_grad: dx = dy * f'(saved), elementwise.
absl::Status ElementwiseGradGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  // dx is linear in dy for a fixed saved tensor, so a whole saved tensor
  // and partial dy give partial dx. OneFlow emits this for gelu_grad;
  // relu_grad and silu_grad lack it (ours).
  ctx.NewBuilder().Broadcast(ctx.inputs()[0]).PartialSum(kDy).PartialSum(kDx).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// dropout

absl::Status DropoutShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  const double rate = ctx.Attr<double>("rate");
  if (!(rate >= 0.0 && rate <= 1.0)) {
    return Invalid(absl::StrCat("attribute rate ", rate, " must be in [0, 1]"));
  }
  if (ctx.has_input("_add_to_output")) {
    OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("_add_to_output"), "_add_to_output_0", in, "in_0"));
  }
  ctx.set_output("out", 0, in);
  ctx.set_output("mask", 0, TensorDesc{in.shape, DataType::kBool});
  return absl::OkStatus();
}

absl::Status DropoutGetSbp(SbpContext& ctx) {
  const int r = ctx.input_desc("in").shape.rank();
  for (int i = 0; i < r; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  return absl::OkStatus();
}

absl::Status DropoutGradShape(ShapeContext& ctx) {
  const TensorDesc& dy = ctx.input("dy");
  const TensorDesc& mask = ctx.input("mask");
  const double scale = ctx.Attr<double>("scale");
  if (!(scale >= 1.0)) {
    return Invalid(absl::StrCat("attribute scale ", scale, " must be >= 1 (it is 1 / (1 - rate))"));
  }
  if (mask.dtype != DataType::kBool || mask.shape != dy.shape) {
    return Invalid(absl::StrCat("mask_0 is ", mask.ToString(), " but must be ",
                                TensorDesc{dy.shape, DataType::kBool}.ToString(),
                                " (bool, shaped like dy_0 ", dy.ToString(), ")"));
  }
  ctx.set_output("dx", 0, dy);
  return absl::OkStatus();
}

absl::Status DropoutGradGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  // Ours: dx = dy * mask * scale is linear in dy for a whole mask.
  ctx.NewBuilder().PartialSum(kDy).Broadcast(OpArg{"mask", 0}).PartialSum(kDx).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// sparse_softmax_cross_entropy (+ _ms, + grads)

const OpArg kPrediction{"prediction", 0};
const OpArg kLabel{"label", 0};
const OpArg kProb{"prob", 0};
const OpArg kOut{"out", 0};
const OpArg kPredDiff{"prediction_diff", 0};

// logits (prediction or prob) [..., depth] against label [...].
absl::Status CheckLogitsAndLabel(ShapeContext& ctx, const char* logits_arg) {
  const TensorDesc& logits = ctx.input(logits_arg);
  const TensorDesc& label = ctx.input("label");
  const std::string lbn = Bn(logits_arg);
  OFS_RETURN_IF_ERROR(CheckRank(logits, lbn, 2, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckIndexDtype(label, "label_0", "label"));
  const int r = logits.shape.rank();
  if (label.shape != SubShape(logits.shape, 0, r - 1)) {
    return Invalid(absl::StrCat("label_0 is ", label.ToString(), " but must have shape ",
                                SubShape(logits.shape, 0, r - 1).ToString(), " (", lbn, " ",
                                logits.ToString(), " without its class dim)"));
  }
  const int64_t depth = ctx.Attr<int64_t>("depth");
  if (depth != logits.shape.dim(r - 1)) {
    return Invalid(absl::StrCat("attribute depth ", depth, " does not match the class dim of ",
                                lbn, " ", logits.ToString()));
  }
  return absl::OkStatus();
}

absl::Status SparseCeShape(ShapeContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckLogitsAndLabel(ctx, "prediction"));
  const TensorDesc& pred = ctx.input("prediction");
  ctx.set_output("prob", 0, pred);
  ctx.set_output("out", 0, TensorDesc{ctx.input("label").shape, pred.dtype});
  return absl::OkStatus();
}

absl::Status SparseCeGetSbp(SbpContext& ctx, bool ms) {
  ctx.NewBuilder().Split({kPrediction, kLabel, kProb, kOut}, 0).Build();
  if (ms) {
    // OneFlow's model-parallel variant: classes split; the kernel reduces
    // the softmax statistics across ranks itself and leaves the loss as
    // partial sums (only the rank holding a row's label class contributes
    // that row's logit).
    const int c = ctx.input_desc("prediction").shape.rank() - 1;
    ctx.NewBuilder().Split({kPrediction, kProb}, c).Broadcast(kLabel).PartialSum(kOut).Build();
  }
  return absl::OkStatus();
}

absl::Status SparseCeGradShape(ShapeContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckLogitsAndLabel(ctx, "prob"));
  const TensorDesc& prob = ctx.input("prob");
  const TensorDesc want_dy{ctx.input("label").shape, prob.dtype};
  if (ctx.input("dy") != want_dy) {
    return Invalid(absl::StrCat("dy_0 is ", ctx.input("dy").ToString(), " but must be ",
                                want_dy.ToString(), " (label_0's shape, prob_0's dtype)"));
  }
  ctx.set_output("prediction_diff", 0, prob);
  return absl::OkStatus();
}

absl::Status SparseCeGradGetSbp(SbpContext& ctx, bool ms) {
  ctx.NewBuilder().Split({kDy, kLabel, kProb, kPredDiff}, 0).Build();
  if (ms) {
    // prediction_diff = (prob - onehot(label)) * dy per class column.
    const int c = ctx.input_desc("prob").shape.rank() - 1;
    ctx.NewBuilder().Split({kProb, kPredDiff}, c).Broadcast({kLabel, kDy}).Build();
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// bias_add

const OpArg kA{"a", 0};
const OpArg kB{"b", 0};

absl::Status BiasAddShape(ShapeContext& ctx) {
  const TensorDesc& a = ctx.input("a");
  const TensorDesc& b = ctx.input("b");
  OFS_RETURN_IF_ERROR(CheckRank(a, "a_0", 1, /*at_least=*/true));
  OFS_ASSIGN_OR_RETURN(int axis, AxisOf(ctx, "axis", a, "a_0"));
  if (b.shape.rank() != 1 || b.shape.dim(0) != a.shape.dim(axis)) {
    return Invalid(absl::StrCat("b_0 is ", b.ToString(), " but must be 1-D with extent ",
                                a.shape.dim(axis), " (a_0 ", a.ToString(), " at axis ", axis, ")"));
  }
  OFS_RETURN_IF_ERROR(CheckSameDtype(a, "a_0", b, "b_0"));
  ctx.set_output("out", 0, a);
  return absl::OkStatus();
}

absl::Status BiasAddGetSbp(SbpContext& ctx) {
  const TensorDesc& a = ctx.input_desc("a");
  OFS_ASSIGN_OR_RETURN(int axis, AxisOf(ctx, "axis", a, "a_0"));
  for (int i = 0; i < a.shape.rank(); ++i) {
    if (i == axis) continue;
    ctx.NewBuilder().Split(kA, i).Broadcast(kB).Split(kOut, i).Build();
  }
  ctx.NewBuilder().Split(kA, axis).Split(kB, 0).Split(kOut, axis).Build();
  // Ours: out = a + b is linear in (a, b) jointly: sum_r (a_r + b_r) = a + b
  // (SPEC.md §9 #17).
  ctx.NewBuilder().PartialSum({kA, kB, kOut}).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// conv2d (NCHW)

const OpArg kIn{"in", 0};
const OpArg kBias{"bias", 0};

// A 2-entry int list attribute whose entries are >= `min`.
absl::StatusOr<std::vector<int64_t>> Pair(ShapeContext& ctx, const char* attr, int64_t min) {
  std::vector<int64_t> v = ctx.Attr<std::vector<int64_t>>(attr);
  const bool bad = v.size() != 2 || *std::min_element(v.begin(), v.end()) < min;
  if (bad) {
    return Invalid(absl::StrCat("attribute ", attr, " [", absl::StrJoin(v, ","),
                                "] must have 2 entries, each >= ", min));
  }
  return v;
}

absl::Status Conv2dShape(ShapeContext& ctx) {
  const std::string df = ctx.Attr<std::string>("data_format");
  if (df != "channels_first") {
    return Invalid(absl::StrCat("attribute data_format \"", df,
                                "\" is not supported: conv2d takes channels_first (NCHW) only"));
  }
  const TensorDesc& in = ctx.input("in");
  const TensorDesc& w = ctx.input("weight");
  OFS_RETURN_IF_ERROR(CheckRank(in, "in_0", 4));
  OFS_RETURN_IF_ERROR(CheckRank(w, "weight_0", 4));
  OFS_RETURN_IF_ERROR(CheckSameDtype(in, "in_0", w, "weight_0"));
  const int64_t filters = ctx.Attr<int64_t>("filters");
  const int64_t groups = ctx.Attr<int64_t>("groups");
  const int64_t channels = in.shape.dim(1);
  if (groups < 1 || channels % groups != 0 || filters < 1 || filters % groups != 0) {
    return Invalid(absl::StrCat("attributes filters ", filters, " and groups ", groups,
                                " must be >= 1 with groups dividing filters and the ", channels,
                                " channels of in_0 ", in.ToString()));
  }
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> ks, Pair(ctx, "kernel_size", 1));
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Pair(ctx, "strides", 1));
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> pad, Pair(ctx, "padding_before", 0));
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> dil, Pair(ctx, "dilation_rate", 1));
  OFS_ASSIGN_OR_RETURN(Shape want_w,
                       MakeShape({filters, channels / groups, ks[0], ks[1]}, "weight_0"));
  if (w.shape != want_w) {
    return Invalid(absl::StrCat("weight_0 is ", w.ToString(), " but must have shape ",
                                want_w.ToString(), " = [filters, in channels / groups, ",
                                "kernel_size] (in_0 ", in.ToString(), ", groups ", groups, ")"));
  }
  if (ctx.has_input("bias")) {
    const TensorDesc& bias = ctx.input("bias");
    if (bias != TensorDesc{Shape{filters}, in.dtype}) {
      return Invalid(absl::StrCat("bias_0 is ", bias.ToString(), " but must be ",
                                  TensorDesc{Shape{filters}, in.dtype}.ToString(),
                                  " (one per filter)"));
    }
  }
  std::vector<int64_t> dims = {in.shape.dim(0), filters, 0, 0};
  for (int s = 0; s < 2; ++s) {
    const int64_t padded = in.shape.dim(2 + s) + 2 * pad[s];
    const int64_t window = dil[s] * (ks[s] - 1) + 1;
    if (window > padded) {
      return Invalid(absl::StrCat("kernel_size[", s, "]=", ks[s], " (dilated to ", window,
                                  ") is larger than the padded input extent ", padded,
                                  " of in_0 ", in.ToString(), " dim ", 2 + s));
    }
    dims[2 + s] = (padded - window) / strides[s] + 1;
  }
  OFS_ASSIGN_OR_RETURN(Shape out_shape, MakeShape(dims, "out_0"));
  const TensorDesc out{out_shape, in.dtype};
  if (ctx.has_input("_add_to_output")) {
    OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("_add_to_output"), "_add_to_output_0", out,
                                      "out_0"));
  }
  ctx.set_output("out", 0, out);
  return absl::OkStatus();
}

absl::Status Conv2dGetSbp(SbpContext& ctx) {
  // OneFlow: data parallel.
  ctx.NewBuilder().Split(kIn, 0).Broadcast({kWeight, kBias}).Split({kOut, kAddTo}, 0).Build();
  if (ctx.Attr<int64_t>("groups") != 1) return absl::OkStatus();
  // Ours: out-channel (filter) split. Output channel f uses only filter f
  // and bias[f], so ranks holding a slice of the filters (and the bias)
  // produce that slice of out's channel dim.
  ctx.NewBuilder().Broadcast(kIn).Split({kWeight, kBias}, 0).Split({kOut, kAddTo}, 1).Build();
  // Ours: in-channel split. out = sum over input channels c of
  // in[:, c] * weight[:, c], so ranks holding matching slices of in's and
  // weight's channel dims produce addends of out (P). The bias (and
  // _add_to_output) must then be P too: a P tensor is summed once overall,
  // so the result is exact (a B bias would be added N times).
  ctx.NewBuilder().Split({kIn, kWeight}, 1).PartialSum({kBias, kAddTo, kOut}).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Registration

OpDefBuilder ActivationGrad(const char* name, const char* saved, GetSbpFn rule) {
  OpDefBuilder b(name);
  b.Input(saved).Input("dy").Output("dx").SetShapeFn(ActivationGradShape)
      .SetGetSbpFn(std::move(rule));
  return b;
}

OpDefBuilder SparseCe(const char* name, bool ms) {
  OpDefBuilder b(name);
  b.Input("prediction").Input("label").Output("prob").Output("out")
      .RequiredAttr("depth", AttrType::kInt)
      .SetShapeFn(SparseCeShape)
      .SetGetSbpFn([ms](SbpContext& ctx) { return SparseCeGetSbp(ctx, ms); });
  return b;
}

OpDefBuilder SparseCeGrad(const char* name, bool ms) {
  OpDefBuilder b(name);
  b.Input("dy").Input("label").Input("prob").Output("prediction_diff")
      .RequiredAttr("depth", AttrType::kInt)
      .SetShapeFn(SparseCeGradShape)
      .SetGetSbpFn([ms](SbpContext& ctx) { return SparseCeGradGetSbp(ctx, ms); });
  return b;
}

}  // namespace

absl::Status RegisterNnOps(OpRegistry* registry) {
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
  ops.push_back(ActivationGrad("softmax_grad", "y", SoftmaxGradGetSbp));
  ops.push_back(ActivationGrad("log_softmax_grad", "prob", SoftmaxGradGetSbp));
  ops.push_back(ActivationGrad("relu_grad", "y", ElementwiseGradGetSbp));
  ops.push_back(ActivationGrad("gelu_grad", "x", ElementwiseGradGetSbp));
  ops.push_back(ActivationGrad("silu_grad", "x", ElementwiseGradGetSbp));
  ops.emplace_back("dropout");
  ops.back().Input("in").OptionalInput("_add_to_output").Output("out").Output("mask")
      .Attr("rate", AttrValue(0.5))
      .SetShapeFn(DropoutShape).SetGetSbpFn(DropoutGetSbp);
  ops.emplace_back("dropout_grad");
  ops.back().Input("dy").Input("mask").Output("dx")
      .RequiredAttr("scale", AttrType::kFloat)
      .SetShapeFn(DropoutGradShape).SetGetSbpFn(DropoutGradGetSbp);
  ops.push_back(SparseCe("sparse_softmax_cross_entropy", false));
  ops.push_back(SparseCe("sparse_softmax_cross_entropy_ms", true));
  ops.push_back(SparseCeGrad("sparse_softmax_cross_entropy_grad", false));
  ops.push_back(SparseCeGrad("sparse_softmax_cross_entropy_ms_grad", true));
  ops.emplace_back("bias_add");
  ops.back().Input("a").Input("b").Output("out")
      .Attr("axis", AttrValue(int64_t{1}))
      .SetShapeFn(BiasAddShape).SetGetSbpFn(BiasAddGetSbp);
  ops.emplace_back("conv2d");
  ops.back().Input("in").Input("weight").OptionalInput("bias").OptionalInput("_add_to_output")
      .Output("out")
      .RequiredAttr("filters", AttrType::kInt)
      .RequiredAttr("kernel_size", AttrType::kInts)
      .Attr("strides", AttrValue(std::vector<int64_t>{1, 1}))
      .Attr("padding_before", AttrValue(std::vector<int64_t>{0, 0}))
      .Attr("dilation_rate", AttrValue(std::vector<int64_t>{1, 1}))
      .Attr("groups", AttrValue(int64_t{1}))
      .Attr("data_format", AttrValue("channels_first"))
      .SetShapeFn(Conv2dShape).SetGetSbpFn(Conv2dGetSbp);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
