// The built-in backward rules: each op's gradient as catalog ops run
// through Apply, so every gradient op gets its own inferred signature and
// boxing. Registered once by RegisterBuiltinBackwardRules (eager_context.cc
// calls it).
#include "eager/backward_rules.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "eager/apply.h"
#include "eager/autograd.h"
#include "eager/einsum_backward.h"
#include "eager/tensor_layout.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::eager {
namespace {

using Grads = absl::StatusOr<std::vector<GlobalTensor>>;

std::vector<int64_t> ShapeVector(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

// `g` summed over the dims `like` broadcast along (NumPy right alignment),
// shaped like `like`: the gradient of a broadcasting binary op's operand.
absl::StatusOr<GlobalTensor> ReduceToShape(EagerContext& ctx, const GlobalTensor& g,
                                           const GlobalTensor& like) {
  if (g.shape() == like.shape()) return g;
  const int gr = g.shape().rank();
  const int lr = like.shape().rank();
  std::vector<int64_t> axes;
  for (int i = 0; i < gr; ++i) {
    const int j = i - (gr - lr);
    if (j < 0 || like.shape().dim(j) == 1) axes.push_back(i);
  }
  GlobalTensor summed = g;
  if (!axes.empty()) {
    // Sum with keepdims, then reshape to like's shape (drops leading dims).
    OFS_ASSIGN_OR_RETURN(summed, Apply1(ctx, "reduce_sum", {g},
                                        Attrs({{"axis", AttrValue(axes)},
                                               {"keepdims", AttrValue(true)}})));
  }
  if (summed.shape() == like.shape()) return summed;
  return Apply1(ctx, "reshape", {summed},
                Attrs({{"shape", AttrValue(ShapeVector(like.shape()))}}));
}

GlobalTensor Undefined() { return GlobalTensor(); }

// ---------------------------------------------------------------- matmul --

// out = alpha * op(a) op(b); grads through the same op with flags swapped.
Grads MatmulGrad(BackwardContext& c, absl::string_view op) {
  EagerContext& ctx = c.ctx();
  const bool ta = c.Attr<bool>("transpose_a");
  const bool tb = c.Attr<bool>("transpose_b");
  const double alpha = c.Attr<double>("alpha");
  const GlobalTensor& a = c.input(0);
  const GlobalTensor& b = c.input(1);
  const GlobalTensor& dy = c.output_grad(0);
  auto mm = [&](const GlobalTensor& x, const GlobalTensor& y, bool tx, bool ty) {
    return Apply1(ctx, op, {x, y},
                  Attrs({{"transpose_a", AttrValue(tx)}, {"transpose_b", AttrValue(ty)},
                         {"alpha", AttrValue(alpha)}}));
  };
  std::vector<GlobalTensor> grads(c.num_inputs());
  if (c.needs_input_grad(0)) {
    OFS_ASSIGN_OR_RETURN(GlobalTensor da, !ta ? mm(dy, b, false, !tb) : mm(b, dy, tb, true));
    grads[0] = da;
  }
  if (c.needs_input_grad(1)) {
    OFS_ASSIGN_OR_RETURN(GlobalTensor db, !tb ? mm(a, dy, !ta, false) : mm(dy, a, true, ta));
    grads[1] = db;
  }
  return grads;
}

// a [..., m, k] x b [k, n]: a's grad is a broadcast_matmul; b's sums over
// the batch dims, so both sides are flattened to 2-D matrices first.
Grads BroadcastMatmulGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  const bool ta = c.Attr<bool>("transpose_a");
  const bool tb = c.Attr<bool>("transpose_b");
  const double alpha = c.Attr<double>("alpha");
  if (ta) return absl::UnimplementedError("broadcast_matmul with transpose_a");
  const GlobalTensor& a = c.input(0);
  const GlobalTensor& b = c.input(1);
  const GlobalTensor& dy = c.output_grad(0);
  std::vector<GlobalTensor> grads(c.num_inputs());
  if (c.needs_input_grad(0)) {
    OFS_ASSIGN_OR_RETURN(grads[0],
                         Apply1(ctx, "broadcast_matmul", {dy, b},
                                Attrs({{"transpose_b", AttrValue(!tb)},
                                       {"alpha", AttrValue(alpha)}})));
  }
  if (c.needs_input_grad(1)) {
    const int64_t k = a.shape().dim(a.shape().rank() - 1);
    const int64_t n = dy.shape().dim(dy.shape().rank() - 1);
    OFS_ASSIGN_OR_RETURN(GlobalTensor a2, Apply1(ctx, "reshape", {a},
                                                 Attrs({{"shape", AttrValue(std::vector<int64_t>{-1, k})}})));
    OFS_ASSIGN_OR_RETURN(GlobalTensor d2, Apply1(ctx, "reshape", {dy},
                                                 Attrs({{"shape", AttrValue(std::vector<int64_t>{-1, n})}})));
    // !tb: db = a2^T d2 [k, n]; tb: db = d2^T a2 [n, k].
    OFS_ASSIGN_OR_RETURN(grads[1],
                         Apply1(ctx, "matmul", {tb ? d2 : a2, tb ? a2 : d2},
                                Attrs({{"transpose_a", AttrValue(true)},
                                       {"alpha", AttrValue(alpha)}})));
  }
  return grads;
}

// ------------------------------------------------------------ elementwise --

Grads Passthrough(BackwardContext& c) {
  return std::vector<GlobalTensor>(c.num_inputs(), c.output_grad(0));
}

// dx = <grad_op>(first, dy), first = the op's input or output.
BackwardFn WithGradOp(const std::string& grad_op, bool use_output) {
  return [grad_op, use_output](BackwardContext& c) -> Grads {
    const GlobalTensor& first = use_output ? c.output(0) : c.input(0);
    OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), grad_op, {first, c.output_grad(0)}));
    return std::vector<GlobalTensor>{dx};
  };
}

