// Attention ops (ours; OneFlow's fused attention ops differ in layout).
//
// scaled_dot_product_attention(query, key, value, opt key_padding_mask)
//   -> (out)
//   query [B, H, Sq, D], key [B, H, Sk, D], value [B, H, Sk, Dv] ->
//   out [B, H, Sq, Dv]; out = softmax(q k^T * scale [+ masks]) v,
//   scale = attribute `scale`, or 1/sqrt(D) when 0. With `causal`, query
//   row i (global) sees key columns j <= i + (Sk - Sq). key_padding_mask
//   [B, Sk] (bool, i32 or i64; nonzero = attend) hides the keys it zeroes
//   from every query row of that batch (BERT's attention_mask): they get
//   weight exactly 0, as HF BERT's additive large-negative mask gives in
//   effect. A row that sees no key (every key padded or causally hidden)
//   has no softmax: its out is 0, never NaN (the existing causal rule for
//   Sq > Sk). Without the mask the op is exactly the 3-input op.
//   Rules: batch and heads split everything alike (S(0), S(1)); the mask
//   follows the batch split and stays whole (B) otherwise (it has no head
//   dim, and every rank needs all Sk keys); query rows split alone with
//   key, value and mask broadcast (sequence parallelism: the causal mask
//   uses global row indices); out is linear in value, so value:P with
//   query, key and mask broadcast gives out:P.
// scaled_dot_product_attention_grad(dout, query, key, value, opt
//   key_padding_mask) -> (dquery, dkey, dvalue): the same batch and head
//   splits (mask as in the forward); query rows split with dout gives
//   dquery split and partial dkey, dvalue (each rank's rows contribute
//   addends); every grad is linear in dout, so dout:P with the rest
//   broadcast gives all three as P. Padded keys get dkey = dvalue = 0.
// rotary_embedding(x, cos, sin) -> (y), x [B, H, S, D], cos/sin [S, D]:
//   y = x*cos + rotate_half(x)*sin, rotate_half(x) = (-x2, x1) over the two
//   halves of D. Batch and heads split x alone; the sequence splits x with
//   cos and sin; linear in x (x:P). D never splits (the halves mix).
// rotary_embedding_grad(dy, cos, sin) -> (dx): the transpose, same rules.
// tril(in) -> (out): zeroes elements above diagonal `diagonal` of the last
//   two dims (global indices, so every dim may split); linear (P -> P).
#include "ops/attention_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

const OpArg kQuery{"query", 0};
const OpArg kKey{"key", 0};
const OpArg kValue{"value", 0};
const OpArg kDout{"dout", 0};
const OpArg kMask{"key_padding_mask", 0};

// Checks query/key/value and returns out's shape.
absl::StatusOr<Shape> AttentionOutShape(const TensorDesc& q, const TensorDesc& k,
                                        const TensorDesc& v) {
  OFS_RETURN_IF_ERROR(CheckRank(q, "query_0", 4));
  OFS_RETURN_IF_ERROR(CheckRank(k, "key_0", 4));
  OFS_RETURN_IF_ERROR(CheckRank(v, "value_0", 4));
  OFS_RETURN_IF_ERROR(CheckFloatingDtype(q, "query_0"));
  OFS_RETURN_IF_ERROR(CheckSameDtype(q, "query_0", k, "key_0"));
  OFS_RETURN_IF_ERROR(CheckSameDtype(q, "query_0", v, "value_0"));
  const Shape& qs = q.shape;
  const Shape& ks = k.shape;
  const Shape& vs = v.shape;
  if (ks.dim(0) != qs.dim(0) || vs.dim(0) != qs.dim(0) || ks.dim(1) != qs.dim(1) ||
      vs.dim(1) != qs.dim(1) || ks.dim(3) != qs.dim(3) || vs.dim(2) != ks.dim(2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "query_0 ", q.ToString(), ", key_0 ", k.ToString(), " and value_0 ", v.ToString(),
        " do not fit [B,H,Sq,D], [B,H,Sk,D], [B,H,Sk,Dv]"));
  }
  return Shape({qs.dim(0), qs.dim(1), qs.dim(2), vs.dim(3)});
}

