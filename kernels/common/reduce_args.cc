#include "kernels/common/reduce_args.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

absl::StatusOr<ReducePlan> Plan(const KernelContext& ctx, bool keepdims) {
  const LocalTensor& x = ctx.input(0);
  const int rank = x.rank();
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes,
                       ctx.Annotate(ops::NormalizeAxes(ctx.Attr<std::vector<int64_t>>("axis"),
                                                       rank, "attribute axis")));
  ReducePlan plan;
  plan.reduced.assign(rank, false);
  for (int a : axes) plan.reduced[a] = true;
  for (int d = 0; d < rank; ++d) {
    if (!plan.reduced[d]) plan.out_dims.push_back(x.dim(d));
    else if (keepdims) plan.out_dims.push_back(1);
  }
  return plan;
}

}  // namespace

absl::StatusOr<ReducePlan> PlanReduce(const KernelContext& ctx) {
  return Plan(ctx, ctx.Attr<bool>("keepdims"));
}

absl::StatusOr<ReducePlan> PlanReduceSumLike(const KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  const bool keepdims = ctx.input_layout(1).logical.shape.rank() == x.rank();
  OFS_ASSIGN_OR_RETURN(ReducePlan plan, Plan(ctx, keepdims));
  if (plan.out_dims != ctx.input(1).dims()) {
    return ctx.Internal(absl::StrCat("x_0's local block ", DimsToString(x.dims()),
                                     " reduces to ", DimsToString(plan.out_dims),
                                     " but like_0's is ", DimsToString(ctx.input(1).dims())));
  }
  return plan;
}

double LogicalReducedCount(const KernelContext& ctx, const std::vector<bool>& reduced) {
  double count = 1;
  const Shape& logical = ctx.input_layout(0).logical.shape;
  for (int d = 0; d < logical.rank(); ++d) {
    if (reduced[d]) count *= static_cast<double>(logical.dim(d));
  }
  return count;
}

}  // namespace oneflow_sbp::kernels