// dx of input 0 through grad_op(dy, input `saved`) with the op's
// attributes; the other inputs (masked_mean_pool's mask) get none.
BackwardFn WithDyGradOp(const std::string& grad_op, int saved) {
  return [grad_op, saved](BackwardContext& c) -> Grads {
    std::vector<GlobalTensor> grads(c.num_inputs());
    OFS_ASSIGN_OR_RETURN(grads[0], Apply1(c.ctx(), grad_op, {c.output_grad(0), c.input(saved)},
                                          c.op().attrs()));
    return grads;
  };
}

// The same op with the same attributes on dy (linear ops: scalar_mul, tril, ...).
BackwardFn SameOpOnGrad() {
  return [](BackwardContext& c) -> Grads {
    OFS_ASSIGN_OR_RETURN(GlobalTensor dx,
                         Apply1(c.ctx(), c.op().type_name(), {c.output_grad(0)}, c.op().attrs()));
    return std::vector<GlobalTensor>{dx};
  };
}

Grads ScalarDivGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "scalar_div", {c.output_grad(0)}, c.op().attrs()));
  return std::vector<GlobalTensor>{dx};
}

Grads BroadcastAddGrad(BackwardContext& c, bool subtract) {
  std::vector<GlobalTensor> grads(2);
  const GlobalTensor& dy = c.output_grad(0);
  if (c.needs_input_grad(0)) {
    OFS_ASSIGN_OR_RETURN(grads[0], ReduceToShape(c.ctx(), dy, c.input(0)));
  }
  if (c.needs_input_grad(1)) {
    GlobalTensor g = dy;
    if (subtract) {
      OFS_ASSIGN_OR_RETURN(g, Apply1(c.ctx(), "negative", {dy}));
    }
    OFS_ASSIGN_OR_RETURN(grads[1], ReduceToShape(c.ctx(), g, c.input(1)));
  }
  return grads;
}

Grads BroadcastMulGrad(BackwardContext& c) {
  std::vector<GlobalTensor> grads(2);
  const GlobalTensor& dy = c.output_grad(0);
  for (int i : {0, 1}) {
    if (!c.needs_input_grad(i)) continue;
    OFS_ASSIGN_OR_RETURN(GlobalTensor g, Apply1(c.ctx(), "broadcast_mul", {dy, c.input(1 - i)}));
    OFS_ASSIGN_OR_RETURN(grads[i], ReduceToShape(c.ctx(), g, c.input(i)));
  }
  return grads;
}

// ------------------------------------------------------------------ views --

Grads ReshapeGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "reshape", {c.output_grad(0)},
                                               Attrs({{"shape", AttrValue(ShapeVector(c.input(0).shape()))}})));
  return std::vector<GlobalTensor>{dx};
}

