#include "kernels/common/matmul_plan.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {
namespace {

// Batch dim `i` of out in an operand whose batch dims are right-aligned
// with `pad` of them missing in front (a missing dim has extent 1).
struct BatchDim {
  int64_t logical = 1;
  int64_t local = 1;
};
BatchDim OperandBatchDim(const Shape& logical, const LocalDims& local, int pad, int i) {
  if (i < pad) return {};
  return {logical.dim(i - pad), local[i - pad]};
}

absl::StatusOr<MatmulPlan> PlanMatmul(const KernelContext& ctx) {
  const LocalTensor& a = ctx.input("a");
  const LocalTensor& b = ctx.input("b");
  const Shape& la = ctx.input_layout(0).logical.shape;
  const Shape& lb = ctx.input_layout(1).logical.shape;
  const Shape& lo = ctx.output_layout(0).logical.shape;
  const bool ta = ctx.Attr<bool>("transpose_a");
  const bool tb = ctx.Attr<bool>("transpose_b");
  const int ra = a.rank(), rb = b.rank(), batch = lo.rank() - 2;
  if (ra < 2 || rb < 2 || batch < 0) {
    return ctx.Internal(absl::StrCat("a_0 ", DimsToString(a.dims()), " and b_0 ",
                                     DimsToString(b.dims()), " are not matrices"));
  }
  MatmulPlan plan;
  plan.m = a.dim(ta ? ra - 1 : ra - 2);
  plan.k = a.dim(ta ? ra - 2 : ra - 1);
  const int64_t kb = b.dim(tb ? rb - 1 : rb - 2);
  plan.n = b.dim(tb ? rb - 2 : rb - 1);
  const std::string layouts = absl::StrCat(
      "(a_0 ", la.ToString(), " ", ctx.input_layout(0).nd_sbp.ToString(), " local ",
      DimsToString(a.dims()), ", b_0 ", lb.ToString(), " ", ctx.input_layout(1).nd_sbp.ToString(),
      " local ", DimsToString(b.dims()), ")");
  if (plan.k != kb) {
    return ctx.Internal(absl::StrCat("local contraction extents differ: ", plan.k, " in a_0, ", kb,
                                     " in b_0 ", layouts));
  }
  // Batch dims: the local extent of out, and each operand's matrix stride
  // (0 where it broadcasts).
  const int pad_a = batch - (ra - 2), pad_b = batch - (rb - 2);
  LocalDims stride_a(batch, 0), stride_b(batch, 0);
  plan.out_dims.resize(batch);
  int64_t sa = 1, sb = 1;
  for (int i = batch - 1; i >= 0; --i) {
    const BatchDim da = OperandBatchDim(la, a.dims(), pad_a, i);
    const BatchDim db = OperandBatchDim(lb, b.dims(), pad_b, i);
    const bool bcast_a = da.logical == 1 && lo.dim(i) != 1;
    const bool bcast_b = db.logical == 1 && lo.dim(i) != 1;
    if ((bcast_a && da.local != 1) || (bcast_b && db.local != 1) ||
        (!bcast_a && !bcast_b && da.local != db.local)) {
      return ctx.Internal(absl::StrCat("local batch dim ", i, " of out_0 cannot be formed from ",
                                       layouts));
    }
    // At most one operand broadcasts (both logical 1 means out's is 1).
    plan.out_dims[i] = bcast_a ? db.local : da.local;
    stride_a[i] = bcast_a ? 0 : sa;
    stride_b[i] = bcast_b ? 0 : sb;
    sa *= da.local;
    sb *= db.local;
  }
  int64_t matrices = 1;
  for (int64_t d : plan.out_dims) matrices *= d;
  LocalDims idx(batch, 0);
  for (int64_t o = 0; o < matrices; ++o) {
    int64_t ia = 0, ib = 0;
    for (int i = 0; i < batch; ++i) {
      ia += idx[i] * stride_a[i];
      ib += idx[i] * stride_b[i];
    }
    plan.a_matrix.push_back(ia);
    plan.b_matrix.push_back(ib);
    for (int i = batch - 1; i >= 0; --i) {
      if (++idx[i] < plan.out_dims[i]) break;
      idx[i] = 0;
    }
  }
  plan.out_dims.push_back(plan.m);
  plan.out_dims.push_back(plan.n);
  return plan;
}

}  // namespace

absl::StatusOr<MatmulPlan> CheckMatmul(const KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(MatmulPlan plan, PlanMatmul(ctx));
  const LocalTensor& a = ctx.input("a");
  const LocalTensor& b = ctx.input("b");
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, a.dtype()));
  if (ctx.has_input("_add_to_output") && ctx.input("_add_to_output").dims() != plan.out_dims) {
    return ctx.Internal(absl::StrCat("local _add_to_output_0 ",
                                     DimsToString(ctx.input("_add_to_output").dims()),
                                     " differs from local out_0 ", DimsToString(plan.out_dims)));
  }
  if (b.dtype() != a.dtype()) return ctx.UnsupportedDtype(b.dtype(), "b_0");
  return plan;
}

std::vector<MatmulRun> MatmulRuns(const MatmulPlan& plan) {
  std::vector<MatmulRun> runs;
  const int64_t total = static_cast<int64_t>(plan.a_matrix.size());
  for (int64_t i = 0; i < total;) {
    MatmulRun r;
    r.first = i;
    r.a_first = plan.a_matrix[i];
    r.b_first = plan.b_matrix[i];
    r.count = 1;
    if (i + 1 < total) {
      r.a_step = plan.a_matrix[i + 1] - r.a_first;
      r.b_step = plan.b_matrix[i + 1] - r.b_first;
    }
    if (r.a_step >= 0 && r.b_step >= 0) {
      while (i + r.count < total &&
             plan.a_matrix[i + r.count] == r.a_first + r.count * r.a_step &&
             plan.b_matrix[i + r.count] == r.b_first + r.count * r.b_step) {
        ++r.count;
      }
    }
    if (r.count == 1) r.a_step = r.b_step = 0;
    runs.push_back(r);
    i += r.count;
  }
  return runs;
}

}  // namespace oneflow_sbp::kernels
