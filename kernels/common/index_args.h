// The index checks of embedding, embedding_grad, gather, dim_gather and argwhere, shared by the
// CPU kernels (index_kernels.cc) and the CUDA glue
// (kernels/cuda/cuda_embedding_kernels.cc), so both accept and refuse
// exactly the same calls with the same messages. Index tensors on a device
// are copied to the host first (one synchronising copy): the checks and the
// per-index bookkeeping (local rows, counts) are host work either way.
#ifndef KERNELS_COMMON_INDEX_ARGS_H_
#define KERNELS_COMMON_INDEX_ARGS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// Input `blob` itself if it is on the host, else a host copy of it.
absl::StatusOr<LocalTensor> InputOnHost(const KernelContext& ctx, int blob);

// Index input `blob` (i32 or i64, any device) as int64 values, each checked
// against [0, extent): kInvalidArgument naming the blob, the local position
// and the value, and `what` the indices address.
absl::StatusOr<std::vector<int64_t>> IndexValues(const KernelContext& ctx, int blob,
                                                 int64_t extent, absl::string_view what);

// For each index of `idx_blob` into dim `axis` of `in_blob`: the local row
// of this rank's slice holding it, or -1 where the rank lacks it and the
// output is partial (its zero addend). kInternal where the rank lacks it
// and the output is not partial (the layout cannot be computed locally).
absl::StatusOr<std::vector<int64_t>> LocalRows(const KernelContext& ctx, int in_blob,
                                               int idx_blob, int axis);

// gather(in, indices; axis) -> out: the normalised axis, once out is
// checked to be in's dims with dim `axis` replaced by indices' dims.
absl::StatusOr<int> CheckGather(KernelContext& ctx);

// dim_gather(input, index; dim) -> output: for each local output element,
// the LOCAL offset in input of the element it copies (row-major), or -1
// where this rank lacks it and the output is partial (its zero addend).
// Checks output shaped as index in input's dtype, the dim attribute, the
// index values against the logical dim (kInvalidArgument), and kInternal
// where the rank lacks an element and the output is not partial.
absl::StatusOr<std::vector<int64_t>> DimGatherOffsets(KernelContext& ctx);

// embedding_grad(dy, weight, indices; padding_idx, scale_grad_by_freq) -> dx
// once checked: dx[row[p]] += dy[p] * scale[p] for every position p with
// row[p] >= 0, in position order.
struct EmbeddingGradArgs {
  int64_t cols = 0;
  // Local row of weight's slice for each position; -1: padding_idx or
  // another rank's row (skipped).
  std::vector<int64_t> row;
  // 1 / (count of the index over all indices) with scale_grad_by_freq;
  // empty otherwise (scale 1).
  std::vector<double> scale;
};
// embedding(weight, indices) -> out: out shaped as indices + [weight's
// columns] with weight's dtype (kInternal).
absl::Status CheckEmbeddingOutput(KernelContext& ctx);

// dy shaped as indices + [cols] (kInternal), dx as weight, indices whole
// when scale_grad_by_freq needs their counts or dx is not partial
// (kInternal), indices in the logical vocab (kInvalidArgument).
absl::StatusOr<EmbeddingGradArgs> CheckEmbeddingGrad(KernelContext& ctx);

// argwhere(input; dtype) -> output [elem_cnt, rank], output_size [1]:
// kInternal unless the rank holds all of input (the op is broadcast-only);
// the outputs' dims and their common index dtype checked (kInternal);
// an index dtype other than i32 / i64 is kUnimplemented naming output_0.
absl::Status CheckArgwhere(KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_INDEX_ARGS_H_
