// Indexing and "like" ops (SPEC.md §6). Candidate lists, in emission
// order; the engine appends the all-B signature to every list. Where
// SPEC.md §6 lists OneFlow's candidates they come first, exactly; our
// additions follow, each marked "ours" with the reason it is exact.
//
// embedding(weight, indices -> out; padding_idx, scale_grad_by_freq)
//   out = indices.shape ++ [weight.shape[1]], weight's dtype.
//   OneFlow: if !scale_grad_by_freq, for i < nd(indices):
//     indices:S(i) weight:B -> out:S(i)
//   Ours (always; the forward does not depend on scale_grad_by_freq):
//     weight:S(1) indices:B -> out:S(nd(indices))   embedding-dim split
//     weight:S(0) indices:B -> out:P                vocab-parallel
//
// embedding_grad(dy, weight, indices -> dx; same attrs)
//   dx has weight's desc (weight is only a shape witness).
//   OneFlow: if !scale_grad_by_freq, for i < nd(indices):
//     dy:S(i) weight:B indices:S(i) -> dx:P
//   Ours (always; see EmbeddingGradGetSbp for why each is exact even with
//   scale_grad_by_freq):
//     dy:S(nd(indices)) weight:S(1) indices:B -> dx:S(1)
//     dy:P weight:B indices:B -> dx:P
//     dy:B weight:S(0) indices:B -> dx:S(0)   (the dual of vocab-parallel)
//
// gather(in, indices -> out; axis)            SPEC.md §6, then ours:
//   in:P indices:B -> out:P                   (gather is linear in `in`)
// dim_gather(input, index -> output; dim)     SPEC.md §6 with quirk #15 fixed
// where(condition, x, y -> out)               ours (three-way broadcasting)
// reduce_sum_like(x, like -> y; axis)         OneFlow's list, then ours
// broadcast_like(x, like -> y; broadcast_axes) OneFlow's list, axis bug fixed
//
// "like" operands (reduce_sum_like's like, broadcast_like's like,
// embedding_grad's weight) are read for their shape only. OneFlow computes
// the output's *local* shape from the like operand's local shape (its
// physical shape function copies like's desc), so a candidate must give
// like and the output the same local shape: the same split, or any of B/P
// on like while the output is B or P (both mean "full extent"). Every
// like-related candidate below keeps that invariant.
//
// Axis attributes accept negative values, normalised as PyTorch does
// (OneFlow's functional layer normalises before creating the op).
#include "ops/index_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

// ---------------------------------------------------------------------------
// Shared checks

absl::StatusOr<std::vector<int>> AxesOf(const std::vector<int64_t>& axes,
                                        const TensorDesc& desc, absl::string_view bn,
                                        absl::string_view attr) {
  absl::StatusOr<std::vector<int>> a =
      NormalizeAxes(axes, desc.shape.rank(), absl::StrCat("attribute ", attr));
  if (!a.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(bn, " ", desc.ToString(), ": ", a.status().message()));
  }
  return a;
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// ---------------------------------------------------------------------------
// embedding / embedding_grad

const OpArg kWeight{"weight", 0};
const OpArg kIndices{"indices", 0};
const OpArg kOut{"out", 0};
const OpArg kDy{"dy", 0};
const OpArg kDx{"dx", 0};

// Checks weight (rank 2), indices (integer) and padding_idx, and returns
// the lookup's shape: indices.shape ++ [weight.shape[1]].
absl::StatusOr<std::vector<int64_t>> EmbeddingOutDims(ShapeContext& ctx) {
  const TensorDesc& weight = ctx.input("weight");
  const TensorDesc& indices = ctx.input("indices");
  OFS_RETURN_IF_ERROR(CheckRank(weight, "weight_0", 2));
  OFS_RETURN_IF_ERROR(CheckIndexDtype(indices, "indices_0"));
  const int64_t padding_idx = ctx.Attr<int64_t>("padding_idx");
  const int64_t vocab = weight.shape.dim(0);
  // -1 means "no padding row"; frameworks wrap other negatives beforehand.
  if (padding_idx < -1 || padding_idx >= vocab) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute padding_idx ", padding_idx, " is out of range for weight_0 ",
        weight.ToString(), " (valid: -1 for none, or 0 .. ", vocab - 1, ")"));
  }
  std::vector<int64_t> dims(indices.shape.dims().begin(), indices.shape.dims().end());
  dims.push_back(weight.shape.dim(1));
  return dims;
}

