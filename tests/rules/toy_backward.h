// The backward bodies that tests/rules/toy_ops.toml's records name.
#ifndef TESTS_RULES_TOY_BACKWARD_H_
#define TESTS_RULES_TOY_BACKWARD_H_

#include <vector>

#include "absl/status/statusor.h"
#include "eager/autograd.h"
#include "eager/global_tensor.h"

namespace oneflow_sbp::testing::toy {

// dx = toy_scale(dy) with the same factor.
absl::StatusOr<std::vector<eager::GlobalTensor>> ToyScaleGrad(eager::BackwardContext& c);

}  // namespace oneflow_sbp::testing::toy

#endif  // TESTS_RULES_TOY_BACKWARD_H_
