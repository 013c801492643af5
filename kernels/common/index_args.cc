#include "kernels/common/index_args.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/dtype_dispatch.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

// What a rank writes for an index it does not hold: zeros in a partial
// output, this error otherwise.
absl::Status MissingIndex(const KernelContext& ctx, int blob, int axis, int64_t value,
                          IndexRange held) {
  const BlobLayout& l = ctx.input_layout(blob);
  return ctx.Internal(absl::StrCat(
      "rank ", ctx.parallel_id(), " holds [", held.begin, ",", held.end, ") of dim ", axis, " of ",
      ctx.input_bn(blob), " ", l.logical.ToString(), " ", l.nd_sbp.ToString(),
      " but needs index ", value, " for ", ctx.output_bn(0), " ",
      ctx.output_layout(0).nd_sbp.ToString(),
      ", which is not partial: this layout cannot be computed locally"));
}

}  // namespace

absl::StatusOr<LocalTensor> InputOnHost(const KernelContext& ctx, int blob) {
  const LocalTensor& in = ctx.input(blob);
  if (in.device() == DeviceType::kCpu) return in;
  return ctx.Annotate(in.CopyTo(DeviceType::kCpu));
}

absl::StatusOr<std::vector<int64_t>> IndexValues(const KernelContext& ctx, int blob,
                                                 int64_t extent, absl::string_view what) {
  OFS_ASSIGN_OR_RETURN(const LocalTensor t, InputOnHost(ctx, blob));
  std::vector<int64_t> values(static_cast<size_t>(t.elem_cnt()));
  OFS_RETURN_IF_ERROR(DispatchDtype<IntTypes>(ctx, t.dtype(), ctx.input_bn(blob), [&](auto tag) {
    using L = typename decltype(tag)::type;
    const L* p = t.data<L>();
    for (int64_t i = 0; i < t.elem_cnt(); ++i) {
      values[i] = static_cast<int64_t>(p[i]);
      if (values[i] < 0 || values[i] >= extent) {
        return ctx.InvalidArgument(absl::StrCat(ctx.input_bn(blob), " holds ", values[i],
                                                " at local position ", i, ", outside [0, ",
                                                extent, ") (", what, ")"));
      }
    }
    return absl::OkStatus();
  }));
  return values;
}

absl::StatusOr<std::vector<int64_t>> LocalRows(const KernelContext& ctx, int in_blob,
                                               int idx_blob, int axis) {
  const IndexRange held = ctx.input_layout(in_blob).slice.range(axis);
  const int64_t extent = ctx.input_layout(in_blob).logical.shape.dim(axis);
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> rows,
                       IndexValues(ctx, idx_blob, extent,
                                   absl::StrCat("dim ", axis, " of ", ctx.input_bn(in_blob))));
  const bool partial = ctx.output_layout(0).is_partial();
  const int64_t mid = ctx.input(in_blob).dim(axis);
  for (int64_t& r : rows) {
    const int64_t v = r;
    r = v >= held.begin && v - held.begin < mid ? v - held.begin : -1;
    if (r < 0 && !partial) return MissingIndex(ctx, in_blob, axis, v, held);
  }
  return rows;
}

absl::StatusOr<int> CheckGather(KernelContext& ctx) {
  const LocalTensor& in = ctx.input("in");
  const LocalTensor& indices = ctx.input("indices");
  OFS_ASSIGN_OR_RETURN(const int axis,
                       ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>("axis"), in.rank(),
                                                       "attribute axis")));
  LocalDims out_dims(in.dims().begin(), in.dims().begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims().begin(), indices.dims().end());
  out_dims.insert(out_dims.end(), in.dims().begin() + axis + 1, in.dims().end());
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, out_dims, in.dtype()));
  return axis;
}

