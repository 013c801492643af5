// CPU kernels of sparse_softmax_cross_entropy[_ms] and their gradients
// (rules in ops/nn_ops.cc). One forward and one backward kernel serve both
// the plain op and the model-parallel (_ms) one; they differ only in the
// candidates their rules offer.
//
//   sparse_softmax_cross_entropy(prediction [..., D], label [...]; depth)
//     -> prob = softmax(prediction) over the class dim,
//        out  = -log(prob[label]) = log(sum exp(x - max)) + max - x[label]
//   ..._grad(dy [...], label, prob; depth)
//     -> prediction_diff = (prob - onehot(label)) * dy
//
// Labels are GLOBAL class indices: every label must lie in [0, depth)
// (kInvalidArgument naming the row and the value otherwise), and a rank
// holding the classes [lo, hi) of a row compares label - lo with its
// local columns.
//
// The class-split layout of _ms (prediction:S(D) label:B -> prob:S(D)
// out:P; Megatron's vocab-parallel cross entropy): a rank holds some of
// each row's logits, but softmax needs the max and the sum of exp over the
// whole row. The kernel all-reduces the row maxima (kMax) and then the row
// sums of exp(x - max) (kSum) over the ranks that split the class dim
// (KernelContext::SplitGroup), in double. Each rank then writes its prob
// columns, and its addend of the loss: the loss of a row on the one rank
// whose class range holds the row's label, 0 elsewhere, so out's P sum is
// the loss. That needs a communicator (the caller's world); without one
// the kernel returns kFailedPrecondition. `out` must be P exactly on the
// mesh axes that split the classes (kInternal otherwise: an addend on an
// axis that does not split them would be counted again per rank).
// The gradient needs nothing global: each rank's prob columns, minus 1 at
// the label's column if it holds it, times dy.
//
// Dtypes: prediction/prob f32 f64 f16 bf16 (statistics in double); label
// i32 i64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "comm/communicator.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/cross_entropy_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

absl::Status SparseCeKernel(KernelContext& ctx) {
  const LocalTensor& pred = ctx.input("prediction");
  OFS_ASSIGN_OR_RETURN(const SparseCeArgs args, CheckSparseCe(ctx));
  const RowsOfClasses& rc = args.rc;
  const std::shared_ptr<comm::Communicator>& group = args.group;
  return DispatchDtype<Floating>(ctx, pred.dtype(), "prediction_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = pred.data<T>();
    auto at = [&](int64_t r, int64_t c) { return ConvertElement<double>(x[r * rc.n + c]); };
    std::vector<double> mx(rc.rows, -std::numeric_limits<double>::infinity());
    std::vector<double> sum(rc.rows, 0.0);
    for (int64_t r = 0; r < rc.rows; ++r) {
      for (int64_t c = 0; c < rc.n; ++c) mx[r] = std::max(mx[r], at(r, c));
    }
    comm::CallOptions max_op;
    max_op.reduce_op = comm::ReduceOp::kMax;
    if (group) {
      OFS_RETURN_IF_ERROR(ctx.Annotate(
          group->AllReduce(mx.data(), mx.data(), rc.rows, DataType::kFloat64, max_op)));
    }
    for (int64_t r = 0; r < rc.rows; ++r) {
      for (int64_t c = 0; c < rc.n; ++c) sum[r] += std::exp(at(r, c) - mx[r]);
    }
    if (group) {
      OFS_RETURN_IF_ERROR(ctx.Annotate(
          group->AllReduce(sum.data(), sum.data(), rc.rows, DataType::kFloat64)));
    }
    T* prob = ctx.output(0).data<T>();
    T* out = ctx.output(1).data<T>();
    for (int64_t r = 0; r < rc.rows; ++r) {
      const double inv = 1.0 / sum[r];
      for (int64_t c = 0; c < rc.n; ++c) {
        prob[r * rc.n + c] = ConvertElement<T>(std::exp(at(r, c) - mx[r]) * inv);
      }
      const int64_t local = args.column[r];
      out[r] = ConvertElement<T>(local >= 0 ? std::log(sum[r]) + mx[r] - at(r, local) : 0.0);
    }
    return absl::OkStatus();
  });
}

absl::Status SparseCeGradKernel(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& prob = ctx.input("prob");
  OFS_ASSIGN_OR_RETURN(const SparseCeArgs args, CheckSparseCeGrad(ctx));
  const RowsOfClasses& rc = args.rc;
  return DispatchDtype<Floating>(ctx, prob.dtype(), "prob_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* p = prob.data<T>();
    const T* g = dy.data<T>();
    T* dx = ctx.output(0).data<T>();
    for (int64_t r = 0; r < rc.rows; ++r) {
      const C gr = ConvertElement<C>(g[r]);
      for (int64_t c = 0; c < rc.n; ++c) {
        const C onehot = c == args.column[r] ? C(1) : C(0);
        dx[r * rc.n + c] = ConvertElement<T>((ConvertElement<C>(p[r * rc.n + c]) - onehot) * gr);
      }
    }
    return absl::OkStatus();
  });
}

absl::Status RegisterCrossEntropyKernels(KernelRegistry& registry) {
  const std::vector<DataType> dtypes = DtypesOf(Floating{});
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"sparse_softmax_cross_entropy", SparseCeKernel, dtypes},
                          {"sparse_softmax_cross_entropy_grad", SparseCeGradKernel, dtypes},
                          {"sparse_softmax_cross_entropy_ms", SparseCeKernel, dtypes},
                          {"sparse_softmax_cross_entropy_ms_grad", SparseCeGradKernel, dtypes}});
}

OFS_REGISTER_KERNELS(RegisterCrossEntropyKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
