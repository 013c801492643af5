// The kernel bodies that tests/rules/toy_ops.toml's records name.
#ifndef TESTS_RULES_TOY_KERNELS_H_
#define TESTS_RULES_TOY_KERNELS_H_

#include "absl/status/status.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::testing::toy {

// toy_scale: y = factor * x, f32 and f64.
absl::Status ToyScaleKernel(kernels::KernelContext& ctx);
// toy_clamp_min: y = max(x, low), f32 and f64.
absl::Status ToyClampMinKernel(kernels::KernelContext& ctx);

}  // namespace oneflow_sbp::testing::toy

#endif  // TESTS_RULES_TOY_KERNELS_H_