// The optional key_padding_mask, if the call has one: [B, Sk] of key_0
// [B, H, Sk, D], dtype bool, i32 or i64 (HF tokenizers give int64, torch
// masks are bool). A float mask is refused rather than guessed at: an
// additive mask (0 / -inf) and a keep mask (1 / 0) would read alike.
absl::Status CheckKeyPaddingMask(ShapeContext& ctx) {
  if (!ctx.has_input("key_padding_mask")) return absl::OkStatus();
  const TensorDesc& m = ctx.input("key_padding_mask");
  const TensorDesc& k = ctx.input("key");
  const Shape want({k.shape.dim(0), k.shape.dim(2)});
  if (m.shape != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("key_padding_mask_0 ", m.ToString(), " must be [B, Sk] = ", want.ToString(),
                     " for key_0 ", k.ToString(), " [B,H,Sk,D]"));
  }
  if (m.dtype != DataType::kBool && m.dtype != DataType::kInt32 &&
      m.dtype != DataType::kInt64) {
    return absl::InvalidArgumentError(
        absl::StrCat("key_padding_mask_0 ", m.ToString(),
                     " must be bool, i32 or i64 (nonzero = attend to the key)"));
  }
  return absl::OkStatus();
}

absl::Status AttentionShape(ShapeContext& ctx) {
  const TensorDesc& q = ctx.input("query");
  OFS_ASSIGN_OR_RETURN(Shape out, AttentionOutShape(q, ctx.input("key"), ctx.input("value")));
  OFS_RETURN_IF_ERROR(CheckKeyPaddingMask(ctx));
  ctx.set_output("out", 0, TensorDesc{out, q.dtype});
  return absl::OkStatus();
}

// The mask [B, Sk] has the batch dim only: it splits with a batch split and
// is whole (B) for every other candidate. An absent mask is skipped by the
// builder, so 3-input calls get exactly the lists they had before it.
absl::Status AttentionGetSbp(SbpContext& ctx) {
  ctx.NewBuilder().Split(ctx.inputs(), 0).Split(ctx.outputs(), 0).Build();
  ctx.NewBuilder().Split({kQuery, kKey, kValue}, 1).Broadcast(kMask)
      .Split(ctx.outputs(), 1).Build();
  ctx.NewBuilder().Split(kQuery, 2).Broadcast({kKey, kValue, kMask})
      .Split(ctx.outputs(), 2).Build();
  ctx.NewBuilder().Broadcast({kQuery, kKey, kMask}).PartialSum(kValue)
      .PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

absl::Status AttentionGradShape(ShapeContext& ctx) {
  const TensorDesc& q = ctx.input("query");
  const TensorDesc& k = ctx.input("key");
  const TensorDesc& v = ctx.input("value");
  OFS_ASSIGN_OR_RETURN(Shape out, AttentionOutShape(q, k, v));
  OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("dout"), "dout_0", TensorDesc{out, q.dtype}, "out"));
  OFS_RETURN_IF_ERROR(CheckKeyPaddingMask(ctx));
  ctx.set_output("dquery", 0, q);
  ctx.set_output("dkey", 0, k);
  ctx.set_output("dvalue", 0, v);
  return absl::OkStatus();
}

// As the forward's: the mask splits with the batch and is B otherwise.
absl::Status AttentionGradGetSbp(SbpContext& ctx) {
  ctx.NewBuilder().Split(ctx.inputs(), 0).Split(ctx.outputs(), 0).Build();
  ctx.NewBuilder().Split({kDout, kQuery, kKey, kValue}, 1).Broadcast(kMask)
      .Split(ctx.outputs(), 1).Build();
  ctx.NewBuilder().Split({kDout, kQuery}, 2).Broadcast({kKey, kValue, kMask})
      .Split(OpArg{"dquery", 0}, 2).PartialSum({OpArg{"dkey", 0}, OpArg{"dvalue", 0}}).Build();
  ctx.NewBuilder().PartialSum(kDout).Broadcast({kQuery, kKey, kValue, kMask})
      .PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

absl::Status RotaryShape(ShapeContext& ctx, absl::string_view x_arg, absl::string_view y_arg) {
  const TensorDesc& x = ctx.input(x_arg);
  const TensorDesc& cos = ctx.input("cos");
  const TensorDesc& sin = ctx.input("sin");
  const std::string xb = FirstBlob(x_arg);
  OFS_RETURN_IF_ERROR(CheckRank(x, xb, 4));
  OFS_RETURN_IF_ERROR(CheckFloatingDtype(x, xb));
  OFS_RETURN_IF_ERROR(CheckSameDesc(cos, "cos_0", sin, "sin_0"));
  OFS_RETURN_IF_ERROR(CheckSameDtype(x, xb, cos, "cos_0"));
  const Shape want({x.shape.dim(2), x.shape.dim(3)});
  if (cos.shape != want || x.shape.dim(3) % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cos_0 and sin_0 ", cos.ToString(), " must be [S, D] = ", want.ToString(), " for ", xb,
        " ", x.ToString(), " [B,H,S,D] with D even"));
  }
  ctx.set_output(y_arg, 0, x);
  return absl::OkStatus();
}

