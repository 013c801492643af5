// Concatenation, splitting, slicing and expansion (SPEC.md §6).
//
// cat(in_0.. -> out; axis, max_dim_size)     OneFlow's user op "concat"
//   for i < nd, i != axis: in_*:S(i) -> out:S(i); then in_*:P -> out:P.
//   A split of the concatenated dim does not line up with the pieces (each
//   input's balanced parts differ from the output's), so axis never splits.
// stack(in_0.. -> out; axis, max_dim_size)
//   OneFlow: for i < axis: in_*:S(i) -> out:S(i); then P. It skips every dim
//   at or after the new one. Ours appends in_*:S(i) -> out:S(i+1) for
//   axis <= i < nd after OneFlow's list: the inputs' dim i becomes the
//   output's dim i+1 unchanged, so the split carries over.
// split(x -> out_0..; axis, sizes)            ours, no OneFlow op
//   OneFlow lowers split/chunk to one narrow per piece (SPEC.md §6.1); we
//   also offer it as one op with a variadic output whose count comes from
//   `sizes` (SetOutputArityFn). for i < nd, i != axis: x:S(i) -> out_*:S(i)
//   (also i == axis when there is a single piece, which is then x itself,
//   as narrow does for a full-length piece); then x:P -> out_*:P.
//
// cat and split are each other's gradients: d(cat)/d(in_j) is the j-th
// piece of a split of dout along axis (OneFlow's backward is split_like),
// and d(split) is the cat of the piece gradients. Their candidate lists are
// the same relation with inputs and outputs exchanged, so a signature a
// forward op picks is always available to its backward. There is no
// separate cat_grad op.
//
// narrow(in -> out; dim, start, length), narrow_grad(dy, like -> dx; same)
// slice(x -> y; start, stop, step), slice_grad(dy, like -> dx; same)
// slice_update(ref, value -> y; same)
// expand(in -> out; expand_shape)
//   See the comments at each rule. Negative axes and indices are accepted
//   and normalised as PyTorch does (OneFlow's functional layer does the same
//   before it creates the op; the ops themselves require normalised values).
#include "ops/concat_slice_ops.h"

#include <algorithm>

#include "oneflow_sbp/values/tensor_slice_view.h"

#include "oneflow_sbp/rule_api/nd_candidate_context.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/rule_api/nd_candidate_context.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "ops/extended_partials.h"
#include "ops/op_util.h"
#include "ops/slice_params.h"

namespace oneflow_sbp::ops {
namespace {

std::string Ints(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

std::vector<int64_t> DimsOf(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

// OneFlow's concat and stack check out[axis] <= max_dim_size (the functional
// layer passes the output extent; the attribute only matters for dynamic
// shapes, which inference never sees). Our default 0 means "not given" and
// skips the check; a positive value is checked as OneFlow does.
absl::Status CheckMaxDimSize(const AttrMap& attrs, int64_t extent, int axis) {
  OFS_ASSIGN_OR_RETURN(const int64_t max_dim_size, attrs.Get<int64_t>("max_dim_size"));
  if (max_dim_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute max_dim_size ", max_dim_size, " is negative"));
  }
  if (max_dim_size > 0 && extent > max_dim_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out_0 would have extent ", extent, " on dim ", axis,
        ", above attribute max_dim_size ", max_dim_size));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- cat ----

absl::Status CatShape(ShapeContext& ctx) {
  const TensorDesc& first = ctx.input("in", 0);
  OFS_RETURN_IF_ERROR(CheckRank(first, "in_0", 1, /*at_least=*/true));
  const int rank = first.shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis,
                       NormalizeAxis(ctx.Attr<int64_t>("axis"), rank, "attribute axis"));
  std::vector<int64_t> dims = DimsOf(first.shape);
  for (int j = 1; j < ctx.input_count("in"); ++j) {
    const TensorDesc& d = ctx.input("in", j);
    const std::string bn = absl::StrCat("in_", j);
    OFS_RETURN_IF_ERROR(CheckSameDtype(first, "in_0", d, bn));
    if (d.shape.rank() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          bn, " ", d.ToString(), " has rank ", d.shape.rank(), " but in_0 ",
          first.ToString(), " has rank ", rank));
    }
    for (int i = 0; i < rank; ++i) {
      if (i != axis && d.shape.dim(i) != first.shape.dim(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            bn, " ", d.ToString(), " and in_0 ", first.ToString(), " differ on dim ", i,
            " (", d.shape.dim(i), " vs ", first.shape.dim(i),
            "); only the concatenated dim ", axis, " may differ"));
      }
    }
    dims[axis] += d.shape.dim(axis);
  }
  OFS_RETURN_IF_ERROR(CheckMaxDimSize(ctx.op().attrs(), dims[axis], axis));
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, first.dtype});
  return absl::OkStatus();
}

