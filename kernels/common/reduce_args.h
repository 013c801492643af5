// The axis checks of the reductions (reduce_sum, reduce_mean, reduce_max,
// reduce_min, reduce_prod, reduce_nansum, reduce_sum_like), shared by the
// CPU kernels (reduce_kernels.cc) and the CUDA glue
// (kernels/cuda/cuda_reduce_conv_kernels.cc), so both accept and refuse
// the same calls with the same messages.
#ifndef KERNELS_COMMON_REDUCE_ARGS_H_
#define KERNELS_COMMON_REDUCE_ARGS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// Which dims of input 0 are reduced, and the local output dims.
struct ReducePlan {
  std::vector<bool> reduced;  // one flag per dim of input 0
  LocalDims out_dims;         // input 0's local dims reduced (kept as 1s with keepdims)
};

// reduce_*(x; axis, keepdims): the axis attribute normalised against x's
// rank (kInvalidArgument naming the attribute and the bad axis).
absl::StatusOr<ReducePlan> PlanReduce(const KernelContext& ctx);

// reduce_sum_like(x, like; axis): reduced dims kept as 1s when like has
// x's rank, dropped otherwise; kInternal when x's local block does not
// reduce to like's local block (a layout the kernel cannot compute).
absl::StatusOr<ReducePlan> PlanReduceSumLike(const KernelContext& ctx);

// reduce_mean's divisor: the product of the LOGICAL extents of the reduced
// dims, so that split ranks give addends of the mean.
double LogicalReducedCount(const KernelContext& ctx, const std::vector<bool>& reduced);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_REDUCE_ARGS_H_