absl::Status EmbeddingShape(ShapeContext& ctx) {
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, EmbeddingOutDims(ctx));
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, ctx.input("weight").dtype});
  return absl::OkStatus();
}

absl::Status EmbeddingGetSbp(SbpContext& ctx) {
  const int ni = ctx.input_desc("indices").shape.rank();
  // OneFlow: each rank looks up its own slice of the indices in the whole
  // table. OneFlow emits these only without scale_grad_by_freq (its
  // gradient would need global counts); we keep that.
  if (!ctx.Attr<bool>("scale_grad_by_freq")) {
    for (int i = 0; i < ni; ++i) {
      ctx.NewBuilder().Split(kIndices, i).Broadcast(kWeight).Split(kOut, i).Build();
    }
  }
  ctx.OursFollow();
  // Ours: column-parallel table. out[..., d] = weight[idx, d], so the ranks
  // holding columns [a,b) of the table produce columns [a,b) of every
  // looked-up row: out is split on its last (embedding) dim.
  ctx.NewBuilder().Split(kWeight, 1).Broadcast(kIndices).Split(kOut, ni).Build();
  // Ours: vocab-parallel table (Megatron's VocabParallelEmbedding). Each
  // rank holds rows [lo,hi) of the table; it looks up indices inside its
  // range (offset by -lo) and writes ZEROS for indices outside it, so every
  // output row is non-zero on exactly one rank and the sum over ranks is
  // the lookup: out:P. The kernel MUST mask out-of-range indices this way
  // (a plain gather would read out of bounds or the wrong rows).
  ctx.NewBuilder().Split(kWeight, 0).Broadcast(kIndices).PartialSum(kOut).Build();
  return absl::OkStatus();
}

absl::Status EmbeddingGradShape(ShapeContext& ctx) {
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> expected, EmbeddingOutDims(ctx));
  const TensorDesc& dy = ctx.input("dy");
  const TensorDesc& weight = ctx.input("weight");
  if (std::vector<int64_t>(dy.shape.dims().begin(), dy.shape.dims().end()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dy_0 ", dy.ToString(), " does not match the embedding output ",
        DimsToString(expected), " (indices_0 ", ctx.input("indices").ToString(),
        " ++ [weight_0 ", weight.ToString(), " dim 1])"));
  }
  OFS_RETURN_IF_ERROR(CheckSameDtype(dy, "dy_0", weight, "weight_0"));
  ctx.set_output("dx", 0, weight);
  return absl::OkStatus();
}

