// CPU kernels of the concat/slice family: cat, stack, split, narrow,
// narrow_grad, slice, slice_grad, slice_update (rules in
// ops/concat_slice_ops.cc).
//
// All of them move bytes with BoxCopy in GLOBAL coordinates, so each rank
// writes exactly the part of the op its local shards hold, whatever the
// layout: slice with x:S(i) -> y:P writes the part of the slice inside the
// local x range into a zeroed full-size y; slice_update with ref:S(i),
// value:B updates only the local part of ref; cat with inputs split on a
// kept dim copies each piece's local block. Outputs follow the partial
// convention of copy_kernel_util.h. Every dtype works (bytes are moved, no
// arithmetic), so there is no dtype dispatch.
#include "kernels/common/concat_slice_kernels.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/box_copy.h"
#include "kernels/common/copy_kernel_util.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"
#include "ops/slice_params.h"

namespace oneflow_sbp::kernels {
namespace {

using ops::SliceDim;

absl::StatusOr<std::vector<SliceDim>> SliceDimsOf(const KernelContext& ctx, const TensorDesc& full,
                                                  absl::string_view bn) {
  return ctx.Annotate(ops::ResolveSliceDims(ctx.Attr<std::vector<int64_t>>("start"),
                                            ctx.Attr<std::vector<int64_t>>("stop"),
                                            ctx.Attr<std::vector<int64_t>>("step"), full, bn));
}

// narrow as a slice: every dim whole except `dim`.
absl::StatusOr<std::vector<SliceDim>> NarrowDimsOf(const KernelContext& ctx,
                                                   const TensorDesc& full, absl::string_view bn) {
  OFS_ASSIGN_OR_RETURN(ops::NarrowRange r,
                       ctx.Annotate(ops::ResolveNarrowRange(
                           ctx.Attr<int64_t>("dim"), ctx.Attr<int64_t>("start"),
                           ctx.Attr<int64_t>("length"), full, bn)));
  std::vector<SliceDim> dims;
  for (int i = 0; i < full.shape.rank(); ++i) dims.push_back(SliceDim{0, full.shape.dim(i), 1});
  dims[r.dim] = SliceDim{r.start, r.start + r.length, 1};
  return dims;
}

// Maps index point i of the sliced tensor to element start + step * i.
std::vector<DimMap> SlicedMaps(const std::vector<SliceDim>& dims) {
  std::vector<DimMap> maps;
  for (size_t i = 0; i < dims.size(); ++i) {
    maps.push_back(DimMap{static_cast<int>(i), dims[i].start, dims[i].step});
  }
  return maps;
}

// slice / narrow: y[i] = x[start + step * i].
absl::Status SliceForward(KernelContext& ctx, const std::vector<SliceDim>& dims) {
  const BlobLayout& x = ctx.input_layout(0);
  const BlobLayout& y = ctx.output_layout(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, y.local_dims(), x.logical.dtype));
  ZeroIfPartial(ctx, 0);
  BoxCopyPlan plan{FullBox(y.logical.shape.dims()), SlicedMaps(dims),
                   IdentityMaps(y.logical.shape.rank())};
  BoxCopyCount n;
  OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, 0, 0, &n));
  return CheckCoverage(ctx, 0, n);
}

// slice_grad / narrow_grad: dx = zeros shaped like `like`, dx[start + step
// * i] = dy[i]. like (input 1) only lends its shape: dx's local dims are
// like's.
absl::Status SliceBackward(KernelContext& ctx, const std::vector<SliceDim>& dims) {
  const BlobLayout& dy = ctx.input_layout(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, ctx.input(1).dims(), dy.logical.dtype));
  ctx.output(0).SetZero();
  BoxCopyPlan plan{FullBox(dy.logical.shape.dims()), IdentityMaps(dy.logical.shape.rank()),
                   SlicedMaps(dims)};
  BoxCopyCount n;
  OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, 0, 0, &n));
  return CheckCoverage(ctx, 0, n);
}

// slice, narrow (forward: x is input 0) and their gradients (backward:
// like, input 1, has the full shape).
absl::Status SliceFamilyKernel(KernelContext& ctx, bool narrow, bool backward) {
  const TensorDesc& full = ctx.input_layout(backward ? 1 : 0).logical;
  const char* bn = backward ? "like_0" : narrow ? "in_0" : "x_0";
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> dims,
                       narrow ? NarrowDimsOf(ctx, full, bn) : SliceDimsOf(ctx, full, bn));
  return backward ? SliceBackward(ctx, dims) : SliceForward(ctx, dims);
}

