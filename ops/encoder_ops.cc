// Sentence-encoder head ops (ours): what sentence-transformers runs after
// the BERT trunk (all-MiniLM-L6-v2: Pooling(mean) then Normalize).
//
// masked_mean_pool(x, mask) -> (y)
//   x [B, S, H] floating, mask [B, S] of any dtype (nonzero = keep the
//   token: HF's attention_mask), y [B, H] in x's dtype:
//     y[b, :] = sum_s x[b, s, :] * keep[b, s] / max(count[b], 1e-9),
//     keep = (mask != 0), count[b] = sum_s keep[b, s].
//   sentence-transformers multiplies by the mask's value cast to float; for
//   the 0/1 masks tokenizers give that is the same, and reading the mask as
//   keep flags makes bool, int and float masks agree. A row with no kept
//   token gives 0 (0 / 1e-9), never NaN.
//   Rules: batch rows are independent (x, mask:S(0) -> y:S(0)); H is
//   elementwise (x:S(2) mask:B -> y:S(1)); y is linear in x (x:P mask:B ->
//   y:P). No split of S: a rank's partial sum would be divided by its own
//   count, and the mean of the parts is not the mean.
// masked_mean_pool_grad(dy, mask) -> (dx)
//   dy [B, H], mask [B, S] -> dx [B, S, H] in dy's dtype:
//     dx[b, s, :] = dy[b, :] * keep[b, s] / max(count[b], 1e-9).
//   Rules: dy, mask:S(0) -> dx:S(0); dy:S(1) mask:B -> dx:S(2); linear in
//   dy (dy:P mask:B -> dx:P). The count needs the whole mask row, so the
//   sequence never splits here either.
// l2_normalize(x; axis = -1, epsilon = 1e-12) -> (y)
//   y = x / max(||x||_2 along axis, epsilon) (torch.nn.functional.normalize
//   with p = 2). Rules: every dim but `axis` splits alike (x:S(i) ->
//   y:S(i)); not linear, so no P.
// l2_normalize_grad(dy, x; axis, epsilon) -> (dx), with n = ||x|| along axis:
//   n >= epsilon: dx = (dy - y * sum(dy * y)) / n, y = x / n;
//   n <  epsilon: dx = dy / epsilon (the clamp passes no gradient to n;
//   at n == epsilon torch's clamp_min passes it, and so do we).
//   Rules: dy, x:S(i) -> dx:S(i) for i != axis; linear in dy (dy:P x:B ->
//   dx:P).
//
// OneFlow has an l2_normalize of another contract (outputs y and
// square_x_sum, y = x / sqrt(max(sum(x^2), epsilon)), axis default 0): ours
// follows torch's normalize, which is what the sentence-transformers model
// calls (docs/OPS.md lists the difference).
#include "ops/encoder_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

const OpArg kX{"x", 0};
const OpArg kDy{"dy", 0};
const OpArg kMask{"mask", 0};

// mask [B, S] for batch B and sequence S taken from `from` (named `fb`).
absl::Status CheckPoolMask(const TensorDesc& mask, int64_t b, int64_t s, const TensorDesc& from,
                           absl::string_view fb, absl::string_view layout) {
  const Shape want({b, s});
  if (mask.shape == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("mask_0 ", mask.ToString(),
                                                 " must be [B, S] = ", want.ToString(), " for ",
                                                 fb, " ", from.ToString(), " ", layout));
}

// ---------------------------------------------------------------------------
// masked_mean_pool and its grad

absl::Status PoolShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(CheckRank(x, "x_0", 3));
  OFS_RETURN_IF_ERROR(CheckFloatingDtype(x, "x_0"));
  OFS_RETURN_IF_ERROR(
      CheckPoolMask(ctx.input("mask"), x.shape.dim(0), x.shape.dim(1), x, "x_0", "[B,S,H]"));
  ctx.set_output("y", 0, TensorDesc{Shape({x.shape.dim(0), x.shape.dim(2)}), x.dtype});
  return absl::OkStatus();
}

