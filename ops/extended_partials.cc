#include "ops/extended_partials.h"

#include <cstdint>
#include <vector>

#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

constexpr PartialKind kExtendedKinds[] = {PartialKind::kMax, PartialKind::kMin};

// -1, 0 or 1: the sign of the scalar operand OneFlow's scalar ops carry
// (int or float, as has_int_operand says).
int ScalarSign(SbpContext& ctx) {
  if (ctx.Attr<bool>("has_int_operand")) {
    const int64_t v = ctx.Attr<int64_t>("int_operand");
    return v > 0 ? 1 : v < 0 ? -1 : 0;
  }
  const double v = ctx.Attr<double>("float_operand");
  return v > 0 ? 1 : v < 0 ? -1 : 0;  // NaN: 0
}

}  // namespace

PartialKind Swapped(PartialKind kind) {
  return kind == PartialKind::kMax ? PartialKind::kMin
         : kind == PartialKind::kMin ? PartialKind::kMax
                                     : kind;
}

GetSbpFn MonotoneUnaryPartials(bool nondecreasing) {
  return [nondecreasing](SbpContext& ctx) {
    for (PartialKind k : kExtendedKinds) {
      ctx.NewBuilder()
          .Partial(ctx.inputs(), k)
          .Partial(ctx.outputs(), nondecreasing ? k : Swapped(k))
          .Build();
    }
    return absl::OkStatus();
  };
}

GetSbpFn ScalarPartials(bool multiplicative) {
  return [multiplicative](SbpContext& ctx) {
    const int sign = multiplicative ? ScalarSign(ctx) : 1;
    // x * 0 is 0 whatever the candidates, but x / 0 is not defined: no
    // candidate for a zero operand either way, which keeps the rule short.
    if (sign == 0) return absl::OkStatus();
    for (PartialKind k : kExtendedKinds) {
      ctx.NewBuilder()
          .Partial(ctx.inputs(), k)
          .Partial(ctx.outputs(), sign > 0 ? k : Swapped(k))
          .Build();
    }
    return absl::OkStatus();
  };
}

GetSbpFn AddSubPartials(bool subtract) {
  return [subtract](SbpContext& ctx) {
    const OpArg x{"x", 0}, y{"y", 0}, z{"z", 0};
    for (PartialKind k : kExtendedKinds) {
      ctx.NewBuilder().Partial(x, k).Broadcast(y).Partial(z, k).Build();
      ctx.NewBuilder().Broadcast(x).Partial(y, k).Partial(z, subtract ? Swapped(k) : k).Build();
    }
    return absl::OkStatus();
  };
}

GetSbpFn ExtremumPartials(PartialKind kind) {
  return [kind](SbpContext& ctx) {
    const OpArg x{"x", 0}, y{"y", 0}, z{"z", 0};
    ctx.NewBuilder().Partial(x, kind).Partial(y, kind).Partial(z, kind).Build();
    // With a B operand either kind passes: the op's own kind trivially,
    // the other by distributivity (see the header).
    for (PartialKind k : {kind, Swapped(kind)}) {
      ctx.NewBuilder().Partial(x, k).Broadcast(y).Partial(z, k).Build();
      ctx.NewBuilder().Broadcast(x).Partial(y, k).Partial(z, k).Build();
    }
    return absl::OkStatus();
  };
}

GetSbpFn MovePartials() {
  return [](SbpContext& ctx) {
    const std::vector<OpArg> inputs = ctx.inputs();
    for (PartialKind k : kExtendedKinds) {
      ctx.NewBuilder().Partial(inputs, k).Partial(ctx.outputs(), k).Build();
      if (inputs.size() < 2) continue;
      for (size_t partial = 0; partial < inputs.size(); ++partial) {
        SbpSignatureBuilder b = ctx.NewBuilder();
        for (size_t i = 0; i < inputs.size(); ++i) {
          if (i == partial) {
            b.Partial(inputs[i], k);
          } else {
            b.Broadcast(inputs[i]);
          }
        }
        b.Partial(ctx.outputs(), k).Build();
      }
    }
    return absl::OkStatus();
  };
}

GetSbpFn ReduceExtremumPartials(PartialKind kind) {
  return [kind](SbpContext& ctx) {
    const OpArg in{"input_tensor", 0}, out{"output_tensor", 0};
    const int rank = ctx.input_desc("input_tensor").shape.rank();
    if (rank > 0) {
      OFS_ASSIGN_OR_RETURN(std::vector<int> axes,
           NormalizeAxes(ctx.Attr<std::vector<int64_t>>("axis"), rank, "attribute axis"));
      for (int i : axes) ctx.NewBuilder().Split(in, i).Partial(out, kind).Build();
    }
    ctx.NewBuilder().Partial(in, kind).Partial(out, kind).Build();
    return absl::OkStatus();
  };
}

}  // namespace oneflow_sbp::ops