Grads TransposeGrad(BackwardContext& c) {
  const std::vector<int64_t> perm = c.Attr<std::vector<int64_t>>("perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(perm.size()) : perm[i];
    inverse[p] = static_cast<int64_t>(i);
  }
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "transpose", {c.output_grad(0)},
                                               Attrs({{"perm", AttrValue(inverse)}})));
  return std::vector<GlobalTensor>{dx};
}

// -------------------------------------------------------------- reductions --

Grads ReduceSumGrad(BackwardContext& c, bool mean) {
  EagerContext& ctx = c.ctx();
  const GlobalTensor& x = c.input(0);
  std::vector<int64_t> axes = c.Attr<std::vector<int64_t>>("axis");
  const int rank = x.shape().rank();
  int64_t count = 1;
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    count *= x.shape().dim(static_cast<int>(a));
  }
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(ctx, "broadcast_like", {c.output_grad(0), Detach(x)},
                                               Attrs({{"broadcast_axes", AttrValue(axes)}})));
  if (mean) {
    OFS_ASSIGN_OR_RETURN(dx, Apply1(ctx, "scalar_mul", {dx},
                                    Attrs({{"float_operand", AttrValue(1.0 / static_cast<double>(count))}})));
  }
  return std::vector<GlobalTensor>{dx};
}

// ------------------------------------------------------------------ nn ops --

Grads RmsNormGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  const GlobalTensor& dy = c.output_grad(0);
  if (!dy.defined()) return std::vector<GlobalTensor>(c.num_inputs());
  const GlobalTensor& x = c.input(0);
  const GlobalTensor& inv_rms = c.output(1);
  const bool has_weight = c.num_inputs() > 1;
  std::vector<GlobalTensor> grads(c.num_inputs());
  if (c.needs_input_grad(0)) {
    std::vector<GlobalTensor> in = {dy, x, inv_rms};
    if (has_weight) in.push_back(c.input(1));
    OFS_ASSIGN_OR_RETURN(grads[0], Apply1(ctx, "rms_norm_grad", in));
  }
  if (has_weight && c.needs_input_grad(1)) {
    OFS_ASSIGN_OR_RETURN(grads[1], Apply1(ctx, "rms_norm_param_grad", {dy, x, inv_rms}));
  }
  return grads;
}

Grads LayerNormGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  const GlobalTensor& dy = c.output_grad(0);
  if (!dy.defined()) return std::vector<GlobalTensor>(c.num_inputs());
  const GlobalTensor& x = c.input(0);
  const GlobalTensor& mean = c.output(1);
  const GlobalTensor& inv = c.output(2);
  std::vector<GlobalTensor> grads(c.num_inputs());
  const int beta = c.op().InputBlob("beta", 0);
  const int gamma = c.op().InputBlob("gamma", 0);
  if (c.needs_input_grad(0)) {
    std::vector<GlobalTensor> in = {dy, x, mean, inv};
    if (gamma >= 0) in.push_back(c.input(gamma));
    OFS_ASSIGN_OR_RETURN(grads[0], Apply1(ctx, "layer_norm_grad", in,
                                          Attrs({{"begin_norm_axis", AttrValue(c.Attr<int64_t>("begin_norm_axis"))},
                                                 {"epsilon", AttrValue(c.Attr<double>("epsilon"))}})));
  }
  if ((beta >= 0 && c.needs_input_grad(beta)) || (gamma >= 0 && c.needs_input_grad(gamma))) {
    OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> pg,
                         Apply(ctx, "layer_norm_param_grad", {dy, x, mean, inv},
                               Attrs({{"begin_params_axis", AttrValue(c.Attr<int64_t>("begin_params_axis"))}})));
    if (gamma >= 0) grads[gamma] = pg[0];
    if (beta >= 0) grads[beta] = pg[1];
  }
  return grads;
}

Grads SparseCrossEntropyGrad(BackwardContext& c, const std::string& grad_op) {
  const GlobalTensor& dy = c.output_grad(1);
  if (!dy.defined()) return std::vector<GlobalTensor>(2);
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), grad_op, {dy, c.input(1), c.output(0)},
                                               Attrs({{"depth", AttrValue(c.Attr<int64_t>("depth"))}})));
  return std::vector<GlobalTensor>{dx, Undefined()};
}

Grads RotaryGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "rotary_embedding_grad",
                                               {c.output_grad(0), c.input(1), c.input(2)}));
  return std::vector<GlobalTensor>{dx, Undefined(), Undefined()};
}

