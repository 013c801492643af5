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
// Batch broadcasting and the layout checks: matmul_plan.h (shared with
// the CUDA glue).
//
// Dtypes: f32 f64 through Eigen's GEMM (gemm.h); f16 bf16 multiplied in
// float and rounded once.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "oneflow_sbp/values/status_macros.h"
#include "kernels/cpu/gemm.h"
#include "kernels/common/matmul_plan.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

absl::Status MatmulKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const MatmulPlan plan, CheckMatmul(ctx));
  const LocalTensor& a = ctx.input("a");
  const LocalTensor& b = ctx.input("b");
  const bool has_add = ctx.has_input("_add_to_output");
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
    for (const MatmulRun& r : MatmulRuns(plan)) {
      // A run that walks a's matrices in order against one b matrix (a
      // Linear layer: x [batch, s, in] times a shared weight) is one GEMM
      // of count * m rows when a is not transposed: its matrices and
      // out's are stacked rows of one row-major block. One call packs b
      // once instead of once per matrix, and gives the GEMM tall panels.
      if (!ta && r.count > 1 && r.a_step == 1 && r.b_step == 0) {
        Gemm<C>(ta, tb, r.count * plan.m, plan.n, plan.k, static_cast<C>(alpha),
                av.data() + r.a_first * a_size, bv.data() + r.b_first * b_size, has_add,
                out.data() + r.first * o_size);
        continue;
      }
      for (int64_t j = 0; j < r.count; ++j) {
        Gemm<C>(ta, tb, plan.m, plan.n, plan.k, static_cast<C>(alpha),
                av.data() + (r.a_first + j * r.a_step) * a_size,
                bv.data() + (r.b_first + j * r.b_step) * b_size, has_add,
                out.data() + (r.first + j) * o_size);
      }
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