// SPEC.md §6, OneFlow's list exactly. Concatenation is linear: P -> P.
absl::Status CatGetSbp(SbpContext& ctx) {
  const int rank = ctx.input_desc("in", 0).shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis,
                       NormalizeAxis(ctx.Attr<int64_t>("axis"), rank, "attribute axis"));
  for (int i = 0; i < rank; ++i) {
    if (i == axis) continue;
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// -------------------------------------------------------------- stack ----

// The new dim may go anywhere in [0, nd]: axis in [-(nd+1), nd].
absl::StatusOr<int> StackAxis(const AttrMap& attrs, int in_rank) {
  OFS_ASSIGN_OR_RETURN(const int64_t axis, attrs.Get<int64_t>("axis"));
  return NormalizeAxis(axis, in_rank + 1, "attribute axis");
}

absl::Status StackShape(ShapeContext& ctx) {
  const TensorDesc& first = ctx.input("in", 0);
  const int n = ctx.input_count("in");
  for (int j = 1; j < n; ++j) {
    const TensorDesc& d = ctx.input("in", j);
    if (d != first) {
      return absl::InvalidArgumentError(absl::StrCat(
          "in_", j, " is ", d.ToString(), " but in_0 is ", first.ToString(),
          "; stack needs identical inputs"));
    }
  }
  OFS_ASSIGN_OR_RETURN(const int axis, StackAxis(ctx.op().attrs(), first.shape.rank()));
  std::vector<int64_t> dims = DimsOf(first.shape);
  dims.insert(dims.begin() + axis, n);
  OFS_RETURN_IF_ERROR(CheckMaxDimSize(ctx.op().attrs(), n, axis));
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, first.dtype});
  return absl::OkStatus();
}

absl::Status StackGetSbp(SbpContext& ctx) {
  const int rank = ctx.input_desc("in", 0).shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis, StackAxis(ctx.op().attrs(), rank));
  // OneFlow: dims before the new one keep their number, dims after it
  // shift up by one (OneFlow 0.9.0 answers S(2) for stack on axis 1 of
  // S(1) inputs).
  for (int i = 0; i < rank; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i < axis ? i : i + 1).Build();
  }
  // Stacking is linear: P -> P.
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// -------------------------------------------------------------- split ----

absl::StatusOr<std::vector<int>> SplitArity(const AttrMap& attrs,
                                            const std::vector<int>& /*input_counts*/) {
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> sizes, attrs.Get<std::vector<int64_t>>("sizes"));
  if (sizes.empty()) {
    return absl::InvalidArgumentError("attribute sizes [] is empty; split needs >= 1 piece");
  }
  return std::vector<int>{static_cast<int>(sizes.size())};
}

