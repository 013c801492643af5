// The operand checks of where, the broadcast binary ops (comparisons and
// fmod among them), tril and cast, shared by the CPU kernels
// (binary_kernels.cc, attention_kernels.cc, elementwise_kernels.cc) and the
// CUDA glue (kernels/cuda/cuda_select_kernels.cc), so both devices
// accept and refuse the same calls with the same messages.
#ifndef KERNELS_COMMON_SELECT_ARGS_H_
#define KERNELS_COMMON_SELECT_ARGS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// Inputs `a` and `b` have one dtype: kInternal naming both otherwise
// ("x_0 is f32 but y_0 is i32"; the rules infer one dtype for both).
absl::Status CheckSameDtype(const KernelContext& ctx, int a, int b);

// where(condition, x, y): condition bool (kUnimplemented naming it
// otherwise), x and y of one dtype.
absl::Status CheckWhereOperands(const KernelContext& ctx);

// tril(in; diagonal): in of rank >= 2 (kInternal), out shaped as in. The
// result: local element (i, j) of the last two dims is kept when
// j <= i + lead, where lead folds the rank's first global row and column
// into the diagonal (the rule splits every dim).
absl::StatusOr<int64_t> CheckTril(KernelContext& ctx);

// cast(x; dtype): the target dtype parsed from the attribute
// (kInvalidArgument naming it), out shaped as x in that dtype.
absl::StatusOr<DataType> CheckCast(KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_SELECT_ARGS_H_
