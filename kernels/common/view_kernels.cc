// CPU kernels of the view-like ops: reshape, flatten, expand_dims, squeeze
// (one kernel: a reshape), transpose, expand and broadcast_like (rules in
// ops/reshape_ops.cc, reshape_rule.cc, shape_ops.cc, concat_slice_ops.cc
// and index_ops.cc).
//
// Reshape-class ops: element k (row-major) of the input is element k of
// the output. A local reshape of the shard is only right when the rank's
// output block holds exactly the elements of its input block; the kernel
// does not assume it: it maps each local output element to its global
// flat index and reads it from the local input when it is there (a
// contiguous run at a time). When it is not, the partial convention of
// copy_kernel_util.h applies (zero in a partial output, else kInternal
// naming the layouts), so an N-D reshape candidate whose blocks do not
// line up is reported instead of silently computed wrong.
//
// transpose, expand and broadcast_like are BoxCopies in global
// coordinates. All of these move bytes: every dtype works, and on any
// device with a DeviceOps backend (RegisterViewKernelsOn).
#include "kernels/common/view_kernels.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/box_copy.h"
#include "kernels/common/copy_kernel_util.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"
#include "ops/slice_params.h"

namespace oneflow_sbp::kernels {
namespace {

// Reads global flat elements [f, f + n) of a tensor laid out as `slice` of
// `dims` from its local block `src`; returns how many of the first ones
// (a prefix of the run, at most n) are local and contiguous there, and
// their local offset. 0 if element f is not local.
int64_t LocalRun(absl::Span<const int64_t> dims, const TensorSlice& slice,
                 const LocalDims& local_strides, int64_t f, int64_t n, int64_t* offset) {
  const int rank = static_cast<int>(dims.size());
  *offset = 0;
  if (rank == 0) return n > 0 ? 1 : 0;
  int64_t rest = f;
  int64_t last = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t c = rest % dims[d];
    rest /= dims[d];
    const IndexRange r = slice.range(d);
    if (c < r.begin || c >= r.end) return 0;
    *offset += (c - r.begin) * local_strides[d];
    if (d == rank - 1) last = c;
  }
  // The run continues along the last dim until the local block ends.
  return std::min(n, slice.range(rank - 1).end - last);
}

// Moves `n` elements from local input offset `src` to local output offset
// `dst`, merging runs that continue the previous one: a shard whose block
// is contiguous in both layouts becomes one copy, which matters on a
// device, where each copy is a separate call.
class RunCopier {
 public:
  RunCopier(const LocalTensor& x, LocalTensor& y)
      : src_(static_cast<const char*>(x.raw_data())),
        dst_(static_cast<char*>(y.raw_data())),
        esize_(ByteSizeOf(x.dtype())),
        device_(y.device()) {}

  absl::Status Add(int64_t dst, int64_t src, int64_t n) {
    if (n_ > 0 && dst == dst_off_ + n_ && src == src_off_ + n_) {
      n_ += n;
      return absl::OkStatus();
    }
    OFS_RETURN_IF_ERROR(Flush());
    dst_off_ = dst;
    src_off_ = src;
    n_ = n;
    return absl::OkStatus();
  }

  absl::Status Flush() {
    const int64_t n = n_;
    n_ = 0;
    if (n == 0) return absl::OkStatus();
    char* to = dst_ + dst_off_ * esize_;
    const char* from = src_ + src_off_ * esize_;
    if (device_ == DeviceType::kCpu) {
      std::memcpy(to, from, static_cast<size_t>(n * esize_));
      return absl::OkStatus();
    }
    OFS_ASSIGN_OR_RETURN(DeviceOps * ops, GetDeviceOps(device_));
    return ops->Copy(to, from, n * esize_, CopyDirection::kSameDevice);
  }

 private:
  const char* src_;
  char* dst_;
  int64_t esize_;
  DeviceType device_;
  int64_t dst_off_ = 0, src_off_ = 0, n_ = 0;
};

absl::Status ReshapeKernel(KernelContext& ctx) {
  const BlobLayout& in = ctx.input_layout(0);
  const BlobLayout& out = ctx.output_layout(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, out.local_dims(), in.logical.dtype));
  if (in.logical.shape.elem_cnt() != out.logical.shape.elem_cnt()) {
    return ctx.Internal("input and output element counts differ");
  }
  ZeroIfPartial(ctx, 0);
  const LocalTensor& x = ctx.input(0);
  LocalTensor& y = ctx.output(0);
  if (x.device() != y.device()) {
    return ctx.Internal(absl::StrCat("input on ", DeviceTypeName(x.device()), ", output on ",
                                     DeviceTypeName(y.device())));
  }
  RunCopier copier(x, y);
  const LocalDims in_strides = RowMajorStrides(x.dims());
  const LocalDims out_global = RowMajorStrides(out.logical.shape.dims());
  const int out_rank = out.logical.shape.rank();
  BoxCopyCount n{y.elem_cnt(), 0};
  if (y.elem_cnt() == 0) return absl::OkStatus();
  // Walk the local output by rows of its last dim: global flat indices of
  // a row are consecutive.
  const int64_t row = out_rank ? y.dim(out_rank - 1) : 1;
  LocalDims idx(out_rank, 0);
  for (int64_t local = 0; local < y.elem_cnt(); local += row) {
    int64_t f = 0;
    for (int d = 0; d < out_rank; ++d) f += (out.slice.range(d).begin + idx[d]) * out_global[d];
    for (int64_t done = 0; done < row;) {
      int64_t offset;
      const int64_t run =
          LocalRun(in.logical.shape.dims(), in.slice, in_strides, f + done, row - done, &offset);
      if (run == 0) {
        ++done;  // not local: left zero (partial) or reported below
        continue;
      }
      OFS_RETURN_IF_ERROR(ctx.Annotate(copier.Add(local + done, offset, run)));
      n.copied += run;
      done += run;
    }
    for (int d = out_rank - 2; d >= 0; --d) {
      if (++idx[d] < y.dim(d)) break;
      idx[d] = 0;
    }
  }
  OFS_RETURN_IF_ERROR(ctx.Annotate(copier.Flush()));
  return CheckCoverage(ctx, 0, n);
}

