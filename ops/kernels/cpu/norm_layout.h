// Layout checks of the normalisation kernels (layer_norm, rms_norm and
// their grads), shared by the CPU kernels (norm_kernels.cc) and the CUDA
// glue (ops/kernels/cuda/cuda_kernels.cc) so that both accept and refuse
// exactly the same local shards.
//
// x has rank r; its first k dims index "rows", the rest are normalised
// over (n elements per row). The statistics (mean, inv_variance, inv_rms)
// have x's local shape[:k].
#ifndef OPS_KERNELS_CPU_NORM_LAYOUT_H_
#define OPS_KERNELS_CPU_NORM_LAYOUT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// Input `x` as rows x n with its first k dims as rows (local extents).
// With `whole`, the normalised dims must be whole on this rank (kInternal
// naming the dim and the layout otherwise).
struct NormRows {
  int64_t rows = 0, n = 0;
};
absl::StatusOr<NormRows> NormRowsOf(const KernelContext& ctx, int x, int k, bool whole);

// The grads' inputs (dy, x, statistics from input 2 on: mean and
// inv_variance when `center`, else inv_rms): kInternal unless dy matches x
// and the statistics cover x's local rows (its first k dims).
absl::Status CheckNormGradInputs(const KernelContext& ctx, bool center, int k);

}  // namespace oneflow_sbp::kernels

#endif  // OPS_KERNELS_CPU_NORM_LAYOUT_H_