absl::Status SplitShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_RETURN_IF_ERROR(CheckRank(x, "x_0", 1, /*at_least=*/true));
  OFS_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx.Attr<int64_t>("axis"),
                                                     x.shape.rank(), "attribute axis"));
  const std::vector<int64_t> sizes = ctx.Attr<std::vector<int64_t>>("sizes");
  int64_t sum = 0;
  for (size_t j = 0; j < sizes.size(); ++j) {
    if (sizes[j] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute sizes ", Ints(sizes), " has ", sizes[j], " at index ", j,
          "; every piece needs extent >= 1"));
    }
    sum += sizes[j];
    if (sum > x.shape.dim(axis)) break;  // also keeps the sum from overflowing
  }
  if (sum != x.shape.dim(axis)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute sizes ", Ints(sizes), " must sum to ", x.shape.dim(axis),
        ", the extent of x_0 ", x.ToString(), " on dim ", axis));
  }
  std::vector<int64_t> dims = DimsOf(x.shape);
  for (size_t j = 0; j < sizes.size(); ++j) {
    dims[axis] = sizes[j];
    OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, absl::StrCat("out_", j)));
    ctx.set_output("out", static_cast<int>(j), TensorDesc{out, x.dtype});
  }
  return absl::OkStatus();
}

// cat's list with inputs and outputs exchanged (split is cat's gradient).
absl::Status SplitGetSbp(SbpContext& ctx) {
  const int rank = ctx.input_desc("x").shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis,
                       NormalizeAxis(ctx.Attr<int64_t>("axis"), rank, "attribute axis"));
  const bool single_piece = ctx.outputs().size() == 1;
  for (int i = 0; i < rank; ++i) {
    if (i == axis && !single_piece) continue;
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// ------------------------------------------------------------- narrow ----

absl::StatusOr<NarrowRange> ResolveNarrow(const AttrMap& attrs, const TensorDesc& full,
                                          absl::string_view bn) {
  OFS_ASSIGN_OR_RETURN(const int64_t dim, attrs.Get<int64_t>("dim"));
  OFS_ASSIGN_OR_RETURN(const int64_t start, attrs.Get<int64_t>("start"));
  OFS_ASSIGN_OR_RETURN(const int64_t length, attrs.Get<int64_t>("length"));
  return ResolveNarrowRange(dim, start, length, full, bn);
}

absl::Status NarrowShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(NarrowRange r, ResolveNarrow(ctx.op().attrs(), in, "in_0"));
  std::vector<int64_t> dims = DimsOf(in.shape);
  dims[r.dim] = r.length;
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

// SPEC.md §6, OneFlow's list exactly: the narrowed dim keeps a split only
// when nothing is cut off; narrowing is linear, so P -> P. (The slice-style
// in:S(dim) -> out:P is sound too but OneFlow's narrow kernel is not
// offset-aware; we keep its list.)
absl::Status NarrowGetSbp(SbpContext& ctx) {
  const TensorDesc& in = ctx.input_desc("in");
  OFS_ASSIGN_OR_RETURN(NarrowRange r, ResolveNarrow(ctx.op().attrs(), in, "in_0"));
  for (int i = 0; i < in.shape.rank(); ++i) {
    if (i != r.dim || r.length == in.shape.dim(i)) {
      ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
    }
  }
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

// dx has like's shape (and dy's dtype, as in OneFlow; like's dtype is not
// looked at): dy placed at [start, start + length) on dim, zeros elsewhere.
absl::Status NarrowGradShape(ShapeContext& ctx) {
  const TensorDesc& dy = ctx.input("dy");
  const TensorDesc& like = ctx.input("like");
  OFS_ASSIGN_OR_RETURN(NarrowRange r, ResolveNarrow(ctx.op().attrs(), like, "like_0"));
  std::vector<int64_t> expect = DimsOf(like.shape);
  expect[r.dim] = r.length;
  if (DimsOf(dy.shape) != expect) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dy_0 ", dy.ToString(), " must have shape ", Ints(expect), ": like_0 ",
        like.ToString(), " narrowed to length ", r.length, " on dim ", r.dim));
  }
  ctx.set_output("dx", 0, TensorDesc{like.shape, dy.dtype});
  return absl::OkStatus();
}

