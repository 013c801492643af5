// Activation gradients, dropout, cross entropy, bias_add and conv2d (the
// norms are in norm_ops.cc). Candidate lists in emission order (the engine appends
// all-B): OneFlow's own list first and exactly (SPEC.md §6 where listed,
// else OneFlow's GetSbp at the reference commit), then ours, each marked
// "ours" at the rule with the reason it is exact. r = rank of input 0.
//
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
#include "ops/nn_ops.h"

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


const OpArg kX{"x", 0};
const OpArg kDy{"dy", 0};
const OpArg kDx{"dx", 0};
const OpArg kWeight{"weight", 0};
const OpArg kAddTo{"_add_to_output", 0};

// ---------------------------------------------------------------------------
// Activation grads: (saved, dy) -> dx with saved and dy alike.

absl::Status ActivationGradShape(ShapeContext& ctx) {
  const OpArg& saved = ctx.op().inputs()[0];
  OFS_RETURN_IF_ERROR(
      CheckSameDesc(ctx.input("dy"), "dy_0", ctx.input(saved.name), FirstBlob(saved.name)));
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

// relu_grad, gelu_grad, silu_grad: dx = dy * f'(saved), elementwise. dx
// is linear in dy for a fixed saved tensor, so a whole saved tensor and
// partial dy give partial dx: OneFlow emits that for gelu_grad, and
// relu_grad and silu_grad lack it (`partial_is_ours`).
absl::Status ElementwiseGradSbp(SbpContext& ctx, bool partial_is_ours) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  if (partial_is_ours) ctx.OursFollow();
  ctx.NewBuilder().Broadcast(ctx.inputs()[0]).PartialSum(kDy).PartialSum(kDx).Build();
  return absl::OkStatus();
}
absl::Status ElementwiseGradGetSbp(SbpContext& ctx) { return ElementwiseGradSbp(ctx, false); }
absl::Status ElementwiseGradOursPartialGetSbp(SbpContext& ctx) {
  return ElementwiseGradSbp(ctx, true);
}

// ---------------------------------------------------------------------------
// dropout

absl::Status DropoutShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  const double rate = ctx.Attr<double>("rate");
  if (!(rate >= 0.0 && rate <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute rate ", rate, " must be in [0, 1]"));
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
    return absl::InvalidArgumentError(absl::StrCat("attribute scale ", scale, " must be >= 1 (it is 1 / (1 - rate))"));
  }
  if (mask.dtype != DataType::kBool || mask.shape != dy.shape) {
    return absl::InvalidArgumentError(absl::StrCat("mask_0 is ", mask.ToString(), " but must be ",
                                TensorDesc{dy.shape, DataType::kBool}.ToString(),
                                " (bool, shaped like dy_0 ", dy.ToString(), ")"));
  }
  ctx.set_output("dx", 0, dy);
  return absl::OkStatus();
}

absl::Status DropoutGradGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  // Ours: dx = dy * mask * scale is linear in dy for a whole mask.
  ctx.OursFollow();
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
  const std::string lbn = FirstBlob(logits_arg);
  OFS_RETURN_IF_ERROR(CheckRank(logits, lbn, 2, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckIndexDtype(label, "label_0", "label"));
  const int r = logits.shape.rank();
  if (label.shape != SubShape(logits.shape, 0, r - 1)) {
    return absl::InvalidArgumentError(absl::StrCat("label_0 is ", label.ToString(), " but must have shape ",
                                SubShape(logits.shape, 0, r - 1).ToString(), " (", lbn, " ",
                                logits.ToString(), " without its class dim)"));
  }
  const int64_t depth = ctx.Attr<int64_t>("depth");
  if (depth != logits.shape.dim(r - 1)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute depth ", depth, " does not match the class dim of ",
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
    return absl::InvalidArgumentError(absl::StrCat("dy_0 is ", ctx.input("dy").ToString(), " but must be ",
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
    return absl::InvalidArgumentError(absl::StrCat("b_0 is ", b.ToString(), " but must be 1-D with extent ",
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
  ctx.OursFollow();
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
    return absl::InvalidArgumentError(absl::StrCat("attribute ", attr, " [", absl::StrJoin(v, ","),
                                "] must have 2 entries, each >= ", min));
  }
  return v;
}

absl::Status Conv2dShape(ShapeContext& ctx) {
  const std::string df = ctx.Attr<std::string>("data_format");
  if (df != "channels_first") {
    return absl::InvalidArgumentError(absl::StrCat("attribute data_format \"", df,
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
    return absl::InvalidArgumentError(absl::StrCat("attributes filters ", filters, " and groups ", groups,
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
    return absl::InvalidArgumentError(absl::StrCat("weight_0 is ", w.ToString(), " but must have shape ",
                                want_w.ToString(), " = [filters, in channels / groups, ",
                                "kernel_size] (in_0 ", in.ToString(), ", groups ", groups, ")"));
  }
  if (ctx.has_input("bias")) {
    const TensorDesc& bias = ctx.input("bias");
    if (bias != TensorDesc{Shape{filters}, in.dtype}) {
      return absl::InvalidArgumentError(absl::StrCat("bias_0 is ", bias.ToString(), " but must be ",
                                  TensorDesc{Shape{filters}, in.dtype}.ToString(),
                                  " (one per filter)"));
    }
  }
  std::vector<int64_t> dims = {in.shape.dim(0), filters, 0, 0};
  for (int s = 0; s < 2; ++s) {
    const int64_t padded = in.shape.dim(2 + s) + 2 * pad[s];
    const int64_t window = dil[s] * (ks[s] - 1) + 1;
    if (window > padded) {
      return absl::InvalidArgumentError(absl::StrCat("kernel_size[", s, "]=", ks[s], " (dilated to ", window,
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
  ctx.OursFollow();
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
  ops.push_back(ActivationGrad("softmax_grad", "y", SoftmaxGradGetSbp));
  ops.push_back(ActivationGrad("log_softmax_grad", "prob", SoftmaxGradGetSbp));
  ops.push_back(ActivationGrad("relu_grad", "y", ElementwiseGradOursPartialGetSbp));
  ops.push_back(ActivationGrad("gelu_grad", "x", ElementwiseGradGetSbp));
  ops.push_back(ActivationGrad("silu_grad", "x", ElementwiseGradOursPartialGetSbp));
  ops.emplace_back("dropout");
  ops.back().Input("in").OptionalInput("_add_to_output").Output("out").Output("mask")
      .Attr("rate", AttrValue(0.5))
      // Keys the mask's counter-based generator (kernels/philox.h): the
      // mask is a function of (seed, global element index), so it does not
      // depend on the layout.
      .Attr("seed", AttrValue(int64_t{0}))
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
