// CPU kernels of the matmul family (rules in ops/matmul_ops.cc): matmul,
// batch_matmul and broadcast_matmul, one kernel for all three:
//   out = alpha * op(a) @ op(b) (+ _add_to_output)
// with op() transposing the last two dims when transpose_a / transpose_b.
//
// Every candidate of the rules is local arithmetic on local blocks:
// row-parallel (a:S(m)) and column-parallel (b:S(n)) give the rank its
// block of out; a contraction split (a:S(k) b:S(k)) and a:P or b:P give
// it an addend of out (P), which is exact because the product is linear
// in each operand and `_add_to_output` takes out's SBP, so a P addend is
// added once overall. Batch dims split alike on both operands (or on the
// one that is not broadcast) give the rank its batch block.
//
// Broadcasting of batch dims is decided by LOGICAL shapes (as
// broadcast_loop.h does): a batch dim of a (or b) broadcasts when its
// logical extent is 1 (or missing) while out's is not, and must then be 1
// locally; other batch dims must have the same local extent in every
// operand that has them. Local extents that disagree, or local k that
// differs between a and b, are a layout these kernels cannot compute
// (kInternal naming the blobs).
//
// Dtypes: f32 f64 through Eigen's GEMM (gemm.h); f16 bf16 multiplied in
// float and rounded once.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/status_macros.h"
#include "ops/kernels/cpu/gemm.h"
#include "ops/kernels/dtype_dispatch.h"
#include "ops/kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

struct MatmulPlan {
  LocalDims out_dims;
  int64_t m = 0, n = 0, k = 0;
  // Per matrix of out (row-major over out's batch dims): the index of the
  // matrix of a and of b it multiplies.
  std::vector<int64_t> a_matrix, b_matrix;
};

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

absl::Status MatmulKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const MatmulPlan plan, PlanMatmul(ctx));
  const LocalTensor& a = ctx.input("a");
  const LocalTensor& b = ctx.input("b");
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, a.dtype()));
  const bool has_add = ctx.has_input("_add_to_output");
  if (has_add && ctx.input("_add_to_output").dims() != plan.out_dims) {
    return ctx.Internal(absl::StrCat("local _add_to_output_0 ",
                                     DimsToString(ctx.input("_add_to_output").dims()),
                                     " differs from local out_0 ", DimsToString(plan.out_dims)));
  }
  if (b.dtype() != a.dtype()) return ctx.UnsupportedDtype(b.dtype(), "b_0");
  const bool ta = ctx.Attr<bool>("transpose_a");
  const bool tb = ctx.Attr<bool>("transpose_b");
  const double alpha = ctx.Attr<double>("alpha");
  return DispatchDtype<Floating>(ctx, a.dtype(), "a_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const ComputeInput<T> av(a), bv(b);
    ComputeOutput<T> out(ctx.output(0));
    if (has_add) {
      const ComputeInput<T> add(ctx.input("_add_to_output"));
      std::copy(add.data(), add.data() + ctx.output(0).elem_cnt(), out.data());
    }
    const int64_t a_size = plan.m * plan.k, b_size = plan.k * plan.n, o_size = plan.m * plan.n;
    for (size_t i = 0; i < plan.a_matrix.size(); ++i) {
      Gemm<C>(ta, tb, plan.m, plan.n, plan.k, static_cast<C>(alpha),
              av.data() + plan.a_matrix[i] * a_size, bv.data() + plan.b_matrix[i] * b_size,
              has_add, out.data() + static_cast<int64_t>(i) * o_size);
    }
    out.Finish();
    return absl::OkStatus();
  });
}

absl::Status RegisterMatmulKernels(KernelRegistry& registry) {
  const std::vector<DataType> dtypes = DtypesOf(Floating{});
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"batch_matmul", MatmulKernel, dtypes},
                          {"broadcast_matmul", MatmulKernel, dtypes},
                          {"matmul", MatmulKernel, dtypes}});
}

OFS_REGISTER_KERNELS(RegisterMatmulKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
