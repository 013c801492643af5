// The reshape, flatten, expand_dims, squeeze, transpose, expand and broadcast_like kernels move bytes only through BoxCopy (box_copy.h) and
// LocalTensor, both of which work on any device with a DeviceOps backend,
// so the same kernels serve the CPU (registered at start-up) and any
// device backend that registers them for itself (the CUDA kernels do).
#ifndef KERNELS_COMMON_VIEW_KERNELS_H_
#define KERNELS_COMMON_VIEW_KERNELS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/values/placement.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {

// Registers these kernels for `device` (every dtype).
absl::Status RegisterViewKernelsOn(KernelRegistry& registry, DeviceType device);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_VIEW_KERNELS_H_
