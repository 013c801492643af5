// Dropout's attribute and layout checks, shared by the CPU kernels
// (dropout_kernels.cc) and the CUDA glue (kernels/cuda/cuda_kernels.cc),
// so both accept and refuse exactly the same calls.
#ifndef KERNELS_COMMON_DROPOUT_ARGS_H_
#define KERNELS_COMMON_DROPOUT_ARGS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// What a dropout kernel needs once its call is checked.
struct DropoutArgs {
  uint64_t seed = 0;
  uint32_t threshold = 0;  // DropoutThreshold(rate)
  double scale = 0;        // 1 / (1 - rate); 0 when rate == 1
  const LocalTensor* add = nullptr;  // _add_to_output, if given
};

// dropout(in, opt _add_to_output; rate, seed) -> (out, mask): rate in
// [0, 1] (kInvalidArgument), outputs shaped as `in` and the mask bool,
// _add_to_output shaped as `in` (kInternal).
absl::StatusOr<DropoutArgs> CheckDropout(const KernelContext& ctx);

// dropout_grad(dy, mask; scale) -> dx: the mask bool and shaped as dy, dx
// shaped as dy (kInternal).
absl::Status CheckDropoutGrad(const KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_DROPOUT_ARGS_H_
