#include "kernels/common/encoder_args.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

// kInternal unless input `in` holds its dim `dim` whole; `why` says what
// needs it.
absl::Status RequireWholeDim(const KernelContext& ctx, int in, int dim, absl::string_view why) {
  const BlobLayout& l = ctx.input_layout(in);
  const int64_t held = ctx.input(in).dim(dim), all = l.logical.shape.dim(dim);
  if (held == all) return absl::OkStatus();
  return ctx.Internal(absl::StrCat(ctx.input_bn(in), " ", l.logical.ToString(), " ",
                                   l.nd_sbp.ToString(), ": this rank holds ", held, " of the ",
                                   all, " entries of dim ", dim, ", and ", why));
}

// The local mask (input 1) against the batch rows (dim 0) of input 0:
// rank 2 with its sequence whole, rows covering input 0's. Returns the
// mask row of input 0's first local row.
absl::StatusOr<int64_t> MaskRowOffset(const KernelContext& ctx) {
  if (ctx.input(1).rank() != 2) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(1), " ", ctx.input(1).ToString(0),
                                     " is not [B, S]"));
  }
  OFS_RETURN_IF_ERROR(RequireWholeDim(ctx, 1, 1, "the count of kept positions needs all"));
  const IndexRange rows = ctx.input_layout(0).slice.range(0);
  const IndexRange mask = ctx.input_layout(1).slice.range(0);
  if (ctx.input(0).dim(0) > 0 && (rows.begin < mask.begin || rows.end > mask.end)) {
    return ctx.Internal(absl::StrCat(ctx.input_bn(1), " ", ctx.input_layout(1).slice.ToString(),
                                     " does not cover the batch rows of ", ctx.input_bn(0), " ",
                                     ctx.input_layout(0).slice.ToString()));
  }
  return rows.begin - mask.begin;
}

}  // namespace

absl::StatusOr<PoolDims> CheckMaskedMeanPool(const KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  if (x.rank() != 3) return ctx.Internal("x must have rank 3 [B, S, H]");
  OFS_RETURN_IF_ERROR(
      RequireWholeDim(ctx, 0, 1, "a mean over part of the sequence is not a part of the mean"));
  PoolDims p;
  OFS_ASSIGN_OR_RETURN(p.mask_row0, MaskRowOffset(ctx));
  p.b = x.dim(0);
  p.s = x.dim(1);
  p.h = x.dim(2);
  if (ctx.input(1).dim(1) != p.s) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(1), " ", ctx.input(1).ToString(0),
                                     " and x_0 ", x.ToString(0), " differ in the sequence"));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, {p.b, p.h}, x.dtype()));
  return p;
}

absl::StatusOr<PoolDims> CheckMaskedMeanPoolGrad(const KernelContext& ctx) {
  const LocalTensor& dy = ctx.input(0);
  if (dy.rank() != 2) return ctx.Internal("dy must have rank 2 [B, H]");
  PoolDims p;
  OFS_ASSIGN_OR_RETURN(p.mask_row0, MaskRowOffset(ctx));
  p.b = dy.dim(0);
  p.s = ctx.input(1).dim(1);
  p.h = dy.dim(1);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, {p.b, p.s, p.h}, dy.dtype()));
  return p;
}

absl::StatusOr<L2Dims> CheckL2Normalize(const KernelContext& ctx) {
  const int xi = ctx.op().InputBlob("x", 0);
  const LocalTensor& x = ctx.input(xi);
  OFS_ASSIGN_OR_RETURN(const int axis,
                       ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>("axis"), x.rank(),
                                                       "attribute axis")));
  OFS_RETURN_IF_ERROR(RequireWholeDim(ctx, xi, axis, "the norm needs the whole vector"));
  if (xi > 0 && (ctx.input(0).dims() != x.dims() || ctx.input(0).dtype() != x.dtype())) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(0), " ", ctx.input(0).ToString(0),
                                     " does not match x_0 ", x.ToString(0)));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  L2Dims d;
  d.outer = 1;
  d.inner = 1;
  for (int i = 0; i < axis; ++i) d.outer *= x.dim(i);
  for (int i = axis + 1; i < x.rank(); ++i) d.inner *= x.dim(i);
  d.n = x.dim(axis);
  d.epsilon = ctx.Attr<double>("epsilon");
  return d;
}

}  // namespace oneflow_sbp::kernels
