// CPU kernels of the indexing ops (rules in ops/index_ops.cc and, for
// argwhere, ops/shape_ops.cc): embedding, embedding_grad, gather,
// dim_gather, argwhere.
//
// Index values are GLOBAL: every index must lie in [0, extent) of the
// LOGICAL dim it indexes (kInvalidArgument naming the blob, the position
// and the value otherwise), and a rank that holds only part of that dim
// (the slice [lo, hi) of its layout) finds index v at local row v - lo.
//
//   embedding(weight [V, D], indices) -> out = weight[indices]
//   gather(in, indices; axis) -> out = in.take(indices, axis)
//   dim_gather(input, index; dim) -> output[p] = input[p with p[dim] := index[p]]
//     A rank writes the output elements its local block of the gathered
//     tensor holds. The rest are 0 if the output is partial (the
//     vocab-parallel embedding weight:S(0) -> out:P, gather's in:S(axis) ->
//     out:P: exactly one rank holds each index, so the sum over ranks is
//     the lookup) and kInternal otherwise (the layout cannot be computed
//     locally). padding_idx does not change the forward (as PyTorch).
//   embedding_grad(dy, weight, indices; padding_idx, scale_grad_by_freq) -> dx
//     dx[v] = sum of dy[p] over positions p with indices[p] == v, for the
//     rows v of weight's local slice (weight:S(0) -> dx:S(0): a rank adds
//     only indices in its range); rows == padding_idx stay 0; with
//     scale_grad_by_freq each row is divided by its count over ALL of
//     indices, so indices must then be whole on the rank (kInternal
//     otherwise). A rank holding a slice of the positions (indices:S(i))
//     produces an addend, so dx must then be partial (kInternal otherwise).
//   argwhere(input; dtype) -> output [elem_cnt, rank] (the coordinates of
//     the nonzero elements in row-major order, then zero rows), output_size
//     [1] (how many). Broadcast-only: the rank must hold all of input.
//
// Dtypes: embedding, gather, dim_gather, argwhere's input: every dtype
// (elements are copied or tested); embedding_grad f32 f64 f16 bf16
// (accumulated in double); indices i32 i64.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/index_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

int64_t Product(const LocalDims& d, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= d[i];
  return p;
}

// out[o, j, :] = in[o, idx[j] - lo, :] for in of local dims [outer, mid,
// inner] holding global rows [lo, lo + mid) of `extent`; rows it lacks
// are zero (partial output) or an error. Bytes are copied.
absl::Status TakeRows(KernelContext& ctx, int in_blob, int idx_blob, int axis) {
  const LocalTensor& in = ctx.input(in_blob);
  // local[j]: the local row of index j, or -1 if this rank lacks it.
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> local, LocalRows(ctx, in_blob, idx_blob, axis));
  const int64_t outer = Product(in.dims(), 0, axis);
  const int64_t mid = in.dim(axis);
  const int64_t row = Product(in.dims(), axis + 1, in.rank()) * ByteSizeOf(in.dtype());
  const int64_t n = static_cast<int64_t>(local.size());
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(ctx.output(0).raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      char* d = dst + (o * n + j) * row;
      if (local[j] >= 0) {
        std::memcpy(d, src + (o * mid + local[j]) * row, static_cast<size_t>(row));
      } else {
        std::memset(d, 0, static_cast<size_t>(row));  // 0 in every dtype
      }
    }
  }
  return absl::OkStatus();
}

absl::Status EmbeddingKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckEmbeddingOutput(ctx));
  return TakeRows(ctx, 0, 1, /*axis=*/0);
}

absl::Status GatherKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int axis, CheckGather(ctx));  // index_args.h
  return TakeRows(ctx, 0, 1, axis);
}

absl::Status EmbeddingGradKernel(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input("dy");
  OFS_ASSIGN_OR_RETURN(const EmbeddingGradArgs args, CheckEmbeddingGrad(ctx));
  const int64_t cols = args.cols;
  std::vector<double> acc(static_cast<size_t>(ctx.output(0).elem_cnt()), 0.0);
  return DispatchDtype<Floating>(ctx, dy.dtype(), "dy_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = dy.data<T>();
    for (size_t p = 0; p < args.row.size(); ++p) {
      const int64_t local = args.row[p];
      if (local < 0) continue;
      const double s = args.scale.empty() ? 1.0 : args.scale[p];
      for (int64_t c = 0; c < cols; ++c) {
        acc[local * cols + c] += ConvertElement<double>(g[p * cols + c]) * s;
      }
    }
    T* dx = ctx.output(0).data<T>();
    for (size_t i = 0; i < acc.size(); ++i) dx[i] = ConvertElement<T>(acc[i]);
    return absl::OkStatus();
  });
}

absl::Status DimGatherKernel(KernelContext& ctx) {
  const LocalTensor& input = ctx.input("input");
  // Checks and local offsets shared with the CUDA glue (index_args.h).
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, DimGatherOffsets(ctx));
  return DispatchDtype<AllTypes>(ctx, input.dtype(), "input_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = input.data<T>();
    T* out = ctx.output(0).data<T>();
    for (size_t i = 0; i < offsets.size(); ++i) out[i] = offsets[i] >= 0 ? in[offsets[i]] : T(0);
    return absl::OkStatus();
  });
}

absl::Status ArgwhereKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckArgwhere(ctx));
  const LocalTensor& input = ctx.input(0);
  const DataType index_dtype = ctx.output(0).dtype();
  std::vector<bool> nonzero(static_cast<size_t>(input.elem_cnt()));
  OFS_RETURN_IF_ERROR(DispatchDtype<AllTypes>(ctx, input.dtype(), "input_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = input.data<T>();
    // NaN is nonzero, as in NumPy.
    for (int64_t i = 0; i < input.elem_cnt(); ++i) nonzero[i] = ConvertElement<bool>(p[i]);
    return absl::OkStatus();
  }));
  return DispatchDtype<IntTypes>(ctx, index_dtype, "output_0", [&](auto tag) {
    using L = typename decltype(tag)::type;
    L* out = ctx.output(0).data<L>();
    const int rank = input.rank();
    std::fill(out, out + ctx.output(0).elem_cnt(), L(0));
    int64_t found = 0;
    LocalDims coord(rank, 0);
    for (int64_t i = 0; i < input.elem_cnt(); ++i) {
      if (nonzero[i]) {
        for (int d = 0; d < rank; ++d) out[found * rank + d] = static_cast<L>(coord[d]);
        ++found;
      }
      for (int d = rank - 1; d >= 0; --d) {
        if (++coord[d] < input.dim(d)) break;
        coord[d] = 0;
      }
    }
    ctx.output(1).data<L>()[0] = static_cast<L>(found);
    return absl::OkStatus();
  });
}

absl::Status RegisterIndexKernels(KernelRegistry& registry) {
  const std::vector<DataType> all = DtypesOf(AllTypes{});
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"argwhere", ArgwhereKernel, all},
                          {"dim_gather", DimGatherKernel, all},
                          {"embedding", EmbeddingKernel, all},
                          {"embedding_grad", EmbeddingGradKernel, DtypesOf(Floating{})},
                          {"gather", GatherKernel, all}});
}

OFS_REGISTER_KERNELS(RegisterIndexKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
