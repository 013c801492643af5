// Layout checks of the normalisation kernels (layer_norm, rms_norm and
// their grads), shared by the CPU kernels (norm_kernels.cc) and the CUDA
// glue (kernels/cuda/cuda_kernels.cc) so that both accept and refuse
// exactly the same local shards.
//
// x has rank r; its first k dims index "rows", the rest are normalised
// over (n elements per row). The statistics (mean, inv_variance, inv_rms)
// have x's local shape[:k].
#ifndef KERNELS_COMMON_NORM_LAYOUT_H_
#define KERNELS_COMMON_NORM_LAYOUT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// The row dims k and parameter axis p of the forwards, from their
// attributes as OneFlow defines them: layer_norm's begin_norm_axis and
// begin_params_axis (normalised against x's rank); rms_norm's k = p =
// rank - len(normalized_shape).
struct NormAxes {
  int k = 0, p = 0;
};
absl::StatusOr<NormAxes> LayerNormAxes(const KernelContext& ctx);
NormAxes RmsNormAxes(const KernelContext& ctx);
// layer_norm_grad's k (begin_norm_axis) and layer_norm_param_grad's p
// (begin_params_axis), normalised against x's rank. (rms_norm_grad and
// rms_norm_param_grad take k = p = rank of inv_rms.)
absl::StatusOr<int> LayerNormGradRowDims(const KernelContext& ctx);
absl::StatusOr<int> LayerNormParamAxis(const KernelContext& ctx);

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

// The param grads' checks (layer_norm_param_grad when `center`, else
// rms_norm_param_grad; inputs dy, x and the statistics, whose rank is k):
// x's rows (normalised dims possibly partial: a rank may hold some
// parameter columns), CheckNormGradInputs, and every output shaped x's
// local dims from p on with dy's dtype. Returns x's rows.
absl::StatusOr<NormRows> CheckNormParamGrad(const KernelContext& ctx, bool center, int p);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_NORM_LAYOUT_H_
