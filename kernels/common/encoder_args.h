// Layout checks of the sentence-encoder head kernels (masked_mean_pool,
// l2_normalize and their grads; formulas in ops/encoder_ops.cc), shared by
// the CPU kernels (encoder_kernels.cc) and the CUDA glue
// (kernels/cuda/cuda_encoder_kernels.cc) so that both accept and
// refuse exactly the same local shards.
//
// Every check returns the loop extents of this rank's shard, or kInternal
// naming the blob and its layout when the shard cannot be computed
// locally: a pooled sequence or a normalised axis that is not whole (the
// rules never split them: the division by the count or the norm needs the
// whole row), or a mask that does not cover the batch rows.
#ifndef KERNELS_COMMON_ENCODER_ARGS_H_
#define KERNELS_COMMON_ENCODER_ARGS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// masked_mean_pool(x [B,S,H], mask [B,S]) -> y [B,H] and
// masked_mean_pool_grad(dy [B,H], mask [B,S]) -> dx [B,S,H], local.
struct PoolDims {
  int64_t b = 0;          // batch rows of x (dy)
  int64_t s = 0;          // sequence positions (whole)
  int64_t h = 0;          // hidden columns of x (dy)
  int64_t mask_row0 = 0;  // the mask row of the first local batch row
};
// The forward: x's and the mask's sequence whole and equal, the mask's
// rows covering x's batch rows, y [b, h] in x's dtype.
absl::StatusOr<PoolDims> CheckMaskedMeanPool(const KernelContext& ctx);
// The grad: the mask's sequence whole, its rows covering dy's, dx
// [b, s, h] in dy's dtype.
absl::StatusOr<PoolDims> CheckMaskedMeanPoolGrad(const KernelContext& ctx);

// l2_normalize(x) -> y and l2_normalize_grad(dy, x) -> dx: x viewed as
// [outer, n, inner] around the normalised axis (attribute axis), which
// must be whole; dy must match x; the output has x's local dims and dtype.
struct L2Dims {
  int64_t outer = 0, n = 0, inner = 0;
  double epsilon = 0;
};
absl::StatusOr<L2Dims> CheckL2Normalize(const KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_ENCODER_ARGS_H_
