// The backward rule of `einsum` (autograd.h): each operand's gradient is
// another einsum, of the output's gradient with the other operands, onto
// that operand's letters ("bmk,kn->bmn": d(in_0) = "bmn,kn->bmk",
// d(in_1) = "bmn,bmk->kn"). Its layouts are the engine's choice like any
// op's. A letter only the differentiated operand carries (summed away
// inside it, as "ij->i" sums j) would need a broadcast back: that case is
// kUnimplemented, naming the letter and the equation.
#ifndef EAGER_EINSUM_BACKWARD_H_
#define EAGER_EINSUM_BACKWARD_H_

#include "absl/status/status.h"

namespace oneflow_sbp::eager {

// Registers the rule unless `einsum` has one (RegisterBuiltinBackwardRules
// calls it).
absl::Status RegisterEinsumBackwardRule();

}  // namespace oneflow_sbp::eager

#endif  // EAGER_EINSUM_BACKWARD_H_
