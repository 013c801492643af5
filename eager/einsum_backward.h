// The backward rule of `einsum` (autograd.h): each operand's gradient is
// another einsum, of the output's gradient with the other operands, onto
// that operand's letters ("bmk,kn->bmn": d(in_0) = "bmn,kn->bmk",
// d(in_1) = "bmn,bmk->kn"). Its layouts are the engine's choice like any
// op's. A letter only the differentiated operand carries (summed away
// inside it, as "ij->i" sums j) would need a broadcast back: that case is
// kUnimplemented, naming the letter and the equation.
#ifndef EAGER_EINSUM_BACKWARD_H_
#define EAGER_EINSUM_BACKWARD_H_

#include <vector>

#include "absl/status/statusor.h"
#include "eager/autograd.h"

namespace oneflow_sbp::eager {

// The rule; einsum's record names it (ops/records/matrix.toml, backward_fn),
// and RegisterBuiltinBackwardRules registers it from there.
absl::StatusOr<std::vector<GlobalTensor>> EinsumGrad(BackwardContext& c);

}  // namespace oneflow_sbp::eager

#endif  // EAGER_EINSUM_BACKWARD_H_
