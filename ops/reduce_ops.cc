// Reductions and softmax (SPEC.md §6).
//
// reduce_<op>(input_tensor; axis, keepdims) -> output_tensor. An empty
// axis list reduces nothing (frameworks expand "all dims" before the op). A kept dim
// keeps its split (renumbered when keepdims is false). Splitting a reduced
// dim leaves each rank with a partial result: for a sum that is exactly
// P, so reduce_sum emits S(i) -> P, and OneFlow follows each such candidate
// with P -> P (the pair repeats per reduced dim; the duplicates are kept
// because they shift N-D removal order, SPEC.md §9 #13). max/min/prod have
// no partial-sum form. A scalar input gives only P -> P.
//
// softmax/log_softmax normalise over the last dim, so any other dim may be
// split.
#include "ops/reduce_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/extended_partials.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

const OpArg kIn{"input_tensor", 0};
const OpArg kOut{"output_tensor", 0};

absl::StatusOr<std::vector<int>> ReducedAxes(const std::vector<int64_t>& axis, int rank) {
  return NormalizeAxes(axis, rank, "attribute axis");
}

absl::Status ReduceShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("input_tensor");
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes, ReducedAxes(ctx.Attr<std::vector<int64_t>>("axis"),
      in.shape.rank()));
  const bool keepdims = ctx.Attr<bool>("keepdims");
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int i = 0; i < in.shape.rank(); ++i) {
    const bool reduced = next < axes.size() && (axes)[next] == i;
    if (reduced) ++next;
    if (!reduced) dims.push_back(in.shape.dim(i));
    else if (keepdims) dims.push_back(1);
  }
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "output_tensor_0"));
  ctx.set_output("output_tensor", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

// How a reduction treats partial sums.
enum class Partial {
  kNone,       // max, min, prod: no partial-sum form
  kSum,        // sum, mean: S(reduced) -> P and P -> P
  kSplitOnly,  // nansum: S(reduced) -> P only (a NaN addend would poison P -> P)
};

// Kept dims keep their split; reduced dims give P as `partial` allows.
absl::Status ReduceGetSbp(SbpContext& ctx, Partial partial) {
  const int rank = ctx.input_desc("input_tensor").shape.rank();
  if (rank == 0) {
    ctx.NewBuilder().PartialSum(kIn).PartialSum(kOut).Build();
    return absl::OkStatus();
  }
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes, ReducedAxes(ctx.Attr<std::vector<int64_t>>("axis"),
      rank));
  const bool keepdims = ctx.Attr<bool>("keepdims");
  int reduced_before = 0;
  size_t next = 0;
  for (int i = 0; i < rank; ++i) {
    const bool reduced = next < axes.size() && (axes)[next] == i;
    if (reduced) {
      ++next;
      ++reduced_before;
      if (partial == Partial::kSum) {
        ctx.NewBuilder().Split(kIn, i).PartialSum(kOut).Build();
        ctx.NewBuilder().PartialSum(kIn).PartialSum(kOut).Build();
      }
    } else {
      ctx.NewBuilder().Split(kIn, i).Split(kOut, keepdims ? i : i - reduced_before).Build();
    }
  }
  // Ours: with no dim reduced a sum is the identity, which is linear;
  // OneFlow only emits P -> P next to reduced dims.
  if (partial == Partial::kSum) ctx.OursFollow();
  if (partial == Partial::kSum && axes.empty()) {
    ctx.NewBuilder().PartialSum(kIn).PartialSum(kOut).Build();
  }
  // Ours: OneFlow's reduce_nansum lists the kept dims' splits alone
  // (OneFlow 0.9.0 answers S(0) for nansum over a split dim 1 of
  // f32[4,6,8]); each rank's nansum of its slice sums to the answer.
  if (partial == Partial::kSplitOnly) {
    ctx.OursFollow();
    for (int i : axes) ctx.NewBuilder().Split(kIn, i).PartialSum(kOut).Build();
  }
  return absl::OkStatus();
}

OpDefBuilder Reduce(const char* name, Partial partial) {
  OpDefBuilder b(name);
  b.Input("input_tensor").Output("output_tensor")
      .RequiredAttr("axis", AttrType::kInts)
      .Attr("keepdims", AttrValue(false))
      .SetShapeFn(ReduceShape)
      .SetGetSbpFn([partial](SbpContext& ctx) { return ReduceGetSbp(ctx, partial); });
  return b;
}

absl::Status SoftmaxGetSbp(SbpContext& ctx) {
  const OpArg& in = ctx.inputs()[0];
  const int rank = ctx.input_desc(in.name, in.index).shape.rank();
  for (int i = 0; i + 1 < rank; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  return absl::OkStatus();
}

OpDefBuilder Softmax(const char* name, const char* out) {
  OpDefBuilder b(name);
  b.Input("in").Output(out)
      .SetShapeFn([out](ShapeContext& ctx) {
        ctx.set_output(out, 0, ctx.input("in"));
        return absl::OkStatus();
      })
      .SetGetSbpFn(SoftmaxGetSbp);
  return b;
}

}  // namespace

absl::Status RegisterReduceOps(OpRegistry* registry) {
  return RegisterAll(registry,
                     {Reduce("reduce_sum", Partial::kSum),
                      // Ours (OneFlow lowers mean to reduce_sum + scalar_mul): the
                      // kernel divides each rank's sum by the LOGICAL count, so
                      // the sum of the ranks' results is the mean.
                      Reduce("reduce_mean", Partial::kSum),
                      // OneFlow has no partial candidate; S(reduced) -> P is
                      // exact because NaNs are dropped before summing (ours).
                      Reduce("reduce_nansum", Partial::kSplitOnly),
                      Reduce("reduce_max", Partial::kNone)
                          .SetExtendedSbpFn(ReduceExtremumPartials(PartialKind::kMax)),
                      Reduce("reduce_min", Partial::kNone)
                          .SetExtendedSbpFn(ReduceExtremumPartials(PartialKind::kMin)),
                      Reduce("reduce_prod", Partial::kNone), Softmax("softmax", "out"),
                      Softmax("log_softmax", "prob")});
}

}  // namespace oneflow_sbp::ops