// dx[v] = sum over positions p with indices[p] == v of dy[p] (rows equal
// to padding_idx get zero; with scale_grad_by_freq each row is divided by
// its count over ALL of indices).
absl::Status EmbeddingGradGetSbp(SbpContext& ctx) {
  const int ni = ctx.input_desc("indices").shape.rank();
  // OneFlow: ranks holding matching slices of indices and dy scatter-add
  // into a full-size table; the sum over ranks is dx. Not with
  // scale_grad_by_freq: a rank would count only its own indices.
  if (!ctx.Attr<bool>("scale_grad_by_freq")) {
    for (int i = 0; i < ni; ++i) {
      ctx.NewBuilder().Split(kDy, i).Broadcast(kWeight).Split(kIndices, i)
          .PartialSum(kDx).Build();
    }
  }
  ctx.OursFollow();
  // Ours: embedding-dim split, the gradient of the column-parallel lookup.
  // Column d of dx depends only on column d of dy; indices are whole, so
  // counts (scale_grad_by_freq) are global. weight:S(1) gives dx its local
  // shape.
  ctx.NewBuilder().Split(kDy, ni).Split(kWeight, 1).Broadcast(kIndices)
      .Split(kDx, 1).Build();
  // Ours: dx is linear in dy (the scatter pattern and the counts depend on
  // indices only, which are whole), so partial dy gives partial dx.
  ctx.NewBuilder().PartialSum(kDy).Broadcast(kWeight).Broadcast(kIndices)
      .PartialSum(kDx).Build();
  // Ours: vocab-parallel gradient, the dual of the forward's weight:S(0)
  // candidate (whose out:P has a B gradient). Each rank scatter-adds only
  // the positions whose index falls in its row range [lo,hi), offset by
  // -lo; the kernel MUST skip the others. Counts come from whole indices.
  ctx.NewBuilder().Broadcast(kDy).Split(kWeight, 0).Broadcast(kIndices)
      .Split(kDx, 0).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// gather: out = in.shape[:axis] ++ indices.shape ++ in.shape[axis+1:]

const OpArg kIn{"in", 0};

absl::Status GatherShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  const TensorDesc& indices = ctx.input("indices");
  OFS_RETURN_IF_ERROR(CheckRank(in, "in_0", 1, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckIndexDtype(indices, "indices_0"));
  OFS_ASSIGN_OR_RETURN(int axis, NormalizeAxisOf(ctx.Attr<int64_t>("axis"), in, "in_0", "axis"));
  std::vector<int64_t> dims(in.shape.dims().begin(), in.shape.dims().begin() + axis);
  dims.insert(dims.end(), indices.shape.dims().begin(), indices.shape.dims().end());
  dims.insert(dims.end(), in.shape.dims().begin() + axis + 1, in.shape.dims().end());
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

// SPEC.md §6, exactly:
//   for i < nd(indices): indices:S(i) in:B -> out:S(axis+i)
//   for i < nd(in): i == axis: indices:B in:S(i) -> out:P (each rank gathers
//     from its row range and zeroes the rest, as vocab-parallel embedding);
//     else indices:B in:S(i) -> out:S(i < axis ? i : i + nd(indices) - 1)
// Ours, appended after OneFlow's list (as dim_gather's in OneFlow):
//   in:P indices:B -> out:P
// out is a selection of in's elements, so it is linear in `in`: gathering
// each rank's partial addend with the same whole indices gives the partial
// addends of the gathered sum. OneFlow lacks it and would box `in` P -> B.
// Appended last so OneFlow's own candidates keep their positions.
absl::Status GatherGetSbp(SbpContext& ctx) {
  const TensorDesc& in = ctx.input_desc("in");
  const int ni = ctx.input_desc("indices").shape.rank();
  OFS_ASSIGN_OR_RETURN(int axis, NormalizeAxisOf(ctx.Attr<int64_t>("axis"), in, "in_0", "axis"));
  for (int i = 0; i < ni; ++i) {
    ctx.NewBuilder().Split(kIndices, i).Broadcast(kIn).Split(kOut, axis + i).Build();
  }
  for (int i = 0; i < in.shape.rank(); ++i) {
    if (i == axis) {
      ctx.NewBuilder().Broadcast(kIndices).Split(kIn, i).PartialSum(kOut).Build();
    } else {
      ctx.NewBuilder().Broadcast(kIndices).Split(kIn, i)
          .Split(kOut, i < axis ? i : i + ni - 1).Build();
    }
  }
  ctx.OursFollow();
  ctx.NewBuilder().PartialSum(kIn).Broadcast(kIndices).PartialSum(kOut).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// dim_gather: output[p] = input[p with p[dim] := index[p]]; output has
// index's shape.

const OpArg kInput{"input", 0};
const OpArg kIndex{"index", 0};
const OpArg kOutput{"output", 0};

absl::Status DimGatherShape(ShapeContext& ctx) {
  const TensorDesc& input = ctx.input("input");
  const TensorDesc& index = ctx.input("index");
  OFS_RETURN_IF_ERROR(CheckRank(input, "input_0", 1, /*at_least=*/true));
  OFS_RETURN_IF_ERROR(CheckIndexDtype(index, "index_0"));
  if (index.shape.rank() != input.shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "index_0 ", index.ToString(), " must have the rank of input_0 ", input.ToString(),
        " (", index.shape.rank(), " vs ", input.shape.rank(), ")"));
  }
  OFS_ASSIGN_OR_RETURN(int dim, NormalizeAxisOf(ctx.Attr<int64_t>("dim"), input, "input_0", "dim"));
  // PyTorch's rule (OneFlow does not check): off `dim`, index may not be
  // larger than input, or the gather reads past the end.
  for (int i = 0; i < input.shape.rank(); ++i) {
    if (i != dim && index.shape.dim(i) > input.shape.dim(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index_0 ", index.ToString(), " is larger than input_0 ", input.ToString(),
          " on dim ", i, " (", index.shape.dim(i), " > ", input.shape.dim(i),
          "); only dim ", dim, " (attribute dim) may be larger"));
    }
  }
  ctx.set_output("output", 0, TensorDesc{index.shape, input.dtype});
  return absl::OkStatus();
}

