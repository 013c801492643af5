#include "kernels/common/norm_layout.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

int64_t Product(const LocalDims& d, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= d[i];
  return p;
}

// Attribute `attr` as an axis of x.
absl::StatusOr<int> XAxis(const KernelContext& ctx, const char* attr) {
  return ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>(attr), ctx.input("x").rank(),
                                         absl::StrCat("attribute ", attr)));
}

}  // namespace

absl::StatusOr<NormAxes> LayerNormAxes(const KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int k, XAxis(ctx, "begin_norm_axis"));
  OFS_ASSIGN_OR_RETURN(const int p, XAxis(ctx, "begin_params_axis"));
  return NormAxes{k, p};
}

NormAxes RmsNormAxes(const KernelContext& ctx) {
  const int k = ctx.input("x").rank() -
                static_cast<int>(ctx.Attr<std::vector<int64_t>>("normalized_shape").size());
  return NormAxes{k, k};
}

absl::StatusOr<int> LayerNormGradRowDims(const KernelContext& ctx) {
  return XAxis(ctx, "begin_norm_axis");
}

absl::StatusOr<int> LayerNormParamAxis(const KernelContext& ctx) {
  return XAxis(ctx, "begin_params_axis");
}

absl::StatusOr<NormRows> NormRowsOf(const KernelContext& ctx, int x, int k, bool whole) {
  const LocalTensor& t = ctx.input(x);
  const BlobLayout& l = ctx.input_layout(x);
  if (k < 0 || k > t.rank()) {
    return ctx.Internal(absl::StrCat(k, " row dims for ", ctx.input_bn(x), " of rank ", t.rank()));
  }
  for (int d = k; whole && d < t.rank(); ++d) {
    if (t.dim(d) != l.logical.shape.dim(d)) {
      return ctx.Internal(absl::StrCat(
          "rank holds ", t.dim(d), " of the ", l.logical.shape.dim(d), " entries of dim ", d,
          " of ", ctx.input_bn(x), " ", l.logical.ToString(), " ", l.nd_sbp.ToString(),
          ", which is normalised over and must be whole"));
    }
  }
  return NormRows{Product(t.dims(), 0, k), Product(t.dims(), k, t.rank())};
}

absl::Status CheckNormGradInputs(const KernelContext& ctx, bool center, int k) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& x = ctx.input("x");
  if (dy.dims() != x.dims()) {
    return ctx.Internal(absl::StrCat("local dy_0 ", DimsToString(dy.dims()), " differs from x_0 ",
                                     DimsToString(x.dims())));
  }
  const LocalDims rows(x.dims().begin(), x.dims().begin() + k);
  for (int s = 2; s < (center ? 4 : 3); ++s) {
    if (ctx.input(s).dims() != rows) {
      return ctx.Internal(absl::StrCat("local ", ctx.input_bn(s), " ",
                                       DimsToString(ctx.input(s).dims()),
                                       " does not cover the rows ", DimsToString(rows),
                                       " of local x_0 ", DimsToString(x.dims())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<NormRows> CheckNormParamGrad(const KernelContext& ctx, bool center, int p) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& x = ctx.input("x");
  const int k = ctx.input(2).rank();
  OFS_ASSIGN_OR_RETURN(const NormRows rw, NormRowsOf(ctx, 1, k, /*whole=*/false));
  OFS_RETURN_IF_ERROR(CheckNormGradInputs(ctx, center, k));
  if (p > x.rank()) return ctx.Internal(absl::StrCat("params from dim ", p, " of x_0"));
  const LocalDims param_dims(x.dims().begin() + p, x.dims().end());
  for (int o = 0; o < ctx.num_outputs(); ++o) {
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(o, param_dims, dy.dtype()));
  }
  return rw;
}

}  // namespace oneflow_sbp::kernels
