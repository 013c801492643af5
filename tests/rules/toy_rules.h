// The rule bodies that tests/rules/toy_ops.toml's records name (toy_scale's rule
// comes from its einsum spec; toy_clamp_min's is here).
#ifndef TESTS_RULES_TOY_RULES_H_
#define TESTS_RULES_TOY_RULES_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/sbp_context.h"

namespace oneflow_sbp::testing::toy {

// The output is the input's desc.
absl::Status SameAsInput(ShapeContext& ctx);
// S(i) -> S(i) for every axis (OneFlow's SplitForEachAxis).
absl::Status SplitEveryAxis(SbpContext& ctx);

}  // namespace oneflow_sbp::testing::toy

#endif  // TESTS_RULES_TOY_RULES_H_