// SPEC.md §6 with quirk #15 fixed:
//   for i < nd(index):
//     i != dim, index.shape[i] == input.shape[i]:
//       index:S(i) input:S(i) -> output:S(i)
//     i == dim: input:B index:S(i) -> output:S(i)
//   input:P index:B -> output:P   (gather is linear in input)
// Off `dim`, output position p reads input at the same coordinate p[i].
// Splitting index and input on i gives each rank matching coordinate
// ranges only when both extents are equal (balanced parts of equal extents
// coincide). OneFlow emits the pair whatever the extents, so with index
// shorter than input each rank reads the wrong input rows. We drop it then;
// `input:B index:S(i)` is no substitute (a rank would need its slice's
// global offset, which the kernel does not get). On `dim` the coordinate
// comes from the index value, so input must be whole.
absl::Status DimGatherGetSbp(SbpContext& ctx) {
  const TensorDesc& input = ctx.input_desc("input");
  const Shape& index = ctx.input_desc("index").shape;
  OFS_ASSIGN_OR_RETURN(int dim, NormalizeAxisOf(ctx.Attr<int64_t>("dim"), input, "input_0", "dim"));
  for (int i = 0; i < index.rank(); ++i) {
    if (i != dim) {
      if (i < input.shape.rank() && index.dim(i) == input.shape.dim(i)) {
        ctx.NewBuilder().Split(kIndex, i).Split(kInput, i).Split(kOutput, i).Build();
      }
    } else {
      ctx.NewBuilder().Broadcast(kInput).Split(kIndex, i).Split(kOutput, i).Build();
    }
  }
  ctx.NewBuilder().PartialSum(kInput).Broadcast(kIndex).PartialSum(kOutput).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// where(condition, x, y) -> out: NumPy broadcasting of all three.

const OpArg kCond{"condition", 0};
const OpArg kX{"x", 0};
const OpArg kY{"y", 0};

// Extent of result dim i (of `rank`) in `s`, right-aligned; 1 if missing.
int64_t AlignedDim(const Shape& s, int rank, int i) {
  const int j = i - (rank - s.rank());
  return j >= 0 ? s.dim(j) : 1;
}

absl::Status WhereShape(ShapeContext& ctx) {
  const TensorDesc& cond = ctx.input("condition");
  const TensorDesc& x = ctx.input("x");
  const TensorDesc& y = ctx.input("y");
  if (cond.dtype != DataType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat("condition_0 is ", cond.ToString(), " but must be bool"));
  }
  OFS_RETURN_IF_ERROR(CheckSameDtype(x, "x_0", y, "y_0"));
  const int rank = std::max({cond.shape.rank(), x.shape.rank(), y.shape.rank()});
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    int64_t d = 1;
    for (const Shape* s : {&cond.shape, &x.shape, &y.shape}) {
      const int64_t e = AlignedDim(*s, rank, i);
      if (e != 1 && d != 1 && e != d) {
        return absl::InvalidArgumentError(absl::StrCat(
            "condition_0 ", cond.ToString(), ", x_0 ", x.ToString(), " and y_0 ",
            y.ToString(), " do not broadcast: dim ", i, " of the result would be ",
            AlignedDim(cond.shape, rank, i), " vs ", AlignedDim(x.shape, rank, i), " vs ",
            AlignedDim(y.shape, rank, i)));
      }
      d = std::max(d, e);
    }
    dims[i] = d;
  }
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, x.dtype});
  return absl::OkStatus();
}

