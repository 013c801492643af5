#include "kernels/common/attention_layout.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {
namespace {

// kInternal unless input `in` holds dim `dim` whole on this rank.
absl::Status CheckWhole(const KernelContext& ctx, int in, int dim, absl::string_view why) {
  const LocalTensor& t = ctx.input(in);
  const BlobLayout& l = ctx.input_layout(in);
  if (t.dim(dim) == l.logical.shape.dim(dim)) return absl::OkStatus();
  return ctx.Internal(absl::StrCat("rank holds ", t.dim(dim), " of the ", l.logical.shape.dim(dim),
                                   " entries of dim ", dim, " of ", ctx.input_bn(in), " ",
                                   l.logical.ToString(), " ", l.nd_sbp.ToString(), "; ", why));
}

// kInternal unless inputs a and b have the same local dims on [0, n).
absl::Status CheckSameLocal(const KernelContext& ctx, int a, int b, int n) {
  const LocalTensor& x = ctx.input(a);
  const LocalTensor& y = ctx.input(b);
  for (int d = 0; d < n; ++d) {
    if (x.dim(d) != y.dim(d)) {
      return ctx.Internal(absl::StrCat("local ", ctx.input_bn(a), " ", DimsToString(x.dims()),
                                       " and ", ctx.input_bn(b), " ", DimsToString(y.dims()),
                                       " differ in dim ", d));
    }
  }
  return absl::OkStatus();
}

// The local key_padding_mask (input m) against query (input q): the row of
// the local mask that q's first local batch row reads.
absl::StatusOr<int64_t> KeyMaskRowOffset(const KernelContext& ctx, int q, int m) {
  const LocalTensor& mt = ctx.input(m);
  const DataType dt = mt.dtype();
  if (dt != DataType::kBool && dt != DataType::kInt32 && dt != DataType::kInt64) {
    return ctx.UnsupportedDtype(dt, ctx.input_bn(m));
  }
  if (mt.rank() != 2) return ctx.Internal("key_padding_mask must have rank 2 [B, Sk]");
  OFS_RETURN_IF_ERROR(CheckWhole(ctx, m, 1, "attention needs every key"));
  const IndexRange qr = ctx.input_layout(q).slice.range(0);
  const IndexRange mr = ctx.input_layout(m).slice.range(0);
  if (ctx.input(q).dim(0) > 0 && (qr.begin < mr.begin || qr.end > mr.end)) {
    return ctx.Internal(absl::StrCat(ctx.input_bn(m), " ", ctx.input_layout(m).slice.ToString(),
                                     " does not cover the batch rows of ", ctx.input_bn(q), " ",
                                     ctx.input_layout(q).slice.ToString()));
  }
  return qr.begin - mr.begin;
}

}  // namespace

absl::StatusOr<int64_t> RotaryRowOffset(const KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  const LocalTensor& cos = ctx.input(1);
  const LocalTensor& sin = ctx.input(2);
  if (x.rank() != 4 || cos.rank() != 2 || sin.dims() != cos.dims() || x.dtype() != cos.dtype() ||
      x.dtype() != sin.dtype()) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(0), " ", x.ToString(0), ", cos_0 ",
                                     cos.ToString(0), " and sin_0 ", sin.ToString(0),
                                     " do not fit [B,H,S,D], [S,D], [S,D]"));
  }
  OFS_RETURN_IF_ERROR(CheckWhole(ctx, 0, 3, "rotary embedding mixes the two halves of D"));
  OFS_RETURN_IF_ERROR(CheckWhole(ctx, 1, 1, "rotary embedding mixes the two halves of D"));
  // x's rows [xs, xs + S) in global coordinates must lie in cos's slice.
  const IndexRange xr = ctx.input_layout(0).slice.range(2);
  const IndexRange cr = ctx.input_layout(1).slice.range(0);
  const IndexRange sr = ctx.input_layout(2).slice.range(0);
  if (x.dim(2) > 0 && (xr.begin < cr.begin || xr.end > cr.end || !(cr == sr))) {
    return ctx.Internal(absl::StrCat("cos_0 ", ctx.input_layout(1).slice.ToString(), " and sin_0 ",
                                     ctx.input_layout(2).slice.ToString(),
                                     " do not cover the sequence rows of ", ctx.input_bn(0), " ",
                                     ctx.input_layout(0).slice.ToString()));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  return xr.begin - cr.begin;
}

absl::StatusOr<AttentionDims> AttentionDimsOf(const KernelContext& ctx, int q) {
  const LocalTensor& qt = ctx.input(q);
  const LocalTensor& kt = ctx.input(q + 1);
  const LocalTensor& vt = ctx.input(q + 2);
  if (qt.rank() != 4 || kt.rank() != 4 || vt.rank() != 4) {
    return ctx.Internal("query, key and value must have rank 4");
  }
  OFS_RETURN_IF_ERROR(CheckSameLocal(ctx, q, q + 1, 2));
  OFS_RETURN_IF_ERROR(CheckSameLocal(ctx, q, q + 2, 2));
  OFS_RETURN_IF_ERROR(CheckSameLocal(ctx, q + 1, q + 2, 3));
  const char* why = "attention needs every key and whole rows";
  OFS_RETURN_IF_ERROR(CheckWhole(ctx, q, 3, why));
  OFS_RETURN_IF_ERROR(CheckWhole(ctx, q + 1, 2, why));
  OFS_RETURN_IF_ERROR(CheckWhole(ctx, q + 1, 3, why));
  if (qt.dim(3) != kt.dim(3)) return ctx.Internal("query and key widths differ");
  AttentionDims a;
  a.bh = qt.dim(0) * qt.dim(1);
  a.sq = qt.dim(2);
  a.sk = kt.dim(2);
  a.d = qt.dim(3);
  a.dv = vt.dim(3);
  a.row0 = ctx.input_layout(q).slice.range(2).begin;
  a.shift = ctx.input_layout(q + 1).logical.shape.dim(2) - ctx.input_layout(q).logical.shape.dim(2);
  a.causal = ctx.Attr<bool>("causal");
  const double scale = ctx.Attr<double>("scale");
  a.scale = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(a.d)) : scale;
  a.heads = qt.dim(1);
  a.mask = ctx.op().InputBlob("key_padding_mask", 0);
  if (a.mask >= 0) {
    OFS_ASSIGN_OR_RETURN(a.mask_row0, KeyMaskRowOffset(ctx, q, a.mask));
  }
  return a;
}

absl::StatusOr<AttentionDims> CheckAttention(const KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const AttentionDims a, AttentionDimsOf(ctx, 0));
  const LocalTensor& q = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, {q.dim(0), q.dim(1), a.sq, a.dv}, q.dtype()));
  return a;
}

absl::StatusOr<AttentionDims> CheckAttentionGrad(const KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const AttentionDims a, AttentionDimsOf(ctx, 1));
  const LocalTensor& dout = ctx.input(0);
  const LocalTensor& q = ctx.input(1);
  const DataType dt = q.dtype();
  if (dout.dtype() != dt || dout.rank() != 4 || dout.dim(0) != q.dim(0) ||
      dout.dim(1) != q.dim(1) || dout.dim(2) != a.sq || dout.dim(3) != a.dv) {
    return ctx.Internal(absl::StrCat("local dout_0 ", dout.ToString(0), " does not fit query_0 ",
                                     q.ToString(0), " and value width ", a.dv));
  }
  for (int i = 0; i < 3; ++i) {
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(i, ctx.input(1 + i).dims(), dt));
  }
  return a;
}

}  // namespace oneflow_sbp::kernels
