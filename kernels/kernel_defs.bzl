"""What every kernel library of kernels/common and kernels/cpu is built with."""

# Kernel loops are written to be vectorized; GCC's -O2 only vectorizes
# loops without an epilogue, so the kernel libraries ask for -O3.
KERNEL_COPTS = ["-O3"]

# The registry, the context and the storage every kernel library uses.
KERNEL_DEPS = [
    "//oneflow_sbp/storage:element_type",
    "//oneflow_sbp/storage:local_tensor",
    "//oneflow_sbp/values:status_macros",
    "//kernels:dtype_dispatch",
    "//kernels:kernel_context",
    "//kernels:kernel_registry",
    "//third_party:absl",
]