// Ours (OneFlow's where splits all three operands on every dim of
// condition, which is wrong once they broadcast). The binary broadcast
// rule (binary_ops.cc) generalised to three operands, walking the result
// dims 0..R-1 (R = max rank, operands right-aligned):
//   * out extent 1: skip (nothing to split);
//   * else out:S(i), and each operand that has dim i with the full extent
//     is split on its own dim, each operand where the dim is 1 or missing
//     is B. Derivation: out[p] = cond[pc] ? x[px] : y[py], where an
//     operand's coordinate equals p[i] on a full-extent dim and is 0 on a
//     size-1 or missing one. Ranks holding out rows [a,b) of dim i thus
//     need rows [a,b) of every full-extent operand (their balanced parts
//     coincide, equal extents) and the single row of the others (B).
//   * then condition:B x:P y:P -> out:P: select is linear in (x, y) jointly,
//     sum_r (c ? x_r : y_r) = c ? sum_r x_r : sum_r y_r, with the same c on
//     every rank. (x:P y:B is not: y would be counted N times.)
absl::Status WhereGetSbp(SbpContext& ctx) {
  const Shape& cond = ctx.input_desc("condition").shape;
  const Shape& x = ctx.input_desc("x").shape;
  const Shape& y = ctx.input_desc("y").shape;
  const int rank = std::max({cond.rank(), x.rank(), y.rank()});
  // Ours when the operands broadcast: OneFlow 0.9.0 answers all-B for every
  // where of unequal shapes (tests/testdata/oneflow_oracle_golden.txt), so
  // its list there is empty and these follow it.
  if (!(cond == x && x == y)) ctx.OursFollow();
  for (int i = 0; i < rank; ++i) {
    const int64_t out = std::max(
        {AlignedDim(cond, rank, i), AlignedDim(x, rank, i), AlignedDim(y, rank, i)});
    if (out == 1) continue;
    SbpSignatureBuilder b = ctx.NewBuilder();
    for (const auto& [arg, s] : {std::pair{kCond, &cond}, std::pair{kX, &x},
                                 std::pair{kY, &y}}) {
      if (AlignedDim(*s, rank, i) == out) {
        b.Split(arg, i - (rank - s->rank()));
      } else {
        b.Broadcast(arg);
      }
    }
    b.Split(kOut, i).Build();
  }
  ctx.NewBuilder().Broadcast(kCond).PartialSum(kX).PartialSum(kY).PartialSum(kOut).Build();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// reduce_sum_like(x, like -> y; axis) and broadcast_like(x, like -> y;
// broadcast_axes): each other's gradients. The reduced (broadcast) shape
// may keep the axes as 1s ("keepdims", same rank) or drop them.

const OpArg kLike{"like", 0};

// The shape `full` reduced over `axes`, keeping them as 1s or dropping
// them.
std::vector<int64_t> ReducedDims(const Shape& full, const std::vector<int>& axes,
                                 bool keepdims) {
  std::vector<int64_t> dims;
  for (int i = 0; i < full.rank(); ++i) {
    if (!Contains(axes, i)) {
      dims.push_back(full.dim(i));
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return dims;
}

// OK iff `small` is `full` reduced over `axes`, with or without keepdims.
absl::Status CheckReducedShape(const TensorDesc& full, absl::string_view full_bn,
                               const TensorDesc& small, absl::string_view small_bn,
                               const std::vector<int>& axes, absl::string_view attr) {
  const std::vector<int64_t> kept = ReducedDims(full.shape, axes, /*keepdims=*/true);
  const std::vector<int64_t> dropped = ReducedDims(full.shape, axes, /*keepdims=*/false);
  const std::vector<int64_t> got(small.shape.dims().begin(), small.shape.dims().end());
  if (got == kept || got == dropped) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      small_bn, " ", small.ToString(), " is not ", full_bn, " ", full.ToString(),
      " reduced over attribute ", attr, " [", absl::StrJoin(axes, ","), "]: expected ",
      DimsToString(kept),
      kept == dropped ? "" : absl::StrCat(" or ", DimsToString(dropped))));
}

absl::Status ReduceSumLikeShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  const TensorDesc& like = ctx.input("like");
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes,
                      AxesOf(ctx.Attr<std::vector<int64_t>>("axis"), x, "x_0", "axis"));
  OFS_RETURN_IF_ERROR(CheckReducedShape(x, "x_0", like, "like_0", axes, "axis"));
  OFS_RETURN_IF_ERROR(CheckSameDtype(x, "x_0", like, "like_0"));
  ctx.set_output("y", 0, like);
  return absl::OkStatus();
}