// The candidates of a zero-padding gradient (dy, like -> dx), shared by
// narrow_grad and slice_grad: every dim the forward kept whole splits all
// three together; then dy:P like:P -> dx:P, dy:P like:B -> dx:P and
// dy:B like:P -> dx:B, in OneFlow's order.
void EmitPadGradCandidates(SbpContext& ctx, const std::vector<bool>& whole) {
  for (int i = 0; i < static_cast<int>(whole.size()); ++i) {
    if (whole[i]) ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  const OpArg dy{"dy", 0}, lk{"like", 0}, dx{"dx", 0};
  ctx.NewBuilder().PartialSum(dy).PartialSum(lk).PartialSum(dx).Build();
  ctx.NewBuilder().PartialSum(dy).Broadcast(lk).PartialSum(dx).Build();
  ctx.NewBuilder().Broadcast(dy).PartialSum(lk).Broadcast(dx).Build();
}

// OneFlow's narrow_grad list, in its order:
//   for i: i != dim or length == like[i]: dy:S(i) like:S(i) -> dx:S(i)
//   dy:P like:P -> dx:P, dy:P like:B -> dx:P, dy:B like:P -> dx:B.
// Padding with zeros is linear in dy, and like only lends its shape, so any
// like whose local block has dx's local shape (B or P for a whole dx) works.
// Not emitted: dy:B like:S(i) -> dx:S(i). Each rank could cut its part of dx
// from a full dy, but the kernel pads the local dy block into the local dx
// block and does not know its offset; with dy:B the blocks do not line up.
absl::Status NarrowGradGetSbp(SbpContext& ctx) {
  const TensorDesc& like = ctx.input_desc("like");
  OFS_ASSIGN_OR_RETURN(NarrowRange r, ResolveNarrow(ctx.op().attrs(), like, "like_0"));
  std::vector<bool> whole(like.shape.rank());
  for (int i = 0; i < like.shape.rank(); ++i) {
    whole[i] = i != r.dim || r.length == like.shape.dim(i);
  }
  EmitPadGradCandidates(ctx, whole);
  return absl::OkStatus();
}

// -------------------------------------------------------------- slice ----

absl::StatusOr<std::vector<SliceDim>> ResolveSlice(const AttrMap& attrs,
                                                   const TensorDesc& full,
                                                   absl::string_view bn) {
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> start, attrs.Get<std::vector<int64_t>>("start"));
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> stop, attrs.Get<std::vector<int64_t>>("stop"));
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> step, attrs.Get<std::vector<int64_t>>("step"));
  return ResolveSliceDims(start, stop, step, full, bn);
}

absl::Status SliceShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> s, ResolveSlice(ctx.op().attrs(), x, "x_0"));
  OFS_ASSIGN_OR_RETURN(Shape y, MakeShape(SlicedDims(s), "y_0"));
  ctx.set_output("y", 0, TensorDesc{y, x.dtype});
  return absl::OkStatus();
}

// SPEC.md §6, OneFlow's list exactly. A dim sliced in full keeps its split.
// Otherwise x:S(i) -> y:P is OneFlow's trick: every rank allocates the whole
// y, writes the elements of the slice that fall in its own part of x and
// zeros elsewhere; the parts are disjoint, so the sum over ranks is y. (The
// slice kernel knows each rank's range from the SBP, which is what makes
// this work.) Slicing is linear: x:P -> y:P.
absl::Status SliceGetSbp(SbpContext& ctx) {
  const TensorDesc& x = ctx.input_desc("x");
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> s, ResolveSlice(ctx.op().attrs(), x, "x_0"));
  const OpArg xa{"x", 0}, ya{"y", 0};
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (s[i].full(x.shape.dim(i))) {
      ctx.NewBuilder().Split(xa, i).Split(ya, i).Build();
    } else {
      ctx.NewBuilder().Split(xa, i).PartialSum(ya).Build();
    }
  }
  ctx.NewBuilder().PartialSum(xa).PartialSum(ya).Build();
  return absl::OkStatus();
}