// The key_padding_mask, if the call has one, goes to the grad op as its
// last input (detached: an int or bool mask has no gradient) and gets none.
Grads AttentionGrad(BackwardContext& c) {
  std::vector<GlobalTensor> in = {c.output_grad(0), c.input(0), c.input(1), c.input(2)};
  const int mask = c.op().InputBlob("key_padding_mask", 0);
  if (mask >= 0) in.push_back(Detach(c.input(mask)));
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> g,
                       Apply(c.ctx(), "scaled_dot_product_attention_grad", in, c.op().attrs()));
  g.resize(c.num_inputs());
  return g;
}

Grads EmbeddingGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dw, Apply1(c.ctx(), "embedding_grad",
                                               {c.output_grad(0), Detach(c.input(0)), c.input(1)},
                                               c.op().attrs()));
  return std::vector<GlobalTensor>{dw, Undefined()};
}

Grads DropoutGrad(BackwardContext& c) {
  const double rate = c.Attr<double>("rate");
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "dropout_grad", {c.output_grad(0), c.output(1)},
                                               Attrs({{"scale", AttrValue(1.0 / (1.0 - rate))}})));
  std::vector<GlobalTensor> grads(c.num_inputs());
  grads[0] = dx;
  return grads;
}

Grads CastGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "cast", {c.output_grad(0)},
                                               Attrs({{"dtype", AttrValue(std::string(DataTypeName(c.input(0).dtype())))}})));
  return std::vector<GlobalTensor>{dx};
}

// ------------------------------------------------ unary elementwise ops --
// Each dx is dy times f'(x), written with the catalog ops on the op's input
// x or output y (whichever gives f' with the fewest ops), in double where
// the tensors are: the rules add no arithmetic of their own.

absl::StatusOr<GlobalTensor> Mul(EagerContext& ctx, const GlobalTensor& a, const GlobalTensor& b) {
  return Apply1(ctx, "broadcast_mul", {a, b});
}

absl::StatusOr<GlobalTensor> Scale(EagerContext& ctx, const GlobalTensor& a, double factor) {
  return Apply1(ctx, "scalar_mul", {a}, Attrs({{"float_operand", AttrValue(factor)}}));
}

// 1 - t, as scalar_add(scalar_mul(t, -1), 1).
absl::StatusOr<GlobalTensor> OneMinus(EagerContext& ctx, const GlobalTensor& t) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor negated, Scale(ctx, t, -1.0));
  return Apply1(ctx, "scalar_add", {negated}, Attrs({{"float_operand", AttrValue(1.0)}}));
}

// d/dx exp(x) = exp(x) = y.
Grads ExpGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(c.ctx(), c.output_grad(0), c.output(0)));
  return std::vector<GlobalTensor>{dx};
}

// d/dx log(x) = 1 / x.
Grads LogGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx,
                       Apply1(c.ctx(), "broadcast_div", {c.output_grad(0), c.input(0)}));
  return std::vector<GlobalTensor>{dx};
}

// d/dx sigmoid(x) = y (1 - y).
Grads SigmoidGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  OFS_ASSIGN_OR_RETURN(GlobalTensor one_minus_y, OneMinus(ctx, c.output(0)));
  OFS_ASSIGN_OR_RETURN(GlobalTensor slope, Mul(ctx, c.output(0), one_minus_y));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(ctx, c.output_grad(0), slope));
  return std::vector<GlobalTensor>{dx};
}

// d/dx tanh(x) = 1 - y^2.
Grads TanhGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  OFS_ASSIGN_OR_RETURN(GlobalTensor y2, Mul(ctx, c.output(0), c.output(0)));
  OFS_ASSIGN_OR_RETURN(GlobalTensor slope, OneMinus(ctx, y2));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(ctx, c.output_grad(0), slope));
  return std::vector<GlobalTensor>{dx};
}

// d/dx sin(x) = cos(x); d/dx cos(x) = -sin(x).
Grads SinGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor cos_x, Apply1(c.ctx(), "cos", {Detach(c.input(0))}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(c.ctx(), c.output_grad(0), cos_x));
  return std::vector<GlobalTensor>{dx};
}

Grads CosGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor sin_x, Apply1(c.ctx(), "sin", {Detach(c.input(0))}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor product, Mul(c.ctx(), c.output_grad(0), sin_x));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), "negative", {product}));
  return std::vector<GlobalTensor>{dx};
}

