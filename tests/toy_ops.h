// The bodies that tests/toy_ops.toml's records name: what adding an op asks
// for beyond its record (its kernel, and its rule or backward where the
// record does not derive them).
#ifndef TESTS_TOY_OPS_H_
#define TESTS_TOY_OPS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eager/autograd.h"
#include "eager/global_tensor.h"
#include "oneflow_sbp/op_call.h"
#include "oneflow_sbp/sbp_context.h"
#include "ops/kernels/kernel_context.h"

namespace oneflow_sbp::testing::toy {

// toy_scale: y = factor * x, f32 and f64.
absl::Status ToyScaleKernel(kernels::KernelContext& ctx);
// dx = toy_scale(dy) with the same factor.
absl::StatusOr<std::vector<eager::GlobalTensor>> ToyScaleGrad(eager::BackwardContext& c);

// toy_clamp_min: y = max(x, low), f32 and f64.
absl::Status ToyClampMinKernel(kernels::KernelContext& ctx);
// The output is the input's desc.
absl::Status SameAsInput(ShapeContext& ctx);
// S(i) -> S(i) for every axis (OneFlow's SplitForEachAxis).
absl::Status SplitEveryAxis(SbpContext& ctx);

}  // namespace oneflow_sbp::testing::toy

#endif  // TESTS_TOY_OPS_H_
