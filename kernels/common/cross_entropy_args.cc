#include "kernels/common/cross_entropy_args.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/index_args.h"

namespace oneflow_sbp::kernels {
namespace {

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

// Each row's label checked against depth, as its local column (or -1).
absl::StatusOr<std::vector<int64_t>> LabelColumns(const KernelContext& ctx, int label,
                                                  const RowsOfClasses& rc) {
  OFS_ASSIGN_OR_RETURN(const LocalTensor host, InputOnHost(ctx, label));
  std::vector<int64_t> column(static_cast<size_t>(rc.rows));
  for (int64_t i = 0; i < rc.rows; ++i) {
    int64_t v = 0;
    switch (host.dtype()) {
      case DataType::kInt32: v = host.data<int32_t>()[i]; break;
      case DataType::kInt64: v = host.data<int64_t>()[i]; break;
      default: return ctx.UnsupportedDtype(host.dtype(), ctx.input_bn(label));
    }
    if (v < 0 || v >= rc.depth) {
      return ctx.InvalidArgument(absl::StrCat("label_0 holds ", v, " at local row ", i,
                                              ", outside the ", rc.depth, " classes [0, ",
                                              rc.depth, ")"));
    }
    column[i] = v - rc.lo >= 0 && v - rc.lo < rc.n ? v - rc.lo : -1;
  }
  return column;
}

}  // namespace

absl::StatusOr<SparseCeArgs> CheckSparseCe(KernelContext& ctx) {
  const LocalTensor& pred = ctx.input("prediction");
  const LocalTensor& label = ctx.input("label");
  SparseCeArgs args;
  OFS_ASSIGN_OR_RETURN(args.rc, RowsOf(ctx, 0, 1));
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
  if (split != 0) {
    OFS_ASSIGN_OR_RETURN(args.group, ctx.SplitGroup(0, class_dim));
  }
  OFS_ASSIGN_OR_RETURN(args.column, LabelColumns(ctx, 1, args.rc));
  return args;
}

absl::StatusOr<SparseCeArgs> CheckSparseCeGrad(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& label = ctx.input("label");
  const LocalTensor& prob = ctx.input("prob");
  SparseCeArgs args;
  OFS_ASSIGN_OR_RETURN(args.rc, RowsOf(ctx, 2, 1));
  if (dy.dims() != label.dims() || dy.dtype() != prob.dtype()) {
    return ctx.Internal(absl::StrCat("local dy_0 ", DataTypeName(dy.dtype()),
                                     DimsToString(dy.dims()), " does not match local label_0 ",
                                     DimsToString(label.dims()), " and prob_0's dtype"));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, prob.dims(), prob.dtype()));
  OFS_ASSIGN_OR_RETURN(args.column, LabelColumns(ctx, 1, args.rc));
  return args;
}

}  // namespace oneflow_sbp::kernels