// OneFlow's list, then ours:
//   for i < nd(x): reduced i: x:S(i) like:B -> y:P, then x:S(i) like:P -> y:P
//     (each rank sums its slice of the reduced dim: a partial sum);
//     kept i: x:S(i) like:S(o) -> y:S(o), o = i (keepdims) or i minus the
//     reduced dims before it;
//   x:B like:P -> y:B (OneFlow).
//   Ours: x:P like:B -> y:P and x:P like:P -> y:P: a sum is linear in x.
// like is a shape witness: B and P both give y's full local shape (header).
absl::Status ReduceSumLikeGetSbp(SbpContext& ctx) {
  const TensorDesc& x = ctx.input_desc("x");
  const int like_rank = ctx.input_desc("like").shape.rank();
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes,
                      AxesOf(ctx.Attr<std::vector<int64_t>>("axis"), x, "x_0", "axis"));
  const bool keepdims = like_rank == x.shape.rank();
  int reduced_before = 0;
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (Contains(axes, i)) {
      ctx.NewBuilder().Split(kX, i).Broadcast(kLike).PartialSum(kY).Build();
      ctx.NewBuilder().Split(kX, i).PartialSum(kLike).PartialSum(kY).Build();
      ++reduced_before;
    } else {
      const int o = keepdims ? i : i - reduced_before;
      ctx.NewBuilder().Split(kX, i).Split(kLike, o).Split(kY, o).Build();
    }
  }
  ctx.NewBuilder().Broadcast(kX).PartialSum(kLike).Broadcast(kY).Build();
  // Ours: sum_r reduce(x_r) = reduce(sum_r x_r).
  ctx.OursFollow();
  ctx.NewBuilder().PartialSum(kX).Broadcast(kLike).PartialSum(kY).Build();
  ctx.NewBuilder().PartialSum(kX).PartialSum(kLike).PartialSum(kY).Build();
  return absl::OkStatus();
}

absl::Status BroadcastLikeShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  const TensorDesc& like = ctx.input("like");
  const std::vector<int64_t>& raw = ctx.Attr<std::vector<int64_t>>("broadcast_axes");
  if (raw.empty()) {  // as OneFlow
    return absl::InvalidArgumentError("attribute broadcast_axes [] must not be empty");
  }
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes,
                      AxesOf(raw, like, "like_0", "broadcast_axes"));
  OFS_RETURN_IF_ERROR(CheckReducedShape(like, "like_0", x, "x_0", axes, "broadcast_axes"));
  OFS_RETURN_IF_ERROR(CheckSameDtype(x, "x_0", like, "like_0"));
  ctx.set_output("y", 0, TensorDesc{like.shape, x.dtype});
  return absl::OkStatus();
}