// d/dx sqrt(x) = 1 / (2 y).
Grads SqrtGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor ratio,
                       Apply1(c.ctx(), "broadcast_div", {c.output_grad(0), c.output(0)}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Scale(c.ctx(), ratio, 0.5));
  return std::vector<GlobalTensor>{dx};
}

// d/dx x^-1/2 = -y^3 / 2.
Grads RsqrtGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  OFS_ASSIGN_OR_RETURN(GlobalTensor y2, Mul(ctx, c.output(0), c.output(0)));
  OFS_ASSIGN_OR_RETURN(GlobalTensor y3, Mul(ctx, y2, c.output(0)));
  OFS_ASSIGN_OR_RETURN(GlobalTensor product, Mul(ctx, c.output_grad(0), y3));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Scale(ctx, product, -0.5));
  return std::vector<GlobalTensor>{dx};
}

// d/dx x^2 = 2 x.
Grads SquareGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor product, Mul(c.ctx(), c.output_grad(0), Detach(c.input(0))));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Scale(c.ctx(), product, 2.0));
  return std::vector<GlobalTensor>{dx};
}

// d/dx 1/x = -y^2.
Grads ReciprocalGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  OFS_ASSIGN_OR_RETURN(GlobalTensor y2, Mul(ctx, c.output(0), c.output(0)));
  OFS_ASSIGN_OR_RETURN(GlobalTensor product, Mul(ctx, c.output_grad(0), y2));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(ctx, "negative", {product}));
  return std::vector<GlobalTensor>{dx};
}

// d/dx |x| = sign(x) (0 at 0, as PyTorch).
Grads AbsGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor sign, Apply1(c.ctx(), "sign", {Detach(c.input(0))}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(c.ctx(), c.output_grad(0), sign));
  return std::vector<GlobalTensor>{dx};
}

// d/dx softplus(x) = sigmoid(x).
Grads SoftplusGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor slope, Apply1(c.ctx(), "sigmoid", {Detach(c.input(0))}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(c.ctx(), c.output_grad(0), slope));
  return std::vector<GlobalTensor>{dx};
}

// d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2).
Grads ErfGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  OFS_ASSIGN_OR_RETURN(GlobalTensor x2, Apply1(ctx, "square", {Detach(c.input(0))}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor minus_x2, Scale(ctx, x2, -1.0));
  OFS_ASSIGN_OR_RETURN(GlobalTensor gauss, Apply1(ctx, "exp", {minus_x2}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor slope, Scale(ctx, gauss, 1.1283791670955126));  // 2/sqrt(pi)
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(ctx, c.output_grad(0), slope));
  return std::vector<GlobalTensor>{dx};
}

// d/dx x^p = p x^(p-1), p the op's operand (int or float).
Grads ScalarPowGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  const double p = c.Attr<bool>("has_int_operand") ? static_cast<double>(c.Attr<int64_t>("int_operand"))
                                                   : c.Attr<double>("float_operand");
  OFS_ASSIGN_OR_RETURN(GlobalTensor power,
                       Apply1(ctx, "scalar_pow", {Detach(c.input(0))},
                              Attrs({{"float_operand", AttrValue(p - 1.0)}})));
  OFS_ASSIGN_OR_RETURN(GlobalTensor slope, Scale(ctx, power, p));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Mul(ctx, c.output_grad(0), slope));
  return std::vector<GlobalTensor>{dx};
}

// out = a + b along `axis`: da = dy; db = dy summed over every other dim.
Grads BiasAddGrad(BackwardContext& c) {
  std::vector<GlobalTensor> grads(2);
  const GlobalTensor& dy = c.output_grad(0);
  if (c.needs_input_grad(0)) grads[0] = dy;
  if (c.needs_input_grad(1)) {
    int64_t axis = c.Attr<int64_t>("axis");
    const int rank = dy.shape().rank();
    if (axis < 0) axis += rank;
    std::vector<int64_t> others;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) others.push_back(d);
    }
    if (others.empty()) {
      grads[1] = dy;
    } else {
      OFS_ASSIGN_OR_RETURN(grads[1], Apply1(c.ctx(), "reduce_sum", {dy},
                                            Attrs({{"axis", AttrValue(others)}})));
    }
  }
  return grads;
}