absl::Status PoolGetSbp(SbpContext& ctx) {
  ctx.NewBuilder().Split({kX, kMask}, 0).Split(ctx.outputs(), 0).Build();
  ctx.NewBuilder().Split(kX, 2).Broadcast(kMask).Split(ctx.outputs(), 1).Build();
  ctx.NewBuilder().PartialSum(kX).Broadcast(kMask).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

absl::Status PoolGradShape(ShapeContext& ctx) {
  const TensorDesc& dy = ctx.input("dy");
  const TensorDesc& mask = ctx.input("mask");
  OFS_RETURN_IF_ERROR(CheckRank(dy, "dy_0", 2));
  OFS_RETURN_IF_ERROR(CheckFloatingDtype(dy, "dy_0"));
  OFS_RETURN_IF_ERROR(CheckRank(mask, "mask_0", 2));
  OFS_RETURN_IF_ERROR(
      CheckPoolMask(mask, dy.shape.dim(0), mask.shape.dim(1), dy, "dy_0", "[B,H]"));
  ctx.set_output("dx", 0,
                 TensorDesc{Shape({dy.shape.dim(0), mask.shape.dim(1), dy.shape.dim(1)}),
                            dy.dtype});
  return absl::OkStatus();
}

absl::Status PoolGradGetSbp(SbpContext& ctx) {
  ctx.NewBuilder().Split({kDy, kMask}, 0).Split(ctx.outputs(), 0).Build();
  ctx.NewBuilder().Split(kDy, 1).Broadcast(kMask).Split(ctx.outputs(), 2).Build();
  ctx.NewBuilder().PartialSum(kDy).Broadcast(kMask).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// l2_normalize and its grad

// The normalised axis of x (attribute axis, negative from the end) after
// checking x and epsilon.
template <typename Ctx>
absl::StatusOr<int> L2Axis(Ctx& ctx, const TensorDesc& x) {
  OFS_RETURN_IF_ERROR(CheckRank(x, "x_0", 1, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckFloatingDtype(x, "x_0"));
  const double eps = ctx.template Attr<double>("epsilon");
  // !(eps >= 0) also refuses NaN.
  if (!(eps >= 0) || std::isinf(eps)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute epsilon ", eps, " must be finite and >= 0"));
  }
  return AxisOf(ctx, "axis", x, "x_0");
}

absl::Status L2Shape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(L2Axis(ctx, x).status());
  ctx.set_output("y", 0, x);
  return absl::OkStatus();
}

absl::Status L2GradShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(L2Axis(ctx, x).status());
  OFS_RETURN_IF_ERROR(CheckSameDesc(ctx.input("dy"), "dy_0", x, "x_0"));
  ctx.set_output("dx", 0, x);
  return absl::OkStatus();
}

// Every dim but the normalised one splits alike; the grad adds dy:P.
absl::Status L2GetSbp(SbpContext& ctx, bool grad) {
  const TensorDesc& x = ctx.input_desc("x");
  OFS_ASSIGN_OR_RETURN(const int axis, L2Axis(ctx, x));
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (i == axis) continue;
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  if (grad) ctx.NewBuilder().PartialSum(kDy).Broadcast(kX).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterEncoderOps(OpRegistry* registry) {
  std::vector<OpDefBuilder> ops;
  ops.emplace_back("l2_normalize");
  ops.back().Input("x").Output("y")
      .Attr("axis", AttrValue(int64_t{-1}))
      .Attr("epsilon", AttrValue(1e-12))
      .Doc("y = x / max(||x||_2 along axis, epsilon) (torch.nn.functional.normalize).")
      .SetShapeFn(L2Shape)
      .SetGetSbpFn([](SbpContext& ctx) { return L2GetSbp(ctx, /*grad=*/false); });
  ops.emplace_back("l2_normalize_grad");
  ops.back().Input("dy").Input("x").Output("dx")
      .Attr("axis", AttrValue(int64_t{-1}))
      .Attr("epsilon", AttrValue(1e-12))
      .Doc("dx of l2_normalize: (dy - y*sum(dy*y)) / n for n = ||x|| >= epsilon, else "
           "dy / epsilon.")
      .SetShapeFn(L2GradShape)
      .SetGetSbpFn([](SbpContext& ctx) { return L2GetSbp(ctx, /*grad=*/true); });
  ops.emplace_back("masked_mean_pool");
  ops.back().Input("x").Input("mask").Output("y")
      .Doc("y[b,:] = sum_s x[b,s,:]*(mask[b,s] != 0) / max(count of kept s, 1e-9); x [B,S,H], "
           "mask [B,S] of any dtype.")
      .SetShapeFn(PoolShape).SetGetSbpFn(PoolGetSbp);
  ops.emplace_back("masked_mean_pool_grad");
  ops.back().Input("dy").Input("mask").Output("dx")
      .Doc("dx[b,s,:] = dy[b,:]*(mask[b,s] != 0) / max(count of kept s, 1e-9).")
      .SetShapeFn(PoolGradShape).SetGetSbpFn(PoolGradGetSbp);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
