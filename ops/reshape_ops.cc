// View ops (SPEC.md §6, §6.3).
//
// reshape(in; shape) and flatten(in; start_dim, end_dim) use the
// reshape-class rule of reshape_rule.h, including OneFlow's N-D hook
// (OneFlow lowers flatten to reshape, so flatten behaves the same).
// expand_dims and squeeze keep OneFlow's own lists, which agree with the
// dim-transform analysis except that OneFlow also splits kept size-1 dims;
// squeeze adds P -> P, which OneFlow forgot (ours, SPEC.md §9 #17).
#include "ops/reshape_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/extended_partials.h"
#include "ops/op_util.h"
#include "ops/reshape_rule.h"

namespace oneflow_sbp::ops {
namespace {

const OpArg kIn{"in", 0};
const OpArg kOut{"out", 0};

// `shape` with at most one -1, resolved against `in`'s element count.
absl::StatusOr<Shape> ResolveShape(const Shape& in, const std::vector<int64_t>& shape) {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "attribute shape [", absl::StrJoin(shape, ","), "] has more than one -1"));
      }
      infer = static_cast<int>(i);
    } else if (shape[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute shape [", absl::StrJoin(shape, ","), "] has extent ", shape[i],
          " at dim ", i));
    } else {
      if (known > in.elem_cnt() / shape[i] + 1) known = in.elem_cnt() + 1;  // overflow guard
      else known *= shape[i];
    }
  }
  std::vector<int64_t> dims = shape;
  if (infer >= 0) {
    if (known == 0 || in.elem_cnt() % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot reshape ", in.ToString(), " (", in.elem_cnt(), " elements) to [",
          absl::StrJoin(shape, ","), "]"));
    }
    dims[infer] = in.elem_cnt() / known;
  }
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "attribute shape"));
  if (out.elem_cnt() != in.elem_cnt()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape in_0 ", in.ToString(), " (", in.elem_cnt(), " elements) to ",
        out.ToString(), " (", out.elem_cnt(), " elements)"));
  }
  return out;
}

absl::Status ReshapeShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(Shape out, ResolveShape(in.shape, ctx.Attr<std::vector<int64_t>>("shape")));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

absl::Status FlattenShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  const int rank = std::max(in.shape.rank(), 1);
  OFS_ASSIGN_OR_RETURN(int start, NormalizeAxis(ctx.Attr<int64_t>("start_dim"), rank,
      "attribute start_dim"));
  OFS_ASSIGN_OR_RETURN(int end, NormalizeAxis(ctx.Attr<int64_t>("end_dim"), rank,
      "attribute end_dim"));
  if (start > end) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute start_dim ", start, " is after end_dim ", end));
  }
  std::vector<int64_t> dims;
  int64_t merged = 1;
  for (int i = 0; i < in.shape.rank(); ++i) {
    if (i < start || i > end) {
      dims.push_back(in.shape.dim(i));
    } else {
      merged *= in.shape.dim(i);
      if (i == end) dims.push_back(merged);
    }
  }
  if (in.shape.rank() == 0) dims.push_back(1);
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx.Attr<int64_t>("axis"), in.shape.rank() + 1,
      "attribute axis"));
  std::vector<int64_t> dims(in.shape.dims().begin(), in.shape.dims().end());
  dims.insert(dims.begin() + axis, 1);
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

absl::Status ExpandDimsGetSbp(SbpContext& ctx) {
  const int rank = ctx.input_desc("in").shape.rank();
  OFS_ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx.Attr<int64_t>("axis"), rank + 1,
      "attribute axis"));
  for (int i = 0; i < rank; ++i) {
    ctx.NewBuilder().Split(kIn, i).Split(kOut, i < axis ? i : i + 1).Build();
  }
  ctx.NewBuilder().PartialSum(kIn).PartialSum(kOut).Build();
  return absl::OkStatus();
}

// Squeezed axes: the listed ones (each must have extent 1).
absl::StatusOr<std::vector<int>> SqueezedAxes(const Shape& in, const std::vector<int64_t>& axes) {
  OFS_ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(axes, in.rank(), "attribute axes"));
  for (int a : norm) {
    // NormalizeAxis lets axis 0 through on a scalar (reductions take it);
    // a scalar has no dim to squeeze (found by fuzz/infer_fuzzer).
    if (a >= in.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute axes names dim ", a, " of in_0 ", in.ToString(), ", which has only ",
          in.rank(), " dims"));
    }
    if (in.dim(a) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute axes names dim ", a, " of in_0 ", in.ToString(), ", which has extent ",
          in.dim(a), ", not 1"));
    }
  }
  return norm;
}

absl::Status SqueezeShape(ShapeContext& ctx) {
  const TensorDesc& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes, SqueezedAxes(in.shape,
      ctx.Attr<std::vector<int64_t>>("axes")));
  std::vector<int64_t> dims;
  for (int i = 0; i < in.shape.rank(); ++i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) dims.push_back(in.shape.dim(i));
  }
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  ctx.set_output("out", 0, TensorDesc{out, in.dtype});
  return absl::OkStatus();
}

absl::Status SqueezeGetSbp(SbpContext& ctx) {
  const Shape& in = ctx.input_desc("in").shape;
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes, SqueezedAxes(in,
      ctx.Attr<std::vector<int64_t>>("axes")));
  int k = 0;
  for (int i = 0; i < in.rank(); ++i) {
    if (std::find(axes.begin(), axes.end(), i) != axes.end()) continue;
    ctx.NewBuilder().Split(kIn, i).Split(kOut, k++).Build();
  }
  // Ours: squeezing is linear.
  ctx.OursFollow();
  ctx.NewBuilder().PartialSum(kIn).PartialSum(kOut).Build();
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReshapeOps(OpRegistry* registry) {
  OpDefBuilder reshape("reshape");
  reshape.Input("in").Output("out").RequiredAttr("shape", AttrType::kInts)
      .SetShapeFn(ReshapeShape).SetGetSbpFn(ReshapeGetSbp).SetNdCandidateHook(ReshapeNdHook)
      .SetExtendedSbpFn(MovePartials());
  OpDefBuilder flatten("flatten");
  flatten.Input("in").Output("out")
      .Attr("start_dim", AttrValue(int64_t{0}))
      .Attr("end_dim", AttrValue(int64_t{-1}))
      .SetShapeFn(FlattenShape).SetGetSbpFn(ReshapeGetSbp).SetNdCandidateHook(ReshapeNdHook)
      .SetExtendedSbpFn(MovePartials());
  OpDefBuilder expand_dims("expand_dims");
  expand_dims.Input("in").Output("out").RequiredAttr("axis", AttrType::kInt)
      .SetShapeFn(ExpandDimsShape).SetGetSbpFn(ExpandDimsGetSbp).SetExtendedSbpFn(MovePartials());
  OpDefBuilder squeeze("squeeze");
  squeeze.Input("in").Output("out").RequiredAttr("axes", AttrType::kInts)
      .SetShapeFn(SqueezeShape).SetGetSbpFn(SqueezeGetSbp).SetExtendedSbpFn(MovePartials());
  return RegisterAll(registry, {reshape, flatten, expand_dims, squeeze});
}

}  // namespace oneflow_sbp::ops
