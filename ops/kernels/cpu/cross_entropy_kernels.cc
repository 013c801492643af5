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
#include "boxing/comm/communicator.h"
#include "oneflow_sbp/status_macros.h"
#include "ops/kernels/dtype_dispatch.h"
#include "ops/kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

// The local layout of a (logits, label) pair: logits blob `logits` holds
// `rows` rows of `n` classes starting at global class `lo` of `depth`.
struct RowsOfClasses {
  int64_t rows = 0, n = 0, lo = 0, depth = 0;
};

absl::StatusOr<RowsOfClasses> RowsOf(const KernelContext& ctx, int logits, int label) {
  const LocalTensor& x = ctx.input(logits);
  const LocalTensor& l = ctx.input(label);
  const int r = x.rank();
  if (r < 1 || l.rank() != r - 1 ||
      !std::equal(l.dims().begin(), l.dims().end(), x.dims().begin())) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(label), " ", DimsToString(l.dims()),
                                     " does not hold the rows of local ", ctx.input_bn(logits),
                                     " ", DimsToString(x.dims())));
  }
  const BlobLayout& layout = ctx.input_layout(logits);
  RowsOfClasses rc;
  rc.rows = l.elem_cnt();
  rc.n = x.dim(r - 1);
  rc.lo = layout.slice.range(r - 1).begin;
  rc.depth = layout.logical.shape.dim(r - 1);
  if (ctx.Attr<int64_t>("depth") != rc.depth) {
    return ctx.InvalidArgument(absl::StrCat("attribute depth ", ctx.Attr<int64_t>("depth"),
                                            " is not the class dim of ",
                                            layout.logical.ToString()));
  }
  return rc;
}

// The global class of `label[i]`, checked against depth.
template <typename L>
absl::StatusOr<int64_t> LabelAt(const KernelContext& ctx, const L* label, int64_t i,
                                int64_t depth) {
  const int64_t v = static_cast<int64_t>(label[i]);
  if (v < 0 || v >= depth) {
    return ctx.InvalidArgument(absl::StrCat("label_0 holds ", v, " at local row ", i,
                                            ", outside the ", depth, " classes [0, ", depth,
                                            ")"));
  }
  return v;
}

absl::Status SparseCeKernel(KernelContext& ctx) {
  const LocalTensor& pred = ctx.input("prediction");
  const LocalTensor& label = ctx.input("label");
  OFS_ASSIGN_OR_RETURN(const RowsOfClasses rc, RowsOf(ctx, 0, 1));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, pred.dims(), pred.dtype()));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(1, label.dims(), pred.dtype()));
  const int class_dim = pred.rank() - 1;
  const MeshAxisMask split = ctx.SplitAxes(0, class_dim);
  const NdSbp& out_sbp = ctx.output_layout(1).nd_sbp;
  for (int a = 0; a < out_sbp.size(); ++a) {
    if (out_sbp[a].is_partial_sum() != ((split & AxisBit(a)) != 0)) {
      return ctx.Internal(absl::StrCat(
          "out_0 ", out_sbp.ToString(), " must be P exactly on the mesh axes that split the ",
          "classes of prediction_0 ", ctx.input_layout(0).nd_sbp.ToString(), " (axis ", a, ")"));
    }
  }
  std::shared_ptr<comm::Communicator> group;
  if (split != 0) {
    OFS_ASSIGN_OR_RETURN(group, ctx.SplitGroup(0, class_dim));
  }
  return DispatchDtype<Floating>(ctx, pred.dtype(), "prediction_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DispatchDtype<IntTypes>(ctx, label.dtype(), "label_0", [&](auto ltag) {
      using L = typename decltype(ltag)::type;
      const T* x = pred.data<T>();
      const L* lab = label.data<L>();
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
        OFS_ASSIGN_OR_RETURN(const int64_t v, LabelAt(ctx, lab, r, rc.depth));
        const int64_t local = v - rc.lo;
        out[r] = ConvertElement<T>(local >= 0 && local < rc.n
                                       ? std::log(sum[r]) + mx[r] - at(r, local)
                                       : 0.0);
      }
      return absl::OkStatus();
    });
  });
}

absl::Status SparseCeGradKernel(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& label = ctx.input("label");
  const LocalTensor& prob = ctx.input("prob");
  OFS_ASSIGN_OR_RETURN(const RowsOfClasses rc, RowsOf(ctx, 2, 1));
  if (dy.dims() != label.dims() || dy.dtype() != prob.dtype()) {
    return ctx.Internal(absl::StrCat("local dy_0 ", DataTypeName(dy.dtype()),
                                     DimsToString(dy.dims()), " does not match local label_0 ",
                                     DimsToString(label.dims()), " and prob_0's dtype"));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, prob.dims(), prob.dtype()));
  return DispatchDtype<Floating>(ctx, prob.dtype(), "prob_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    return DispatchDtype<IntTypes>(ctx, label.dtype(), "label_0", [&](auto ltag) {
      using L = typename decltype(ltag)::type;
      const T* p = prob.data<T>();
      const T* g = dy.data<T>();
      const L* lab = label.data<L>();
      T* dx = ctx.output(0).data<T>();
      for (int64_t r = 0; r < rc.rows; ++r) {
        OFS_ASSIGN_OR_RETURN(const int64_t v, LabelAt(ctx, lab, r, rc.depth));
        const C gr = ConvertElement<C>(g[r]);
        for (int64_t c = 0; c < rc.n; ++c) {
          const C onehot = rc.lo + c == v ? C(1) : C(0);
          dx[r * rc.n + c] = ConvertElement<T>((ConvertElement<C>(p[r * rc.n + c]) - onehot) * gr);
        }
      }
      return absl::OkStatus();
    });
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
