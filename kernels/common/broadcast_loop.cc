#include "kernels/common/broadcast_loop.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::kernels {

absl::StatusOr<BroadcastPlan> PlanBroadcast(const KernelContext& ctx,
                                            absl::Span<const int> inputs, int out) {
  const Shape& zs = ctx.output_layout(out).logical.shape;
  const int rank = zs.rank();
  BroadcastPlan plan;
  plan.out_dims.assign(rank, -1);
  for (int in : inputs) {
    const Shape& s = ctx.input_layout(in).logical.shape;
    const LocalTensor& t = ctx.input(in);
    const LocalDims local_strides = RowMajorStrides(t.dims());
    LocalDims strides(rank, 0);
    const int lead = rank - s.rank();
    if (lead < 0 || t.rank() != s.rank()) {
      return ctx.Internal(absl::StrCat(ctx.input_bn(in), " has rank ", t.rank(),
                                       " against a rank-", rank, " result"));
    }
    for (int d = lead; d < rank; ++d) {
      const int j = d - lead;
      if (s.dim(j) == 1 && zs.dim(d) != 1) {
        if (t.dim(j) != 1) {
          return ctx.Internal(absl::StrCat(ctx.input_bn(in), " broadcasts on dim ", j,
                                           " but holds ", t.dim(j), " elements there locally"));
        }
        continue;  // stride 0
      }
      if (plan.out_dims[d] >= 0 && plan.out_dims[d] != t.dim(j)) {
        return ctx.Internal(absl::StrCat(
            "local extents disagree on result dim ", d, ": ", ctx.input_bn(in), " holds ",
            t.dim(j), ", another operand ", plan.out_dims[d]));
      }
      plan.out_dims[d] = t.dim(j);
      strides[d] = local_strides[j];
    }
    plan.strides.push_back(strides);
  }
  for (int d = 0; d < rank; ++d) {
    // Only broadcasting operands cover this dim: the result holds one
    // element there (its logical extent is 1 then).
    if (plan.out_dims[d] < 0) plan.out_dims[d] = 1;
  }
  return plan;
}

}  // namespace oneflow_sbp::kernels