// y = ref with y[start + step * i] = value[i]. Each rank copies its ref
// block, then the part of value that lands in it.
absl::Status SliceUpdateKernel(KernelContext& ctx) {
  const BlobLayout& ref = ctx.input_layout(0);
  const BlobLayout& value = ctx.input_layout(1);
  OFS_ASSIGN_OR_RETURN(std::vector<SliceDim> dims, SliceDimsOf(ctx, ref.logical, "ref_0"));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, ctx.input(0).dims(), ref.logical.dtype));
  const int rank = ref.logical.shape.rank();
  ZeroIfPartial(ctx, 0);
  BoxCopyCount n;
  const BoxCopyPlan whole{FullBox(ref.logical.shape.dims()), IdentityMaps(rank),
                          IdentityMaps(rank)};
  OFS_RETURN_IF_ERROR(CopyFromInput(ctx, whole, 0, 0, &n));
  const BoxCopyPlan update{FullBox(value.logical.shape.dims()), IdentityMaps(rank),
                           SlicedMaps(dims)};
  // Where value is missing locally, a partial y's addend of it is 0.
  if (ctx.output_layout(0).is_partial()) OFS_RETURN_IF_ERROR(ZeroFill(ctx, update, 0));
  OFS_RETURN_IF_ERROR(CopyFromInput(ctx, update, 1, 0, &n));
  return CheckCoverage(ctx, 0, n);
}

absl::StatusOr<int> AxisAttr(const KernelContext& ctx, int rank) {
  return ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>("axis"), rank, "attribute axis"));
}

// out = the inputs concatenated on axis; input k occupies [off_k, off_k +
// len_k) of the output's axis.
absl::Status CatKernel(KernelContext& ctx) {
  const BlobLayout& out = ctx.output_layout(0);
  const int rank = out.logical.shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis, AxisAttr(ctx, rank));
  LocalDims dims = ctx.input(0).dims();
  dims[axis] = 0;
  for (int k = 0; k < ctx.num_inputs(); ++k) dims[axis] += ctx.input(k).dim(axis);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, dims, out.logical.dtype));
  ZeroIfPartial(ctx, 0);
  BoxCopyCount n;
  int64_t offset = 0;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    const int64_t len = ctx.input_layout(k).logical.shape.dim(axis);
    BoxCopyPlan plan{FullBox(out.logical.shape.dims()), IdentityMaps(rank), IdentityMaps(rank)};
    plan.box[axis] = IndexRange{offset, offset + len};
    plan.src[axis].offset = -offset;
    OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, k, 0, &n));
    offset += len;
  }
  return CheckCoverage(ctx, 0, n);
}

// out[..., k, ...] = in_k: input dim d is output dim d (d < axis) or d + 1.
absl::Status StackKernel(KernelContext& ctx) {
  const BlobLayout& out = ctx.output_layout(0);
  const int in_rank = ctx.input_layout(0).logical.shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis, AxisAttr(ctx, in_rank + 1));
  LocalDims dims = ctx.input(0).dims();
  dims.insert(dims.begin() + axis, ctx.num_inputs());
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, dims, out.logical.dtype));
  ZeroIfPartial(ctx, 0);
  BoxCopyCount n;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    BoxCopyPlan plan{FullBox(out.logical.shape.dims()), {}, IdentityMaps(in_rank + 1)};
    plan.box[axis] = IndexRange{k, k + 1};
    for (int d = 0; d < in_rank; ++d) plan.src.push_back(SameDim(d < axis ? d : d + 1));
    OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, k, 0, &n));
  }
  return CheckCoverage(ctx, 0, n);
}

// out_k = x[..., off_k : off_k + sizes[k], ...] on axis.
absl::Status SplitKernel(KernelContext& ctx) {
  const BlobLayout& x = ctx.input_layout(0);
  const int rank = x.logical.shape.rank();
  OFS_ASSIGN_OR_RETURN(const int axis, AxisAttr(ctx, rank));
  int64_t offset = 0;
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    const BlobLayout& out = ctx.output_layout(k);
    const int64_t len = out.logical.shape.dim(axis);
    LocalDims dims = ctx.input(0).dims();
    // A single piece is x itself and may keep a split of axis.
    if (ctx.num_outputs() > 1) dims[axis] = len;
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(k, dims, x.logical.dtype));
    ZeroIfPartial(ctx, k);
    BoxCopyPlan plan{FullBox(out.logical.shape.dims()), IdentityMaps(rank), IdentityMaps(rank)};
    plan.src[axis].offset = offset;
    BoxCopyCount n;
    OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, 0, k, &n));
    OFS_RETURN_IF_ERROR(CheckCoverage(ctx, k, n));
    offset += len;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterConcatSliceKernelsOn(KernelRegistry& registry, DeviceType device) {
  auto slice_family = [](bool narrow, bool backward) -> KernelFn {
    return [=](KernelContext& ctx) { return SliceFamilyKernel(ctx, narrow, backward); };
  };
  const std::vector<DataType> all = DtypesOf(AllTypes{});
  return RegisterKernels(registry, device,
                         {
                             {"cat", CatKernel, all},
                             {"narrow", slice_family(true, false), all},
                             {"narrow_grad", slice_family(true, true), all},
                             {"slice", slice_family(false, false), all},
                             {"slice_grad", slice_family(false, true), all},
                             {"slice_update", SliceUpdateKernel, all},
                             {"split", SplitKernel, all},
                             {"stack", StackKernel, all},
                         });
}

namespace {

absl::Status RegisterConcatSliceKernels(KernelRegistry& registry) {
  return RegisterConcatSliceKernelsOn(registry, DeviceType::kCpu);
}

OFS_REGISTER_KERNELS(RegisterConcatSliceKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
