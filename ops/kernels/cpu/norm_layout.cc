#include "ops/kernels/cpu/norm_layout.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::kernels {
namespace {

int64_t Product(const LocalDims& d, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= d[i];
  return p;
}

}  // namespace

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

}  // namespace oneflow_sbp::kernels
