// Every op of the catalog has each of its pieces, or an explicit entry
// saying why not, so a new op without one is a test failure rather than a
// runtime error in someone's training step: its rule and golden line
// (op_catalog_test), a CPU kernel (kernel_registry_test), a verifier input
// recipe (its own or the default one, verify_test), and a backward rule or
// an entry below.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "eager/autograd.h"
#include "eager/backward_rules.h"
#include "gtest/gtest.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp {
namespace {

enum class NoRule {
  // Not differentiable: integer, boolean or piecewise-constant outputs,
  // optimizer updates, fills.
  kNotDifferentiable,
  // A gradient op itself: second-order gradients are not supported.
  kGradientOp,
  // Differentiable; the backward rule is not written yet (eager::Backward
  // through it is an error naming the op).
  kNotWrittenYet,
};

const absl::flat_hash_map<std::string, NoRule>& OpsWithoutBackwardRules() {
  static const auto* ops = new absl::flat_hash_map<std::string, NoRule>{
      {"adam_update", NoRule::kNotDifferentiable},
      {"argwhere", NoRule::kNotDifferentiable},
      {"broadcast_equal", NoRule::kNotDifferentiable},
      {"broadcast_greater", NoRule::kNotDifferentiable},
      {"broadcast_greater_equal", NoRule::kNotDifferentiable},
      {"broadcast_less", NoRule::kNotDifferentiable},
      {"broadcast_less_equal", NoRule::kNotDifferentiable},
      {"broadcast_not_equal", NoRule::kNotDifferentiable},
      {"ceil", NoRule::kNotDifferentiable},
      {"fill", NoRule::kNotDifferentiable},
      {"floor", NoRule::kNotDifferentiable},
      {"logical_not", NoRule::kNotDifferentiable},
      {"round", NoRule::kNotDifferentiable},
      {"scalar_floordiv", NoRule::kNotDifferentiable},
      {"sgd_update", NoRule::kNotDifferentiable},
      {"sign", NoRule::kNotDifferentiable},
      {"zeros_like", NoRule::kNotDifferentiable},
      {"dropout_grad", NoRule::kGradientOp},
      {"embedding_grad", NoRule::kGradientOp},
      {"gelu_grad", NoRule::kGradientOp},
      {"l2_normalize_grad", NoRule::kGradientOp},
      {"layer_norm_grad", NoRule::kGradientOp},
      {"layer_norm_param_grad", NoRule::kGradientOp},
      {"log_softmax_grad", NoRule::kGradientOp},
      {"masked_mean_pool_grad", NoRule::kGradientOp},
      {"narrow_grad", NoRule::kGradientOp},
      {"relu_grad", NoRule::kGradientOp},
      {"rms_norm_grad", NoRule::kGradientOp},
      {"rms_norm_param_grad", NoRule::kGradientOp},
      {"rotary_embedding_grad", NoRule::kGradientOp},
      {"scaled_dot_product_attention_grad", NoRule::kGradientOp},
      {"silu_grad", NoRule::kGradientOp},
      {"slice_grad", NoRule::kGradientOp},
      {"softmax_grad", NoRule::kGradientOp},
      {"sparse_softmax_cross_entropy_grad", NoRule::kGradientOp},
      {"sparse_softmax_cross_entropy_ms_grad", NoRule::kGradientOp},
      {"broadcast_fmod", NoRule::kNotWrittenYet},
      {"broadcast_like", NoRule::kNotWrittenYet},
      {"broadcast_maximum", NoRule::kNotWrittenYet},
      {"broadcast_minimum", NoRule::kNotWrittenYet},
      {"broadcast_pow", NoRule::kNotWrittenYet},
      {"conv2d", NoRule::kNotWrittenYet},
      {"dim_gather", NoRule::kNotWrittenYet},
      {"fast_gelu", NoRule::kNotWrittenYet},
      {"gather", NoRule::kNotWrittenYet},
      {"mish", NoRule::kNotWrittenYet},
      {"reduce_max", NoRule::kNotWrittenYet},
      {"reduce_min", NoRule::kNotWrittenYet},
      {"reduce_nansum", NoRule::kNotWrittenYet},
      {"reduce_prod", NoRule::kNotWrittenYet},
      {"reduce_sum_like", NoRule::kNotWrittenYet},
      {"scalar_fmod", NoRule::kNotWrittenYet},
      {"slice_update", NoRule::kNotWrittenYet},
      {"split", NoRule::kNotWrittenYet},
      {"stack", NoRule::kNotWrittenYet},
  };
  return *ops;
}

// Each op has a backward rule or exactly one entry above, and no entry
// names an op that is not in the catalog or that has a rule (a rule
// written for a kNotWrittenYet op must take its entry out).
TEST(OpCompleteness, EveryOpHasABackwardRuleOrSaysWhyNot) {
  ASSERT_TRUE(eager::RegisterBuiltinBackwardRules().ok());
  const OpRegistry& catalog = ops::BuiltinOpRegistry();
  const auto& without = OpsWithoutBackwardRules();
  std::vector<std::string> undecided, both;
  int with_rules = 0;
  for (const std::string& op : catalog.OpNames()) {
    const bool has_rule = eager::FindBackward(op) != nullptr;
    const bool listed = without.contains(op);
    if (has_rule) ++with_rules;
    if (!has_rule && !listed) undecided.push_back(op);
    if (has_rule && listed) both.push_back(op);
  }
  EXPECT_TRUE(undecided.empty())
      << "ops with no backward rule and no entry in OpsWithoutBackwardRules: "
      << absl::StrJoin(undecided, " ");
  EXPECT_TRUE(both.empty()) << "ops with a backward rule that are still listed as without: "
                            << absl::StrJoin(both, " ");
  for (const auto& [op, why] : without) {
    EXPECT_NE(catalog.Find(op), nullptr) << op << " is listed but not in the catalog";
  }
  EXPECT_EQ(with_rules + static_cast<int>(without.size()),
            static_cast<int>(catalog.OpNames().size()));
}

}  // namespace
}  // namespace oneflow_sbp