// z = x / y: dx = dy / y; dy_ = -dy z / y, each summed to its operand's shape.
Grads BroadcastDivGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  std::vector<GlobalTensor> grads(2);
  const GlobalTensor& dz = c.output_grad(0);
  const GlobalTensor y = Detach(c.input(1));
  OFS_ASSIGN_OR_RETURN(GlobalTensor dz_over_y, Apply1(ctx, "broadcast_div", {dz, y}));
  if (c.needs_input_grad(0)) {
    OFS_ASSIGN_OR_RETURN(grads[0], ReduceToShape(ctx, dz_over_y, c.input(0)));
  }
  if (c.needs_input_grad(1)) {
    OFS_ASSIGN_OR_RETURN(GlobalTensor product, Mul(ctx, dz_over_y, c.output(0)));
    OFS_ASSIGN_OR_RETURN(GlobalTensor negated, Apply1(ctx, "negative", {product}));
    OFS_ASSIGN_OR_RETURN(grads[1], ReduceToShape(ctx, negated, c.input(1)));
  }
  return grads;
}

// ----------------------------------------------- slicing and joining --

// narrow and slice: their gradient ops scatter dy into zeros shaped like x.
BackwardFn ScatterIntoLike(const std::string& grad_op) {
  return [grad_op](BackwardContext& c) -> Grads {
    OFS_ASSIGN_OR_RETURN(GlobalTensor dx, Apply1(c.ctx(), grad_op,
                                                 {c.output_grad(0), Detach(c.input(0))},
                                                 c.op().attrs()));
    return std::vector<GlobalTensor>{dx};
  };
}

// expand broadcasts (NumPy right alignment): dx sums dy back to x's shape.
Grads ExpandGrad(BackwardContext& c) {
  OFS_ASSIGN_OR_RETURN(GlobalTensor dx, ReduceToShape(c.ctx(), c.output_grad(0), c.input(0)));
  return std::vector<GlobalTensor>{dx};
}

// cat along `axis`: each input's gradient is its stretch of dy.
Grads CatGrad(BackwardContext& c) {
  const int rank = c.output_grad(0).shape().rank();
  int64_t axis = c.Attr<int64_t>("axis");
  if (axis < 0) axis += rank;
  std::vector<GlobalTensor> grads(c.num_inputs());
  int64_t start = 0;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const int64_t length = c.input(i).shape().dim(static_cast<int>(axis));
    if (c.needs_input_grad(i)) {
      OFS_ASSIGN_OR_RETURN(grads[i], Apply1(c.ctx(), "narrow", {c.output_grad(0)},
                                            Attrs({{"dim", AttrValue(axis)},
                                                   {"start", AttrValue(start)},
                                                   {"length", AttrValue(length)}})));
    }
    start += length;
  }
  return grads;
}

// where(condition, x, y): dy flows to x where the condition holds and to y
// elsewhere, each summed to its operand's shape; the condition gets none.
Grads WhereGrad(BackwardContext& c) {
  EagerContext& ctx = c.ctx();
  const GlobalTensor& dout = c.output_grad(0);
  const GlobalTensor condition = Detach(c.input(0));
  OFS_ASSIGN_OR_RETURN(GlobalTensor zeros, Apply1(ctx, "zeros_like", {Detach(dout)}));
  std::vector<GlobalTensor> grads(3);
  if (c.needs_input_grad(1)) {
    OFS_ASSIGN_OR_RETURN(GlobalTensor kept, Apply1(ctx, "where", {condition, dout, zeros}));
    OFS_ASSIGN_OR_RETURN(grads[1], ReduceToShape(ctx, kept, c.input(1)));
  }
  if (c.needs_input_grad(2)) {
    OFS_ASSIGN_OR_RETURN(GlobalTensor kept, Apply1(ctx, "where", {condition, zeros, dout}));
    OFS_ASSIGN_OR_RETURN(grads[2], ReduceToShape(ctx, kept, c.input(2)));
  }
  return grads;
}

}  // namespace

absl::Status RegisterBuiltinBackwardRules() {
  // Each op's rule is named by its record (ops/records/*.toml, backward_fn);
  // ops/records/generate.py writes the entries, {"op", rule}, in op order.
  const std::vector<std::pair<std::string, BackwardFn>> rules = {
#include "eager/backward_rules_table.inc"
  };
  // An op an application gave a rule first keeps that rule.
  for (const auto& [op, fn] : rules) {
    if (FindBackward(op) != nullptr) continue;
    OFS_RETURN_IF_ERROR(RegisterBackward(op, fn));
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::eager