// output dim i is input dim perm[i].
absl::Status TransposeKernel(KernelContext& ctx) {
  const BlobLayout& in = ctx.input_layout(0);
  const BlobLayout& out = ctx.output_layout(0);
  const int rank = in.logical.shape.rank();
  OFS_ASSIGN_OR_RETURN(
      std::vector<int> perm,
      ctx.Annotate(ops::ResolvePermutation(ctx.Attr<std::vector<int64_t>>("perm"), rank)));
  LocalDims dims;
  for (int p : perm) dims.push_back(ctx.input(0).dim(p));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, dims, in.logical.dtype));
  BoxCopyPlan plan{FullBox(out.logical.shape.dims()), std::vector<DimMap>(rank),
                   IdentityMaps(rank)};
  for (int i = 0; i < rank; ++i) plan.src[perm[i]] = SameDim(i);
  ZeroIfPartial(ctx, 0);
  BoxCopyCount n;
  OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, 0, 0, &n));
  return CheckCoverage(ctx, 0, n);
}

// Broadcasts input 0 to output 0. out_of_in[d] is the output dim of input
// dim d (input dims of extent 1 whose output dim is larger repeat); output
// dims no input dim maps to are new. Local output dims: an input dim's
// local extent where it maps with equal extent, else the output's slice.
absl::Status BroadcastInto(KernelContext& ctx, const std::vector<int>& out_of_in) {
  const BlobLayout& in = ctx.input_layout(0);
  const BlobLayout& out = ctx.output_layout(0);
  const Shape& is = in.logical.shape;
  const Shape& os = out.logical.shape;
  BoxCopyPlan plan{FullBox(os.dims()), {}, IdentityMaps(os.rank())};
  LocalDims dims = out.local_dims();
  for (int d = 0; d < is.rank(); ++d) {
    const int o = out_of_in[d];
    if (is.dim(d) == os.dim(o)) {
      plan.src.push_back(SameDim(o));
      dims[o] = ctx.input(0).dim(d);
    } else {
      plan.src.push_back(DimMap{o, 0, 0});
    }
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, dims, in.logical.dtype));
  ZeroIfPartial(ctx, 0);
  BoxCopyCount n;
  OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, 0, 0, &n));
  return CheckCoverage(ctx, 0, n);
}

// expand: input dims align with the trailing output dims.
absl::Status ExpandKernel(KernelContext& ctx) {
  const int in_rank = ctx.input_layout(0).logical.shape.rank();
  const int lpad = ctx.output_layout(0).logical.shape.rank() - in_rank;
  std::vector<int> out_of_in;
  for (int d = 0; d < in_rank; ++d) out_of_in.push_back(d + lpad);
  return BroadcastInto(ctx, out_of_in);
}

// broadcast_like(x, like): y has like's shape; x is like reduced over
// broadcast_axes, with those axes kept as 1s (same rank) or dropped.
absl::Status BroadcastLikeKernel(KernelContext& ctx) {
  const Shape& like = ctx.input_layout(1).logical.shape;
  const int x_rank = ctx.input_layout(0).logical.shape.rank();
  OFS_ASSIGN_OR_RETURN(std::vector<int> axes,
                       ctx.Annotate(ops::NormalizeAxes(
                           ctx.Attr<std::vector<int64_t>>("broadcast_axes"), like.rank(),
                           "attribute broadcast_axes")));
  const bool keepdims = x_rank == like.rank();
  std::vector<int> out_of_in;
  for (int i = 0; i < like.rank(); ++i) {
    const bool broadcast = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (keepdims || !broadcast) out_of_in.push_back(i);
  }
  if (static_cast<int>(out_of_in.size()) != x_rank) {
    return ctx.Internal("x_0's rank does not match like_0 reduced over broadcast_axes");
  }
  // y's local dims follow like's local block (like lends its shape).
  if (ctx.input(1).dims() != ctx.output_layout(0).local_dims()) {
    return ctx.CheckOutput(0, ctx.input(1).dims(), ctx.input_layout(0).logical.dtype);
  }
  return BroadcastInto(ctx, out_of_in);
}

}  // namespace

absl::Status RegisterViewKernelsOn(KernelRegistry& registry, DeviceType device) {
  const std::vector<DataType> all = DtypesOf(AllTypes{});
  return RegisterKernels(registry, device,
                         {
                             {"broadcast_like", BroadcastLikeKernel, all},
                             {"expand", ExpandKernel, all},
                             {"expand_dims", ReshapeKernel, all},
                             {"flatten", ReshapeKernel, all},
                             {"reshape", ReshapeKernel, all},
                             {"squeeze", ReshapeKernel, all},
                             {"transpose", TransposeKernel, all},
                         });
}

namespace {

absl::Status RegisterViewKernels(KernelRegistry& registry) {
  return RegisterViewKernelsOn(registry, DeviceType::kCpu);
}

OFS_REGISTER_KERNELS(RegisterViewKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