absl::StatusOr<std::vector<int64_t>> DimGatherOffsets(KernelContext& ctx) {
  const LocalTensor& input = ctx.input("input");
  const LocalTensor& index = ctx.input("index");
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, index.dims(), input.dtype()));
  OFS_ASSIGN_OR_RETURN(const int dim,
                       ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>("dim"), input.rank(),
                                                       "attribute dim")));
  const BlobLayout& in_l = ctx.input_layout(0);
  const TensorSlice& idx_slice = ctx.input_layout(1).slice;
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                       IndexValues(ctx, 1, in_l.logical.shape.dim(dim),
                                   absl::StrCat("dim ", dim, " of input_0")));
  const bool partial = ctx.output_layout(0).is_partial();
  const int rank = input.rank();
  const LocalDims strides = RowMajorStrides(input.dims());
  LocalDims q(rank, 0);  // local position in index / output
  for (int64_t i = 0; i < index.elem_cnt(); ++i) {
    // The input element's global coordinates, then its local offset.
    int64_t offset = 0;
    bool have = true;
    for (int d = 0; d < rank && have; ++d) {
      const int64_t g = d == dim ? offsets[i] : idx_slice.range(d).begin + q[d];
      const IndexRange r = in_l.slice.range(d);
      have = g >= r.begin && g < r.end;
      offset += (g - r.begin) * strides[d];
    }
    if (!have && !partial) {
      return ctx.Internal(absl::StrCat(
          "rank ", ctx.parallel_id(), "'s input_0 ", in_l.nd_sbp.ToString(), " (slice ",
          in_l.slice.ToString(), ") lacks the element output_0 ",
          ctx.output_layout(0).nd_sbp.ToString(), " needs at local position ", i,
          ": this layout cannot be computed locally"));
    }
    offsets[i] = have ? offset : -1;
    for (int d = rank - 1; d >= 0; --d) {
      if (++q[d] < index.dim(d)) break;
      q[d] = 0;
    }
  }
  return offsets;
}

absl::StatusOr<EmbeddingGradArgs> CheckEmbeddingGrad(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& weight = ctx.input("weight");
  const LocalTensor& indices = ctx.input("indices");
  const BlobLayout& wl = ctx.input_layout(1);
  const BlobLayout& il = ctx.input_layout(2);
  const int64_t vocab = wl.logical.shape.dim(0);
  EmbeddingGradArgs args;
  args.cols = weight.dim(1);
  LocalDims dy_dims = indices.dims();
  dy_dims.push_back(args.cols);
  if (dy.dims() != dy_dims) {
    return ctx.Internal(absl::StrCat("local dy_0 ", DimsToString(dy.dims()),
                                     " does not match local indices_0 ",
                                     DimsToString(indices.dims()), " and weight_0 ",
                                     DimsToString(weight.dims())));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, weight.dims(), weight.dtype()));
  const bool whole_indices =
      indices.dims() == LocalDims(il.logical.shape.dims().begin(), il.logical.shape.dims().end());
  const bool scale_by_freq = ctx.Attr<bool>("scale_grad_by_freq");
  if (!whole_indices && (scale_by_freq || !ctx.output_layout(0).is_partial())) {
    return ctx.Internal(absl::StrCat(
        "rank holds part of indices_0 ", il.logical.ToString(), " ", il.nd_sbp.ToString(),
        scale_by_freq ? ", but scale_grad_by_freq needs the count of every index over all of them"
                      : absl::StrCat(", so its dx_0 is an addend, but dx_0 is ",
                                     ctx.output_layout(0).nd_sbp.ToString())));
  }
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                       IndexValues(ctx, 2, vocab, "the rows of weight_0"));
  const int64_t padding = ctx.Attr<int64_t>("padding_idx");
  const IndexRange rows = wl.slice.range(0);
  if (scale_by_freq) {
    std::vector<double> count(static_cast<size_t>(vocab), 0.0);
    for (int64_t v : idx) count[v] += 1;
    args.scale.resize(idx.size());
    for (size_t p = 0; p < idx.size(); ++p) args.scale[p] = 1.0 / count[idx[p]];
  }
  args.row = std::move(idx);
  for (int64_t& r : args.row) {
    const int64_t local = r - rows.begin;
    r = r == padding || local < 0 || local >= weight.dim(0) ? -1 : local;
  }
  return args;
}

absl::Status CheckEmbeddingOutput(KernelContext& ctx) {
  const LocalTensor& weight = ctx.input("weight");
  LocalDims out_dims = ctx.input("indices").dims();
  out_dims.push_back(weight.dim(1));
  return ctx.CheckOutput(0, out_dims, weight.dtype());
}

absl::Status CheckArgwhere(KernelContext& ctx) {
  const LocalTensor& input = ctx.input(0);
  const BlobLayout& l = ctx.input_layout(0);
  if (input.dims() != LocalDims(l.logical.shape.dims().begin(), l.logical.shape.dims().end())) {
    return ctx.Internal(absl::StrCat("argwhere needs all of input_0 ", l.logical.ToString(),
                                     " on every rank, but it is ", l.nd_sbp.ToString()));
  }
  const DataType index_dtype = ctx.output(0).dtype();
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, {input.elem_cnt(), input.rank()}, index_dtype));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(1, {1}, index_dtype));
  if (index_dtype != DataType::kInt32 && index_dtype != DataType::kInt64) {
    return ctx.UnsupportedDtype(index_dtype, ctx.output_bn(0));
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::kernels