// The adjoint of slice: dx has like's shape (dy's dtype) with dy scattered
// into the slice and zeros elsewhere. OneFlow's slice_grad takes the shape
// as an attribute (like_shape); ours takes a `like` input, as narrow_grad.
absl::Status SliceGradShape(ShapeContext& ctx) {
  const TensorDesc& dy = ctx.input("dy");
  const TensorDesc& like = ctx.input("like");
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> s,
                       ResolveSlice(ctx.op().attrs(), like, "like_0"));
  const std::vector<int64_t> expect = SlicedDims(s);
  if (DimsOf(dy.shape) != expect) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dy_0 ", dy.ToString(), " must have shape ", Ints(expect),
        ", the slice of like_0 ", like.ToString()));
  }
  ctx.set_output("dx", 0, TensorDesc{like.shape, dy.dtype});
  return absl::OkStatus();
}

// OneFlow's slice_grad list is: full dims dy:S(i) -> dx:S(i); dy:P -> dx:P;
// dy:B -> dx:B (the last equals [+B]). With our extra `like` input we use
// narrow_grad's pattern (like only lends its shape):
//   for i full: dy:S(i) like:S(i) -> dx:S(i)
//   dy:P like:P -> dx:P, dy:P like:B -> dx:P, dy:B like:P -> dx:B.
// Not emitted, for the same reason as in narrow_grad: dy:B like:S(i) ->
// dx:S(i) for a cut dim (the exact adjoint of slice's S(i) -> P). OneFlow's
// slice_grad kernel maps local blocks and does not know rank offsets.
absl::Status SliceGradGetSbp(SbpContext& ctx) {
  const TensorDesc& like = ctx.input_desc("like");
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> s,
                       ResolveSlice(ctx.op().attrs(), like, "like_0"));
  std::vector<bool> whole(like.shape.rank());
  for (int i = 0; i < like.shape.rank(); ++i) whole[i] = s[i].full(like.shape.dim(i));
  EmitPadGradCandidates(ctx, whole);
  return absl::OkStatus();
}

// y = ref with the slice replaced by value; value must have the slice's
// shape and ref's dtype.
absl::Status SliceUpdateShape(ShapeContext& ctx) {
  const TensorDesc& ref = ctx.input("ref");
  const TensorDesc& value = ctx.input("value");
  OFS_RETURN_IF_ERROR(CheckSameDtype(ref, "ref_0", value, "value_0"));
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> s,
                       ResolveSlice(ctx.op().attrs(), ref, "ref_0"));
  const std::vector<int64_t> expect = SlicedDims(s);
  if (DimsOf(value.shape) != expect) {
    return absl::InvalidArgumentError(absl::StrCat(
        "value_0 ", value.ToString(), " must have shape ", Ints(expect),
        ", the slice of ref_0 ", ref.ToString()));
  }
  ctx.set_output("y", 0, ref);
  return absl::OkStatus();
}

// SPEC.md §6, OneFlow's list exactly, judged on ref:
//   for i: ref:S(i) value:B -> y:S(i) (each rank writes the part of the
//   broadcast value that lands in its part of ref; the kernel knows its
//   range), and for a full dim also ref:S(i) value:S(i) -> y:S(i);
//   then ref:P value:P -> y:P (y is linear in (ref, value) jointly).
absl::Status SliceUpdateGetSbp(SbpContext& ctx) {
  const TensorDesc& ref = ctx.input_desc("ref");
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> s,
                       ResolveSlice(ctx.op().attrs(), ref, "ref_0"));
  const OpArg r{"ref", 0}, v{"value", 0}, y{"y", 0};
  for (int i = 0; i < ref.shape.rank(); ++i) {
    ctx.NewBuilder().Split(r, i).Broadcast(v).Split(y, i).Build();
    if (s[i].full(ref.shape.dim(i))) {
      ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
    }
  }
  ctx.NewBuilder().PartialSum(r).PartialSum(v).PartialSum(y).Build();
  return absl::OkStatus();
}