// OneFlow's list, with its axis bug fixed:
//   for i < nd(like): broadcast i: x:B like:S(i) -> y:S(i) (every output
//     row along i is a copy of x); else x:S(i') like:S(i) -> y:S(i), i' the
//     x dim that becomes y's dim i: i when x keeps the broadcast dims as 1s,
//     else i minus the broadcast dims before it. (OneFlow always uses the
//     latter, which names the wrong x dim in the keepdims form.)
//   x:P like:P -> y:P, x:P like:B -> y:P (broadcasting is linear),
//   x:B like:P -> y:B.
absl::Status BroadcastLikeGetSbp(SbpContext& ctx) {
  const TensorDesc& like = ctx.input_desc("like");
  const int x_rank = ctx.input_desc("x").shape.rank();
  OFS_ASSIGN_OR_RETURN(
      std::vector<int> axes,
      AxesOf(ctx.Attr<std::vector<int64_t>>("broadcast_axes"), like, "like_0",
             "broadcast_axes"));
  const bool keepdims = x_rank == like.shape.rank();
  int broadcast_before = 0;
  for (int i = 0; i < like.shape.rank(); ++i) {
    if (Contains(axes, i)) {
      ctx.NewBuilder().Broadcast(kX).Split(kLike, i).Split(kY, i).Build();
      ++broadcast_before;
    } else {
      ctx.NewBuilder().Split(kX, keepdims ? i : i - broadcast_before).Split(kLike, i)
          .Split(kY, i).Build();
    }
  }
  ctx.NewBuilder().PartialSum(kX).PartialSum(kLike).PartialSum(kY).Build();
  ctx.NewBuilder().PartialSum(kX).Broadcast(kLike).PartialSum(kY).Build();
  ctx.NewBuilder().Broadcast(kX).PartialSum(kLike).Broadcast(kY).Build();
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterIndexOps(OpRegistry* registry) {
  OpDefBuilder embedding("embedding");
  embedding.Input("weight").Input("indices").Output("out")
      .Attr("padding_idx", AttrValue(int64_t{-1}))
      .Attr("scale_grad_by_freq", AttrValue(false))
      .Doc("Row lookup: out = weight[indices].")
      .SetShapeFn(EmbeddingShape).SetGetSbpFn(EmbeddingGetSbp);
  OpDefBuilder embedding_grad("embedding_grad");
  embedding_grad.Input("dy").Input("weight").Input("indices").Output("dx")
      .Attr("padding_idx", AttrValue(int64_t{-1}))
      .Attr("scale_grad_by_freq", AttrValue(false))
      .Doc("Gradient of embedding with respect to weight.")
      .SetShapeFn(EmbeddingGradShape).SetGetSbpFn(EmbeddingGradGetSbp);
  OpDefBuilder gather("gather");
  gather.Input("in").Input("indices").Output("out")
      .Attr("axis", AttrValue(int64_t{0}))
      .SetShapeFn(GatherShape).SetGetSbpFn(GatherGetSbp);
  OpDefBuilder dim_gather("dim_gather");
  dim_gather.Input("input").Input("index").Output("output")
      .RequiredAttr("dim", AttrType::kInt)
      .SetShapeFn(DimGatherShape).SetGetSbpFn(DimGatherGetSbp);
  OpDefBuilder where("where");
  where.Input("condition").Input("x").Input("y").Output("out")
      .SetShapeFn(WhereShape).SetGetSbpFn(WhereGetSbp);
  OpDefBuilder reduce_sum_like("reduce_sum_like");
  reduce_sum_like.Input("x").Input("like").Output("y")
      .RequiredAttr("axis", AttrType::kInts)
      .Doc("Sum of x over axis, shaped like `like` (whose values are unused).")
      .SetShapeFn(ReduceSumLikeShape).SetGetSbpFn(ReduceSumLikeGetSbp);
  OpDefBuilder broadcast_like("broadcast_like");
  broadcast_like.Input("x").Input("like").Output("y")
      .RequiredAttr("broadcast_axes", AttrType::kInts)
      .Doc("x broadcast along broadcast_axes to the shape of `like` (values unused).")
      .SetShapeFn(BroadcastLikeShape).SetGetSbpFn(BroadcastLikeGetSbp);
  return RegisterAll(registry, {embedding, embedding_grad, gather, dim_gather, where,
                                reduce_sum_like, broadcast_like});
}

}  // namespace oneflow_sbp::ops
