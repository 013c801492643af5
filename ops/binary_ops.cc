// Binary broadcasting ops and add_n (SPEC.md §6.2 and §6).
//
// broadcast_<op>(x, y) -> z. Split candidates walk the dims of the result:
// a dim both operands have with equal extents splits both; a dim where one
// side is 1 (or missing) splits the other side and broadcasts this one;
// dims of extent 1 on both sides give nothing. OneFlow applies this only
// when the ranks are equal; with different ranks it pairs aligned dims as
// S/S whatever their sizes, so x(3,1) + y(2,3,4) can never keep y:S(2)
// (SPEC.md §9 #14). We treat aligned pairs as in the equal-rank case under
// every policy, keeping OneFlow's walk order. Partial candidates follow the
// maths: add/sub take P+P, mul takes one P side against B, div a P
// numerator over a B denominator; nothing else is linear.
#include "ops/binary_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/extended_partials.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

enum class PartialRule { kNone, kAddSub, kMul, kDiv };

const OpArg kX{"x", 0};
const OpArg kY{"y", 0};
const OpArg kZ{"z", 0};

absl::Status BroadcastShape(ShapeContext& ctx, bool boolean_result) {
  const TensorDesc& x = ctx.input("x");
  const TensorDesc& y = ctx.input("y");
  absl::Status s = CheckSameDtype(x, "x_0", y, "y_0");
  OFS_RETURN_IF_ERROR(s);
  OFS_ASSIGN_OR_RETURN(Shape z, BroadcastShapes(x.shape, "x_0", y.shape, "y_0"));
  ctx.set_output("z", 0, TensorDesc{z, boolean_result ? DataType::kBool : x.dtype});
  return absl::OkStatus();
}

// One aligned pair of dims (xi of x, yi of y) producing result dim zi.
void EmitAlignedPair(SbpContext& ctx, const Shape& xs, int xi, const Shape& ys,
                     int yi, int zi) {
  const int64_t dx = xs.dim(xi);
  const int64_t dy = ys.dim(yi);
  if (dx == 1 && dy == 1) return;
  if (dx == dy) {
    ctx.NewBuilder().Split(kX, xi).Split(kY, yi).Split(kZ, zi).Build();
  } else if (dx == 1) {
    ctx.NewBuilder().Broadcast(kX).Split(kY, yi).Split(kZ, zi).Build();
  } else {
    ctx.NewBuilder().Split(kX, xi).Broadcast(kY).Split(kZ, zi).Build();
  }
}

absl::Status BroadcastGetSbp(SbpContext& ctx, PartialRule partial) {
  const Shape& xs = ctx.input_desc("x").shape;
  const Shape& ys = ctx.input_desc("y").shape;
  const int rx = xs.rank();
  const int ry = ys.rank();
  if (rx == ry) {
    for (int i = 0; i < rx; ++i) EmitAlignedPair(ctx, xs, i, ys, i, i);
  } else if (rx < ry) {
    for (int i = 0; i < ry - rx; ++i) {
      ctx.NewBuilder().Broadcast(kX).Split(kY, i).Split(kZ, i).Build();
    }
    for (int j = 0; j < rx; ++j) {
      EmitAlignedPair(ctx, xs, rx - 1 - j, ys, ry - 1 - j, ry - 1 - j);
    }
  } else {
    for (int i = 0; i < rx - ry; ++i) {
      ctx.NewBuilder().Split(kX, i).Broadcast(kY).Split(kZ, i).Build();
    }
    for (int j = 0; j < ry; ++j) {
      EmitAlignedPair(ctx, xs, rx - 1 - j, ys, ry - 1 - j, rx - 1 - j);
    }
  }
  switch (partial) {
    case PartialRule::kAddSub:
      ctx.NewBuilder().PartialSum(kX).PartialSum(kY).PartialSum(kZ).Build();
      break;
    case PartialRule::kMul:
      ctx.NewBuilder().Broadcast(kX).PartialSum(kY).PartialSum(kZ).Build();
      ctx.NewBuilder().PartialSum(kX).Broadcast(kY).PartialSum(kZ).Build();
      break;
    case PartialRule::kDiv:
      ctx.NewBuilder().PartialSum(kX).Broadcast(kY).PartialSum(kZ).Build();
      break;
    case PartialRule::kNone:
      break;
  }
  return absl::OkStatus();
}

OpDefBuilder BroadcastOp(const std::string& name, PartialRule partial,
                         bool boolean_result) {
  OpDefBuilder b(name);
  b.Input("x").Input("y").Output("z")
      .SetShapeFn([boolean_result](ShapeContext& ctx) {
        return BroadcastShape(ctx, boolean_result);
      })
      .SetGetSbpFn([partial](SbpContext& ctx) { return BroadcastGetSbp(ctx, partial); });
  return b;
}

absl::Status AddNShape(ShapeContext& ctx) {
  const int n = ctx.input_count("in");
  const TensorDesc& first = ctx.input("in", 0);
  for (int i = 1; i < n; ++i) {
    const TensorDesc& d = ctx.input("in", i);
    if (d != first) {
      return absl::InvalidArgumentError(absl::StrCat(
          "in_", i, " is ", d.ToString(), " but in_0 is ", first.ToString(),
          "; add_n needs identical inputs"));
    }
  }
  ctx.set_output("out", 0, first);
  return absl::OkStatus();
}

absl::Status AddNGetSbp(SbpContext& ctx) {
  const int rank = ctx.input_desc("in", 0).shape.rank();
  for (int i = 0; i < rank; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterBinaryOps(OpRegistry* registry) {
  std::vector<OpDefBuilder> ops = {
      BroadcastOp("broadcast_add", PartialRule::kAddSub, false),
      BroadcastOp("broadcast_sub", PartialRule::kAddSub, false),
      BroadcastOp("broadcast_mul", PartialRule::kMul, false),
      BroadcastOp("broadcast_div", PartialRule::kDiv, false),
      BroadcastOp("broadcast_maximum", PartialRule::kNone, false),
      BroadcastOp("broadcast_minimum", PartialRule::kNone, false),
      BroadcastOp("broadcast_pow", PartialRule::kNone, false),
      BroadcastOp("broadcast_fmod", PartialRule::kNone, false),
      BroadcastOp("broadcast_equal", PartialRule::kNone, true),
      BroadcastOp("broadcast_not_equal", PartialRule::kNone, true),
      BroadcastOp("broadcast_greater", PartialRule::kNone, true),
      BroadcastOp("broadcast_greater_equal", PartialRule::kNone, true),
      BroadcastOp("broadcast_less", PartialRule::kNone, true),
      BroadcastOp("broadcast_less_equal", PartialRule::kNone, true),
  };
  for (OpDefBuilder& op : ops) {
    const std::string& name = op.type_name();
    if (name == "broadcast_add") op.SetExtendedSbpFn(AddSubPartials(/*subtract=*/false));
    if (name == "broadcast_sub") op.SetExtendedSbpFn(AddSubPartials(/*subtract=*/true));
    if (name == "broadcast_maximum") op.SetExtendedSbpFn(ExtremumPartials(PartialKind::kMax));
    if (name == "broadcast_minimum") op.SetExtendedSbpFn(ExtremumPartials(PartialKind::kMin));
  }
  OpDefBuilder add_n("add_n");
  add_n.VariadicInput("in").Output("out").SetShapeFn(AddNShape).SetGetSbpFn(AddNGetSbp);
  ops.push_back(add_n);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