// Ours, under every policy (OneFlow gives wrong results here): the N-D
// product can pair ref:S(i) value:B on one mesh axis with ref:S(i)
// value:S(i) on another, e.g. ref (S(0),S(0)) value (B,S(0)) on [2,2] with
// ref [5,7], value [5,3]: rank 1 holds ref rows [2,3) but value rows
// [3,5). A candidate stays only if, on every rank, the value rows it holds
// cover the rows of its ref part, on every dim where both split (dims the
// slice covers fully, where value and ref indices coincide).
absl::Status SliceUpdateNdHook(NdCandidateContext& ctx) {
  const Shape& ref = ctx.input_descs()[0].shape;
  const Shape& value = ctx.input_descs()[1].shape;
  const absl::Span<const int64_t> h = ctx.hierarchy();
  int64_t ranks = 1;
  for (int64_t x : h) ranks *= x;
  auto aligned = [&](const NdSbpSignature& sig) {
    MeshCoord coord(h.size(), 0);
    for (int64_t r = 0; r < ranks; ++r) {
      int64_t rest = r;
      for (int i = static_cast<int>(h.size()) - 1; i >= 0; --i) {
        coord[i] = rest % h[i];
        rest /= h[i];
      }
      const TensorSlice rs = SliceAt(ref, sig[0], h, coord);
      const TensorSlice vs = SliceAt(value, sig[1], h, coord);
      for (int d = 0; d < ref.rank(); ++d) {
        if (ref.dim(d) != value.dim(d) || rs.range(d).empty()) continue;
        const IndexRange need = rs.range(d);
        const IndexRange have = vs.range(d);
        if (need.begin < have.begin || need.end > have.end) return false;
      }
    }
    return true;
  };
  std::vector<NdSbpSignature>& list = ctx.candidates();
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const NdSbpSignature& sig) { return !aligned(sig); }),
             list.end());
  return absl::OkStatus();
}

// ------------------------------------------------------------- expand ----

// expand_shape with -1 resolved. lpad = len(expand_shape) - nd(in) must be
// >= 0: OneFlow computes it as size_t, so its check is vacuous and a
// negative lpad wraps around (SPEC.md §9 #18); ours is an error. New leading
// dims need an explicit extent >= 1; an aligned entry may be -1 (keep the
// input extent) and an input extent must be 1 or equal to the new one.
absl::StatusOr<std::vector<int64_t>> ResolveExpand(const AttrMap& attrs,
                                                   const TensorDesc& in) {
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> shape, attrs.Get<std::vector<int64_t>>("expand_shape"));
  const int rank = in.shape.rank();
  const int64_t lpad = static_cast<int64_t>(shape.size()) - rank;
  if (lpad < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute expand_shape ", Ints(shape), " has ", shape.size(),
        " entries, fewer than the rank ", rank, " of in_0 ", in.ToString(),
        " (lpad ", lpad, " < 0)"));
  }
  std::vector<int64_t> out = shape;
  for (int64_t j = 0; j < static_cast<int64_t>(shape.size()); ++j) {
    const bool aligned = j >= lpad;
    const int64_t d = aligned ? in.shape.dim(static_cast<int>(j - lpad)) : 1;
    if (aligned && shape[j] == -1) {
      out[j] = d;
      continue;
    }
    if (shape[j] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute expand_shape ", Ints(shape), " has ", shape[j], " at index ", j,
          aligned ? "; extents must be >= 1, or -1 to keep the input's"
                  : ", a new leading dim; it needs an extent >= 1"));
    }
    if (d != 1 && d != shape[j]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "in_0 ", in.ToString(), " has extent ", d, " on dim ", j - lpad,
          ", which cannot expand to ", shape[j], " (attribute expand_shape ", Ints(shape),
          "); only extent-1 dims expand"));
    }
  }
  return out;
}

absl::Status ExpandShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ResolveExpand(ctx.op().attrs(), in));
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

// SPEC.md §6, OneFlow's list exactly: an input dim that keeps its extent
// keeps its split, renumbered by lpad; an expanded (extent-1) dim cannot be
// split. Broadcasting copies values, so it is linear: P -> P.
absl::Status ExpandGetSbp(SbpContext& ctx) {
  const TensorDesc& in = ctx.input_desc("in");
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> out, ResolveExpand(ctx.op().attrs(), in));
  const int lpad = static_cast<int>(out.size()) - in.shape.rank();
  for (int i = 0; i < in.shape.rank(); ++i) {
    if (in.shape.dim(i) == out[i + lpad]) {
      ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i + lpad).Build();
    }
  }
  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
  return absl::OkStatus();
}

