// The layout check of ops that are elementwise over all their inputs
// (sgd_update, adam_update, add_n), shared by the CPU kernels and the CUDA
// glue (kernels/cuda/): every operand has one layout (the
// rule), so the update is elementwise on local shards.
#ifndef KERNELS_COMMON_SAME_OPERANDS_H_
#define KERNELS_COMMON_SAME_OPERANDS_H_

#include "absl/status/status.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// kInternal unless every input has input 0's local dims and dtype.
absl::Status CheckSameOperands(const KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_SAME_OPERANDS_H_
