// The built-in backward rules (autograd.h): matmul family; unary
// elementwise math (exp, log, sigmoid, tanh, sin, cos, sqrt, rsqrt, square,
// reciprocal, abs, softplus, erf, scalar_pow); bias_add; broadcast add,
// sub, mul and div; where; views, narrow, slice, expand and cat;
// reductions, norms, cross-entropy, rotary embedding, attention (with its
// key padding mask), embedding, dropout, cast, masked_mean_pool,
// l2_normalize; einsum (eager/einsum_backward.h). Each rule is catalog ops
// run through Apply. Each op's record (ops/records/*.toml) names its rule
// (backward_fn), from which the registration table is made, or says why it
// has none; tests/rules/op_completeness_test.cc checks both ways.
#ifndef EAGER_BACKWARD_RULES_H_
#define EAGER_BACKWARD_RULES_H_

#include "absl/status/status.h"

namespace oneflow_sbp::eager {

// Registers every built-in rule for ops that have none yet (a rule an
// application registered first is kept). The EagerContext constructor
// calls it once per process.
absl::Status RegisterBuiltinBackwardRules();

}  // namespace oneflow_sbp::eager

#endif  // EAGER_BACKWARD_RULES_H_