OpDefBuilder SliceAttrs(OpDefBuilder b) {
  b.RequiredAttr("start", AttrType::kInts)
      .RequiredAttr("stop", AttrType::kInts)
      .RequiredAttr("step", AttrType::kInts);
  return b;
}

OpDefBuilder NarrowAttrs(OpDefBuilder b) {
  b.RequiredAttr("dim", AttrType::kInt)
      .RequiredAttr("start", AttrType::kInt)
      .RequiredAttr("length", AttrType::kInt);
  return b;
}

}  // namespace

absl::Status RegisterConcatSliceOps(OpRegistry* registry) {
  OpDefBuilder cat("cat");
  cat.VariadicInput("in").Output("out")
      .Attr("axis", AttrValue(int64_t{0}))
      .Attr("max_dim_size", AttrValue(int64_t{0}))
      .Doc("Concatenation along axis (OneFlow's user op \"concat\").")
      .SetShapeFn(CatShape).SetGetSbpFn(CatGetSbp).SetExtendedSbpFn(MovePartials());
  OpDefBuilder stack("stack");
  stack.VariadicInput("in").Output("out")
      .Attr("axis", AttrValue(int64_t{0}))
      .Attr("max_dim_size", AttrValue(int64_t{0}))
      .SetShapeFn(StackShape).SetGetSbpFn(StackGetSbp).SetExtendedSbpFn(MovePartials());
  OpDefBuilder split("split");
  split.Input("x").VariadicOutput("out")
      .Attr("axis", AttrValue(int64_t{0}))
      .RequiredAttr("sizes", AttrType::kInts)
      .Doc("Split into pieces of the given sizes (ours; OneFlow lowers to narrow).")
      .SetOutputArityFn(SplitArity)
      .SetShapeFn(SplitShape).SetGetSbpFn(SplitGetSbp).SetExtendedSbpFn(MovePartials());
  OpDefBuilder narrow = NarrowAttrs(OpDefBuilder("narrow"));
  narrow.Input("in").Output("out").SetShapeFn(NarrowShape).SetGetSbpFn(NarrowGetSbp)
      .SetExtendedSbpFn(MovePartials());
  OpDefBuilder narrow_grad = NarrowAttrs(OpDefBuilder("narrow_grad"));
  narrow_grad.Input("dy").Input("like").Output("dx")
      .SetShapeFn(NarrowGradShape).SetGetSbpFn(NarrowGradGetSbp);
  OpDefBuilder slice = SliceAttrs(OpDefBuilder("slice"));
  slice.Input("x").Output("y").SetShapeFn(SliceShape).SetGetSbpFn(SliceGetSbp)
      .SetExtendedSbpFn(MovePartials());
  OpDefBuilder slice_grad = SliceAttrs(OpDefBuilder("slice_grad"));
  slice_grad.Input("dy").Input("like").Output("dx")
      .SetShapeFn(SliceGradShape).SetGetSbpFn(SliceGradGetSbp);
  OpDefBuilder slice_update = SliceAttrs(OpDefBuilder("slice_update"));
  slice_update.Input("ref").Input("value").Output("y")
      .SetShapeFn(SliceUpdateShape).SetGetSbpFn(SliceUpdateGetSbp)
      .SetNdCandidateHook(SliceUpdateNdHook);
  OpDefBuilder expand("expand");
  expand.Input("in").Output("out").RequiredAttr("expand_shape", AttrType::kInts)
      .SetShapeFn(ExpandShape).SetGetSbpFn(ExpandGetSbp).SetExtendedSbpFn(MovePartials());
  return RegisterAll(registry, {cat, stack, split, narrow, narrow_grad, slice, slice_grad,
                                slice_update, expand});
}

}  // namespace oneflow_sbp::ops

