// Elementwise unary ops, scalar ops, cast and identity.
//
// Rules (SPEC.md §6): a unary op keeps any split of its input
// (x:S(i) -> y:S(i) for every axis). Ops that are linear in their input
// also pass partial sums through (P -> P): scalar_mul, scalar_div,
// identity, and `negative`, which OneFlow forgot (ours, SPEC.md §9 #17);
// cast only where it keeps sums (CastKeepsSums).
#include "ops/elementwise_ops.h"

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

// y has x's desc. Works for any single-input, single-output op.
absl::Status SameAsInput(ShapeContext& ctx) {
  const OpArg& in = ctx.op().inputs()[0];
  const OpArg& out = ctx.op().outputs()[0];
  ctx.set_output(out.name, out.index, ctx.input(in.name, in.index));
  return absl::OkStatus();
}

absl::Status SplitEveryAxis(SbpContext& ctx) { return SplitForEachAxis(ctx); }

absl::Status SplitEveryAxisAndPartial(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// negative's rule: OneFlow's lacks the P -> P (SPEC.md §9 #17), which
// scalar_mul, scalar_div, identity and copy have.
absl::Status SplitEveryAxisThenOursPartial(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  ctx.OursFollow();
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// Whether a unary op passes partial sums through, and whose rule says so.
enum class PartialSums { kNone, kOneFlows, kOurs };

OpDefBuilder Unary(const std::string& name, const std::string& in,
                   const std::string& out, PartialSums partials) {
  OpDefBuilder b(name);
  b.Input(in).Output(out).SetShapeFn(SameAsInput).SetGetSbpFn(
      partials == PartialSums::kNone       ? SplitEveryAxis
      : partials == PartialSums::kOneFlows ? SplitEveryAxisAndPartial
                                           : SplitEveryAxisThenOursPartial);
  return b;
}

// OneFlow's scalar ops carry both operand kinds and flags saying which one
// is meant.
OpDefBuilder Scalar(const std::string& name, bool linear) {
  OpDefBuilder b = Unary(name, "in", "out", linear ? PartialSums::kOneFlows : PartialSums::kNone);
  b.Attr("has_int_operand", AttrValue(false))
      .Attr("has_float_operand", AttrValue(true))
      .Attr("int_operand", AttrValue(int64_t{0}))
      .Attr("float_operand", AttrValue(0.0));
  return b;
}

// OneFlow passes P through every cast. That is wrong when the cast is not
// additive: float -> integer truncates each addend (0.5 held as -2.5 + 3
// casts to -2 + 3 = 1, not 0), and anything -> bool or bool -> anything
// breaks sums. Integer -> integer wraps modulo 2^k, which is additive, and
// float -> float and integer -> float round as the sum itself would. So
// P -> P is offered unless the cast goes float -> integer or involves bool
// (fixed under every policy: a wrong result, SPEC.md preamble).
bool CastKeepsSums(DataType from, DataType to) {
  auto is_float = [](DataType t) {
    return t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 ||
           t == DataType::kFloat64;
  };
  if (from == DataType::kBool || to == DataType::kBool) return from == to;
  return !(is_float(from) && !is_float(to));
}

absl::Status CastGetSbp(SbpContext& ctx) {
  OFS_RETURN_IF_ERROR(SplitForEachAxis(ctx));
  const DataType from = ctx.input_desc("in").dtype;
  const DataType to = ctx.output_desc("out").dtype;
  if (CastKeepsSums(from, to)) {
    ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  }
  return absl::OkStatus();
}

absl::Status CastShape(ShapeContext& ctx) {
  absl::StatusOr<DataType> dtype = ParseDataType(ctx.Attr<std::string>("dtype"));
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute dtype: ", dtype.status().message()));
  }
  TensorDesc out = ctx.input("in");
  out.dtype = *dtype;
  ctx.set_output("out", 0, out);
  return absl::OkStatus();
}

// Nondecreasing everywhere they are defined on all reals (extended
// partials: ops/extended_partials.h says why log and sqrt are not here).
bool Nondecreasing(const std::string& name) {
  for (const char* n : {"relu", "tanh", "sigmoid", "exp", "erf", "floor", "ceil", "round",
                        "softplus", "identity", "copy"}) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

absl::Status RegisterElementwiseOps(OpRegistry* registry) {
  std::vector<OpDefBuilder> ops;
  // OneFlow names the args of these ops x -> y.
  for (const char* name : {"relu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt",
                           "square", "abs", "reciprocal", "sin", "cos", "erf",
                           "floor", "ceil", "round", "sign", "logical_not"}) {
    ops.push_back(Unary(name, "x", "y", PartialSums::kNone));
  }
  ops.push_back(Unary("negative", "x", "y", PartialSums::kOurs));
  // ... and these in -> out.
  for (const char* name : {"gelu", "fast_gelu", "silu", "mish", "softplus"}) {
    ops.push_back(Unary(name, "in", "out", PartialSums::kNone));
  }
  for (const char* name : {"scalar_add", "scalar_pow", "scalar_floordiv", "scalar_fmod"}) {
    ops.push_back(Scalar(name, /*linear=*/false));
  }
  for (const char* name : {"scalar_mul", "scalar_div"}) {
    ops.push_back(Scalar(name, /*linear=*/true));
  }
  ops.push_back(Unary("identity", "in", "out", PartialSums::kOneFlows));
  ops.push_back(Unary("copy", "in", "out", PartialSums::kOneFlows));
  for (OpDefBuilder& op : ops) {
    const std::string& name = op.type_name();
    if (Nondecreasing(name)) op.SetExtendedSbpFn(MonotoneUnaryPartials(/*nondecreasing=*/true));
    if (name == "negative") op.SetExtendedSbpFn(MonotoneUnaryPartials(/*nondecreasing=*/false));
    if (name == "scalar_add") op.SetExtendedSbpFn(ScalarPartials(/*multiplicative=*/false));
    if (name == "scalar_mul" || name == "scalar_div") {
      op.SetExtendedSbpFn(ScalarPartials(/*multiplicative=*/true));
    }
  }
  OpDefBuilder cast("cast");
  cast.Input("in").Output("out").RequiredAttr("dtype", AttrType::kString)
      .SetShapeFn(CastShape).SetGetSbpFn(CastGetSbp);
  ops.push_back(cast);
  return RegisterAll(registry, ops);
}

}  // namespace oneflow_sbp::ops