absl::Status RotaryGetSbp(SbpContext& ctx) {
  const OpArg x = ctx.inputs()[0];
  const OpArg cos{"cos", 0};
  const OpArg sin{"sin", 0};
  for (int axis : {0, 1}) {
    ctx.NewBuilder().Split(x, axis).Broadcast({cos, sin}).Split(ctx.outputs(), axis).Build();
  }
  ctx.NewBuilder().Split(x, 2).Split({cos, sin}, 0).Split(ctx.outputs(), 2).Build();
  ctx.NewBuilder().PartialSum(x).Broadcast({cos, sin}).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

absl::Status TrilShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  OFS_RETURN_IF_ERROR(CheckRank(in, "in_0", 2, /*at_least=*/true));
  ctx.set_output("out", 0, in);
  return absl::OkStatus();
}

absl::Status TrilGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterAttentionOps(OpRegistry* registry) {
  std::vector<OpDefBuilder> ops;
  ops.emplace_back("rotary_embedding");
  ops.back().Input("x").Input("cos").Input("sin").Output("y")
      .Doc("y = x*cos + rotate_half(x)*sin over x [B,H,S,D], cos/sin [S,D].")
      .SetShapeFn([](ShapeContext& ctx) { return RotaryShape(ctx, "x", "y"); })
      .SetGetSbpFn(RotaryGetSbp);
  ops.emplace_back("rotary_embedding_grad");
  ops.back().Input("dy").Input("cos").Input("sin").Output("dx")
      .Doc("The transpose of rotary_embedding: dx = dy*cos - rotate_half(dy*sin).")
      .SetShapeFn([](ShapeContext& ctx) { return RotaryShape(ctx, "dy", "dx"); })
      .SetGetSbpFn(RotaryGetSbp);
  ops.emplace_back("scaled_dot_product_attention");
  ops.back().Input("query").Input("key").Input("value").OptionalInput("key_padding_mask")
      .Output("out")
      .Attr("causal", AttrValue(false))
      .Attr("scale", AttrValue(0.0))
      .Doc("softmax(q k^T * scale [+ causal mask] [+ key padding mask]) v over [B,H,S,D]; "
           "scale 0 means 1/sqrt(D); key_padding_mask [B,Sk] (bool/i32/i64, 0 = padded); "
           "a row that sees no key gives 0.")
      .SetShapeFn(AttentionShape).SetGetSbpFn(AttentionGetSbp);
  ops.emplace_back("scaled_dot_product_attention_grad");
  ops.back().Input("dout").Input("query").Input("key").Input("value")
      .OptionalInput("key_padding_mask")
      .Output("dquery").Output("dkey").Output("dvalue")
      .Attr("causal", AttrValue(false))
      .Attr("scale", AttrValue(0.0))
      .SetShapeFn(AttentionGradShape).SetGetSbpFn(AttentionGradGetSbp);
  ops.emplace_back("tril");
  ops.back().Input("in").Output("out")
      .Attr("diagonal", AttrValue(int64_t{0}))
      .Doc("Keeps elements (.., i, j) with j <= i + diagonal of the last two dims; zeros the rest.")
      .SetShapeFn(TrilShape).SetGetSbpFn(TrilGetSbp);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
