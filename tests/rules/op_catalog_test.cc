// The op catalog in one place: one example and one golden candidate line
// per registered op, in alphabetical order (like Shardy's registry golden
// file). A new op without an entry here, or an entry for an op that no
// longer exists, fails the test, so every op has a golden list. The family
// tests (op_rules_test, nn_ops_test, index_ops_test, concat_slice_ops_test,
// reshape_rule_test) derive each list by hand; this file pins them all.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/candidate_stages.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

struct Golden {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> attrs;
  std::string candidates;  // on 2 ranks, without the engine's all-B
};

const std::vector<Golden>& Catalog() {
  static const std::vector<Golden>* catalog = new std::vector<Golden>{
      {"abs", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"adam_update", {"f32[4,6]", "f32[4,6]", "f32[4,6]", "f32[4,6]"}, {}, "model_0:S(0) model_diff_0:S(0) m_0:S(0) v_0:S(0) | model_0:S(1) model_diff_0:S(1) m_0:S(1) v_0:S(1)"},
      {"add_n", {"f32[4,6]", "f32[4,6]", "f32[4,6]"}, {}, "in_0:S(0) in_1:S(0) in_2:S(0) -> out_0:S(0) | in_0:S(1) in_1:S(1) in_2:S(1) -> out_0:S(1) | in_0:P in_1:P in_2:P -> out_0:P"},
      {"argwhere", {"f32[4,6]"}, {}, ""},
      {"batch_matmul", {"f32[3,8,4]", "f32[3,4,6]"}, {}, "a_0:S(0) b_0:S(0) -> out_0:S(0) | a_0:S(1) b_0:B -> out_0:S(1) | a_0:B b_0:S(2) -> out_0:S(2) | a_0:S(2) b_0:S(1) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P"},
      {"bias_add", {"f32[4,6]", "f32[6]"}, {}, "a_0:S(0) b_0:B -> out_0:S(0) | a_0:S(1) b_0:S(0) -> out_0:S(1) | a_0:P b_0:P -> out_0:P"},
      {"broadcast_add", {"f32[4,1]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(1) -> z_0:S(1) | x_0:P y_0:P -> z_0:P"},
      {"broadcast_div", {"f32[4,6]", "f32[6]"}, {}, "x_0:S(0) y_0:B -> z_0:S(0) | x_0:S(1) y_0:S(0) -> z_0:S(1) | x_0:P y_0:B -> z_0:P"},
      {"broadcast_equal", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_fmod", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_greater", {"f32[4,6]", "f32[1,6]"}, {}, "x_0:S(0) y_0:B -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_greater_equal", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_less", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_less_equal", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_like", {"f32[6]", "f32[4,6]"}, {"broadcast_axes=0"}, "x_0:B like_0:S(0) -> y_0:S(0) | x_0:S(0) like_0:S(1) -> y_0:S(1) | x_0:P like_0:P -> y_0:P | x_0:P like_0:B -> y_0:P | x_0:B like_0:P -> y_0:B"},
      {"broadcast_matmul", {"f32[3,8,4]", "f32[4,6]"}, {}, "a_0:S(0) b_0:B -> out_0:S(0) | a_0:S(1) b_0:B -> out_0:S(1) | a_0:B b_0:S(1) -> out_0:S(2) | a_0:S(2) b_0:S(0) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P"},
      {"broadcast_maximum", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_minimum", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_mul", {"f32[3,1]", "f32[2,3,4]"}, {}, "x_0:B y_0:S(0) -> z_0:S(0) | x_0:B y_0:S(2) -> z_0:S(2) | x_0:S(0) y_0:S(1) -> z_0:S(1) | x_0:B y_0:P -> z_0:P | x_0:P y_0:B -> z_0:P"},
      {"broadcast_not_equal", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_pow", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1)"},
      {"broadcast_sub", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) y_0:S(0) -> z_0:S(0) | x_0:S(1) y_0:S(1) -> z_0:S(1) | x_0:P y_0:P -> z_0:P"},
      {"cast", {"f32[4,6]"}, {"dtype=bf16"}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"cat", {"f32[4,6]", "f32[4,2]", "f32[4,3]"}, {"axis=1"}, "in_0:S(0) in_1:S(0) in_2:S(0) -> out_0:S(0) | in_0:P in_1:P in_2:P -> out_0:P"},
      {"ceil", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"conv2d", {"f32[4,3,8,8]", "f32[6,3,3,3]", "f32[6]"}, {"filters=6", "kernel_size=3,3"}, "in_0:S(0) weight_0:B bias_0:B -> out_0:S(0) | in_0:B weight_0:S(0) bias_0:S(0) -> out_0:S(1) | in_0:S(1) weight_0:S(1) bias_0:P -> out_0:P"},
      {"copy", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"cos", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"dim_gather", {"f32[4,6]", "i64[4,3]"}, {"dim=1"}, "input_0:S(0) index_0:S(0) -> output_0:S(0) | input_0:B index_0:S(1) -> output_0:S(1) | input_0:P index_0:B -> output_0:P"},
      {"dropout", {"f32[4,6]"}, {"rate=0.1"}, "in_0:S(0) -> out_0:S(0) mask_0:S(0) | in_0:S(1) -> out_0:S(1) mask_0:S(1)"},
      {"dropout_grad", {"f32[4,6]", "bool[4,6]"}, {"scale=2"}, "dy_0:S(0) mask_0:S(0) -> dx_0:S(0) | dy_0:S(1) mask_0:S(1) -> dx_0:S(1) | dy_0:P mask_0:B -> dx_0:P"},
      // The einsum generator's matmul list (exactly OneFlow's) from an equation.
      {"einsum", {"f32[8,4]", "f32[4,6]"}, {"equation=mk,kn->mn"}, "in_0:S(0) in_1:B -> out_0:S(0) | in_0:B in_1:S(1) -> out_0:S(1) | in_0:S(1) in_1:S(0) -> out_0:P | in_0:P in_1:B -> out_0:P | in_0:B in_1:P -> out_0:P"},
      {"embedding", {"f32[10,4]", "i64[3,5]"}, {}, "weight_0:B indices_0:S(0) -> out_0:S(0) | weight_0:B indices_0:S(1) -> out_0:S(1) | weight_0:S(1) indices_0:B -> out_0:S(2) | weight_0:S(0) indices_0:B -> out_0:P"},
      {"embedding_grad", {"f32[3,5,4]", "f32[10,4]", "i64[3,5]"}, {}, "dy_0:S(0) weight_0:B indices_0:S(0) -> dx_0:P | dy_0:S(1) weight_0:B indices_0:S(1) -> dx_0:P | dy_0:S(2) weight_0:S(1) indices_0:B -> dx_0:S(1) | dy_0:P weight_0:B indices_0:B -> dx_0:P | dy_0:B weight_0:S(0) indices_0:B -> dx_0:S(0)"},
      {"erf", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"exp", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"expand", {"f32[4,1]"}, {"expand_shape=2,4,6"}, "in_0:S(0) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"expand_dims", {"f32[4,6]"}, {"axis=1"}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(2) | in_0:P -> out_0:P"},
      {"fast_gelu", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"fill", {"f32[4,6]"}, {"value=1"}, "like_0:S(0) -> out_0:S(0) | like_0:S(1) -> out_0:S(1) | like_0:P -> out_0:B"},
      {"flatten", {"f32[4,3,2]"}, {"start_dim=1"}, "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P"},
      {"floor", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"gather", {"f32[6,7]", "i64[2,3]"}, {"axis=1"}, "in_0:B indices_0:S(0) -> out_0:S(1) | in_0:B indices_0:S(1) -> out_0:S(2) | in_0:S(0) indices_0:B -> out_0:S(0) | in_0:S(1) indices_0:B -> out_0:P | in_0:P indices_0:B -> out_0:P"},
      {"gelu", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"gelu_grad", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) dy_0:S(0) -> dx_0:S(0) | x_0:S(1) dy_0:S(1) -> dx_0:S(1) | x_0:B dy_0:P -> dx_0:P"},
      {"identity", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"l2_normalize", {"f32[4,6,8]"}, {"axis=1"}, "x_0:S(0) -> y_0:S(0) | x_0:S(2) -> y_0:S(2)"},
      {"l2_normalize_grad", {"f32[4,6,8]", "f32[4,6,8]"}, {"axis=1"}, "dy_0:S(0) x_0:S(0) -> dx_0:S(0) | dy_0:S(2) x_0:S(2) -> dx_0:S(2) | dy_0:P x_0:B -> dx_0:P"},
      {"layer_norm", {"f32[4,6,8]", "f32[8]", "f32[8]"}, {"begin_norm_axis=2"}, "x_0:S(0) beta_0:B gamma_0:B -> y_0:S(0) mean_0:S(0) inv_variance_0:S(0) | x_0:S(1) beta_0:B gamma_0:B -> y_0:S(1) mean_0:S(1) inv_variance_0:S(1)"},
      {"layer_norm_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[4,6]", "f32[8]"}, {"begin_norm_axis=2"}, "dy_0:S(0) x_0:S(0) mean_0:S(0) inv_variance_0:S(0) gamma_0:B -> dx_0:S(0) | dy_0:S(1) x_0:S(1) mean_0:S(1) inv_variance_0:S(1) gamma_0:B -> dx_0:S(1)"},
      {"layer_norm_param_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[4,6]"}, {"begin_params_axis=2"}, "dy_0:S(0) x_0:S(0) mean_0:S(0) inv_variance_0:S(0) -> gamma_diff_0:P beta_diff_0:P | dy_0:S(1) x_0:S(1) mean_0:S(1) inv_variance_0:S(1) -> gamma_diff_0:P beta_diff_0:P | dy_0:S(2) x_0:S(2) mean_0:B inv_variance_0:B -> gamma_diff_0:S(0) beta_diff_0:S(0)"},
      {"log", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"log_softmax", {"f32[4,6]"}, {}, "in_0:S(0) -> prob_0:S(0)"},
      {"log_softmax_grad", {"f32[4,6]", "f32[4,6]"}, {}, "prob_0:S(0) dy_0:S(0) -> dx_0:S(0)"},
      {"logical_not", {"bool[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"masked_mean_pool", {"f32[4,6,8]", "i64[4,6]"}, {}, "x_0:S(0) mask_0:S(0) -> y_0:S(0) | x_0:S(2) mask_0:B -> y_0:S(1) | x_0:P mask_0:B -> y_0:P"},
      {"masked_mean_pool_grad", {"f32[4,8]", "i64[4,6]"}, {}, "dy_0:S(0) mask_0:S(0) -> dx_0:S(0) | dy_0:S(1) mask_0:B -> dx_0:S(2) | dy_0:P mask_0:B -> dx_0:P"},
      {"matmul", {"f32[8,4]", "f32[4,6]"}, {}, "a_0:S(0) b_0:B -> out_0:S(0) | a_0:B b_0:S(1) -> out_0:S(1) | a_0:S(1) b_0:S(0) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P"},
      {"mish", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"narrow", {"f32[4,6]"}, {"dim=1", "start=2", "length=3"}, "in_0:S(0) -> out_0:S(0) | in_0:P -> out_0:P"},
      {"narrow_grad", {"f32[4,3]", "f32[4,6]"}, {"dim=1", "start=2", "length=3"}, "dy_0:S(0) like_0:S(0) -> dx_0:S(0) | dy_0:P like_0:P -> dx_0:P | dy_0:P like_0:B -> dx_0:P | dy_0:B like_0:P -> dx_0:B"},
      {"negative", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1) | x_0:P -> y_0:P"},
      {"reciprocal", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"reduce_max", {"f32[4,6,8]"}, {"axis=1"}, "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(2) -> output_tensor_0:S(1)"},
      {"reduce_mean", {"f32[4,6,8]"}, {"axis=1"}, "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(1) -> output_tensor_0:P | input_tensor_0:P -> output_tensor_0:P | input_tensor_0:S(2) -> output_tensor_0:S(1)"},
      {"reduce_min", {"f32[4,6,8]"}, {"axis=1"}, "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(2) -> output_tensor_0:S(1)"},
      {"reduce_nansum", {"f32[4,6,8]"}, {"axis=1"}, "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(2) -> output_tensor_0:S(1) | input_tensor_0:S(1) -> output_tensor_0:P"},
      {"reduce_prod", {"f32[4,6,8]"}, {"axis=1"}, "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(2) -> output_tensor_0:S(1)"},
      {"reduce_sum", {"f32[4,6,8]"}, {"axis=1"}, "input_tensor_0:S(0) -> output_tensor_0:S(0) | input_tensor_0:S(1) -> output_tensor_0:P | input_tensor_0:P -> output_tensor_0:P | input_tensor_0:S(2) -> output_tensor_0:S(1)"},
      {"reduce_sum_like", {"f32[4,6,8]", "f32[4,1,8]"}, {"axis=1"}, "x_0:S(0) like_0:S(0) -> y_0:S(0) | x_0:S(1) like_0:B -> y_0:P | x_0:S(1) like_0:P -> y_0:P | x_0:S(2) like_0:S(2) -> y_0:S(2) | x_0:B like_0:P -> y_0:B | x_0:P like_0:B -> y_0:P | x_0:P like_0:P -> y_0:P"},
      {"relu", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"relu_grad", {"f32[4,6]", "f32[4,6]"}, {}, "y_0:S(0) dy_0:S(0) -> dx_0:S(0) | y_0:S(1) dy_0:S(1) -> dx_0:S(1) | y_0:B dy_0:P -> dx_0:P"},
      {"reshape", {"f32[2,3,4]"}, {"shape=6,2,2"}, "in_0:S(0) -> out_0:S(0) | in_0:S(2) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"rms_norm", {"f32[4,6,8]", "f32[8]"}, {"normalized_shape=8"}, "x_0:S(0) weight_0:B -> y_0:S(0) inv_rms_0:S(0) | x_0:S(1) weight_0:B -> y_0:S(1) inv_rms_0:S(1)"},
      {"rms_norm_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]", "f32[8]"}, {}, "dy_0:S(0) x_0:S(0) inv_rms_0:S(0) weight_0:B -> dx_0:S(0) | dy_0:S(1) x_0:S(1) inv_rms_0:S(1) weight_0:B -> dx_0:S(1)"},
      {"rms_norm_param_grad", {"f32[4,6,8]", "f32[4,6,8]", "f32[4,6]"}, {}, "dy_0:S(0) x_0:S(0) inv_rms_0:S(0) -> weight_grad_0:P | dy_0:S(1) x_0:S(1) inv_rms_0:S(1) -> weight_grad_0:P | dy_0:S(2) x_0:S(2) inv_rms_0:B -> weight_grad_0:S(0)"},
      {"rotary_embedding", {"f32[2,4,6,8]", "f32[6,8]", "f32[6,8]"}, {}, "x_0:S(0) cos_0:B sin_0:B -> y_0:S(0) | x_0:S(1) cos_0:B sin_0:B -> y_0:S(1) | x_0:S(2) cos_0:S(0) sin_0:S(0) -> y_0:S(2) | x_0:P cos_0:B sin_0:B -> y_0:P"},
      {"rotary_embedding_grad", {"f32[2,4,6,8]", "f32[6,8]", "f32[6,8]"}, {}, "dy_0:S(0) cos_0:B sin_0:B -> dx_0:S(0) | dy_0:S(1) cos_0:B sin_0:B -> dx_0:S(1) | dy_0:S(2) cos_0:S(0) sin_0:S(0) -> dx_0:S(2) | dy_0:P cos_0:B sin_0:B -> dx_0:P"},
      {"round", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"rsqrt", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"scalar_add", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"scalar_div", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"scalar_floordiv", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"scalar_fmod", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"scalar_mul", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"scalar_pow", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"scaled_dot_product_attention", {"f32[2,4,6,8]", "f32[2,4,6,8]", "f32[2,4,6,8]"}, {"causal=true"}, "query_0:S(0) key_0:S(0) value_0:S(0) -> out_0:S(0) | query_0:S(1) key_0:S(1) value_0:S(1) -> out_0:S(1) | query_0:S(2) key_0:B value_0:B -> out_0:S(2) | query_0:B key_0:B value_0:P -> out_0:P"},
      {"scaled_dot_product_attention_grad", {"f32[2,4,6,8]", "f32[2,4,6,8]", "f32[2,4,6,8]", "f32[2,4,6,8]"}, {"causal=true"}, "dout_0:S(0) query_0:S(0) key_0:S(0) value_0:S(0) -> dquery_0:S(0) dkey_0:S(0) dvalue_0:S(0) | dout_0:S(1) query_0:S(1) key_0:S(1) value_0:S(1) -> dquery_0:S(1) dkey_0:S(1) dvalue_0:S(1) | dout_0:S(2) query_0:S(2) key_0:B value_0:B -> dquery_0:S(2) dkey_0:P dvalue_0:P | dout_0:P query_0:B key_0:B value_0:B -> dquery_0:P dkey_0:P dvalue_0:P"},
      {"sgd_update", {"f32[4,6]", "f32[4,6]"}, {"learning_rate=0.1"}, "model_0:S(0) model_diff_0:S(0) | model_0:S(1) model_diff_0:S(1)"},
      {"sigmoid", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"sign", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"silu", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"silu_grad", {"f32[4,6]", "f32[4,6]"}, {}, "x_0:S(0) dy_0:S(0) -> dx_0:S(0) | x_0:S(1) dy_0:S(1) -> dx_0:S(1) | x_0:B dy_0:P -> dx_0:P"},
      {"sin", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"slice", {"f32[4,6]"}, {"start=0,1", "stop=4,5", "step=1,1"}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:P | x_0:P -> y_0:P"},
      {"slice_grad", {"f32[4,4]", "f32[4,6]"}, {"start=0,1", "stop=4,5", "step=1,1"}, "dy_0:S(0) like_0:S(0) -> dx_0:S(0) | dy_0:P like_0:P -> dx_0:P | dy_0:P like_0:B -> dx_0:P | dy_0:B like_0:P -> dx_0:B"},
      {"slice_update", {"f32[4,6]", "f32[4,4]"}, {"start=0,1", "stop=4,5", "step=1,1"}, "ref_0:S(0) value_0:B -> y_0:S(0) | ref_0:S(0) value_0:S(0) -> y_0:S(0) | ref_0:S(1) value_0:B -> y_0:S(1) | ref_0:P value_0:P -> y_0:P"},
      {"softmax", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0)"},
      {"softmax_grad", {"f32[4,6]", "f32[4,6]"}, {}, "y_0:S(0) dy_0:S(0) -> dx_0:S(0)"},
      {"softplus", {"f32[4,6]"}, {}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1)"},
      {"sparse_softmax_cross_entropy", {"f32[4,10]", "i64[4]"}, {"depth=10"}, "prediction_0:S(0) label_0:S(0) -> prob_0:S(0) out_0:S(0)"},
      {"sparse_softmax_cross_entropy_grad", {"f32[4]", "i64[4]", "f32[4,10]"}, {"depth=10"}, "dy_0:S(0) label_0:S(0) prob_0:S(0) -> prediction_diff_0:S(0)"},
      {"sparse_softmax_cross_entropy_ms", {"f32[4,10]", "i64[4]"}, {"depth=10"}, "prediction_0:S(0) label_0:S(0) -> prob_0:S(0) out_0:S(0) | prediction_0:S(1) label_0:B -> prob_0:S(1) out_0:P"},
      {"sparse_softmax_cross_entropy_ms_grad", {"f32[4]", "i64[4]", "f32[4,10]"}, {"depth=10"}, "dy_0:S(0) label_0:S(0) prob_0:S(0) -> prediction_diff_0:S(0) | dy_0:B label_0:B prob_0:S(1) -> prediction_diff_0:S(1)"},
      {"split", {"f32[4,6]"}, {"axis=1", "sizes=1,2,3"}, "x_0:S(0) -> out_0:S(0) out_1:S(0) out_2:S(0) | x_0:P -> out_0:P out_1:P out_2:P"},
      {"sqrt", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"square", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"squeeze", {"f32[4,1,6]"}, {"axes=1"}, "in_0:S(0) -> out_0:S(0) | in_0:S(2) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"stack", {"f32[4,6]", "f32[4,6]"}, {"axis=1"}, "in_0:S(0) in_1:S(0) -> out_0:S(0) | in_0:S(1) in_1:S(1) -> out_0:S(2) | in_0:P in_1:P -> out_0:P"},
      {"tanh", {"f32[4,6]"}, {}, "x_0:S(0) -> y_0:S(0) | x_0:S(1) -> y_0:S(1)"},
      {"transpose", {"f32[4,6,8]"}, {"perm=2,0,1"}, "input_0:S(2) -> output_0:S(0) | input_0:S(0) -> output_0:S(1) | input_0:S(1) -> output_0:S(2) | input_0:P -> output_0:P"},
      {"tril", {"f32[4,6]"}, {"diagonal=1"}, "in_0:S(0) -> out_0:S(0) | in_0:S(1) -> out_0:S(1) | in_0:P -> out_0:P"},
      {"where", {"bool[4,1]", "f32[4,6]", "f32[6]"}, {}, "condition_0:S(0) x_0:S(0) y_0:B -> out_0:S(0) | condition_0:B x_0:S(1) y_0:S(0) -> out_0:S(1) | condition_0:B x_0:P y_0:P -> out_0:P"},
      {"zeros_like", {"f32[4,6]"}, {}, "like_0:S(0) -> out_0:S(0) | like_0:S(1) -> out_0:S(1) | like_0:P -> out_0:P"},
  };
  return *catalog;
}

TEST(OpCatalog, EveryRegisteredOpHasAGoldenLine) {
  std::set<std::string> listed;
  for (const Golden& g : Catalog()) {
    EXPECT_TRUE(listed.insert(g.op).second) << g.op << " is listed twice";
  }
  for (const std::string& op : Registry().OpNames()) {
    if (op.rfind("test_", 0) == 0) continue;  // ops registered by other tests
    EXPECT_TRUE(listed.count(op)) << "op " << op << " has no golden line in op_catalog_test.cc";
  }
  for (const std::string& op : listed) {
    EXPECT_NE(Registry().Find(op), nullptr) << op << " is listed but not registered";
  }
}

TEST(OpCatalog, GoldenCandidateLists) {
  for (const Golden& g : Catalog()) {
    EXPECT_EQ(CandidatesToString(g.op, g.inputs, g.attrs), g.candidates) << g.op;
  }
}

// ------------------------------------------------------------ N-D goldens
//
// The N-D list is the row-major product of the per-extent 1-D lists, then
// the op's N-D hook. Two kinds of op make it more than a product of the
// lines above, so their N-D lists are pinned here on [2,2] and [2,3]:
//   - ops with an N-D hook (OpDef::nd_candidate_hook: reshape, flatten,
//     slice_update), and
//   - ops whose rule depends on the mesh extent (SbpContext::hierarchy_value
//     is read only by the reshape rule, ReshapeSplitPairs, used by reshape
//     and flatten).
// NdGoldensCoverEveryHookedAndSizeDependentOp re-derives both sets from the
// registry, so a new op of either kind fails until it is listed here.

struct NdGolden {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> attrs;
  std::string hierarchy;  // "2,2"
  std::string line;       // "<count>: <first 3 candidates>"
};

const std::vector<NdGolden>& NdCatalog() {
  static const std::vector<NdGolden>* catalog = new std::vector<NdGolden>{
      {"flatten", {"f32[4,3,2]"}, {"start_dim=1"}, "2,2",
          "9: in_0:(B,B) -> out_0:(B,B) | in_0:(B,P) -> out_0:(B,P) | in_0:(B,S(0)) -> out_0:(B,S(0))"},
      {"flatten", {"f32[6,3,2]"}, {"start_dim=1"}, "2,3",
          "12: in_0:(B,B) -> out_0:(B,B) | in_0:(B,P) -> out_0:(B,P) | in_0:(B,S(0)) -> out_0:(B,S(0))"},
      {"reshape", {"f32[2,3,4]"}, {"shape=6,2,2"}, "2,2",
          "15: in_0:(B,B) -> out_0:(B,B) | in_0:(B,P) -> out_0:(B,P) | in_0:(B,S(0)) -> out_0:(B,S(0))"},
      // 16: (S(1),S(1)) -> (S(2),S(2)) splits the identity dim 6 -> 6 as
      // 3 rows then 2/1; kept since issue 23 (identity dims keep any split).
      {"reshape", {"f32[4,6]"}, {"shape=2,2,6"}, "2,2",
          "16: in_0:(B,B) -> out_0:(B,B) | in_0:(B,P) -> out_0:(B,P) | in_0:(B,S(0)) -> out_0:(B,S(0))"},
      {"reshape", {"f32[6,6]"}, {"shape=3,2,6"}, "2,3",
          "12: in_0:(B,B) -> out_0:(B,B) | in_0:(B,P) -> out_0:(B,P) | in_0:(B,S(0)) -> out_0:(B,S(0))"},
      {"reshape", {"f32[12]"}, {"shape=2,6"}, "2,3",
          "7: in_0:(B,B) -> out_0:(B,B) | in_0:(B,P) -> out_0:(B,P) | in_0:(P,B) -> out_0:(P,B)"},
      {"slice_update", {"f32[4,6]", "f32[4,4]"}, {"start=0,1", "stop=4,5", "step=1,1"}, "2,2",
          "24: ref_0:(S(0),S(0)) value_0:(B,B) -> y_0:(S(0),S(0)) | ref_0:(S(0),S(1)) value_0:(B,B) -> y_0:(S(0),S(1)) | ref_0:(S(0),P) value_0:(B,P) -> y_0:(S(0),P)"},
      {"slice_update", {"f32[6,6]", "f32[6,4]"}, {"start=0,1", "stop=6,5", "step=1,1"}, "2,3",
          "24: ref_0:(S(0),S(0)) value_0:(B,B) -> y_0:(S(0),S(0)) | ref_0:(S(0),S(1)) value_0:(B,B) -> y_0:(S(0),S(1)) | ref_0:(S(0),P) value_0:(B,P) -> y_0:(S(0),P)"},
  };
  return *catalog;
}

// The N-D candidate list OneFlow's N-D policy starts from (before shape
// filtering), as "<count>: <first 3 candidates>".
std::string NdCandidatesLine(const NdGolden& g) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(g.op, static_cast<int>(g.inputs.size()), g.attrs);
  if (!call.ok()) return absl::StrCat("error: ", call.status().message());
  InferRequest req;
  req.op = *call;
  const std::vector<std::string> extents = absl::StrSplit(g.hierarchy, ',');
  int64_t ranks = 1;
  std::vector<int64_t> h;
  for (const std::string& e : extents) {
    h.push_back(std::stoll(e));
    ranks *= h.back();
  }
  std::vector<int64_t> ids(ranks);
  for (int64_t i = 0; i < ranks; ++i) ids[i] = i;
  req.placement = *Placement::Make(DeviceType::kCpu, ids, h);
  for (const std::string& in : g.inputs) {
    req.inputs.emplace_back(*TensorDesc::Parse(in),
                            NdSbp::Repeat(SbpParallel::Broadcast(), static_cast<int>(h.size())));
  }
  absl::StatusOr<PreparedRequest> p = PrepareRequest(req);
  if (!p.ok()) return absl::StrCat("error: ", p.status().message());
  absl::StatusOr<std::vector<NdSbpSignature>> all =
      ExpandCandidates(req, *p, OneFlowNd()->rules().source);
  if (!all.ok()) return absl::StrCat("error: ", all.status().message());
  std::vector<std::string> first;
  for (size_t i = 0; i < all->size() && i < 3; ++i) {
    first.push_back(SignatureToString(**call, (*all)[i]));
  }
  return absl::StrCat(all->size(), ": ", absl::StrJoin(first, " | "));
}

TEST(OpCatalog, NdGoldens) {
  for (const NdGolden& g : NdCatalog()) {
    EXPECT_EQ(NdCandidatesLine(g), g.line) << g.op << " on [" << g.hierarchy << "]";
  }
}

TEST(OpCatalog, NdGoldensCoverEveryHookedAndSizeDependentOp) {
  std::set<std::string> pinned;
  std::set<std::string> meshes_by_op;
  for (const NdGolden& g : NdCatalog()) {
    pinned.insert(g.op);
    meshes_by_op.insert(g.op + "@" + g.hierarchy);
  }
  for (const std::string& op : pinned) {
    EXPECT_TRUE(meshes_by_op.count(op + "@2,2") && meshes_by_op.count(op + "@2,3"))
        << op << " needs goldens on both [2,2] and [2,3]";
  }
  for (const std::string& op : Registry().OpNames()) {
    if (op.rfind("test_", 0) == 0) continue;
    if (Registry().Find(op)->nd_candidate_hook()) {
      EXPECT_TRUE(pinned.count(op)) << op << " has an N-D hook but no N-D golden";
    }
  }
  // A rule that reads the mesh extent gives different 1-D lists for
  // different extents on the catalog's example.
  for (const Golden& g : Catalog()) {
    const std::string on2 = CandidatesToString(g.op, g.inputs, g.attrs, 2);
    for (int64_t extent : {3, 4, 6}) {
      if (CandidatesToString(g.op, g.inputs, g.attrs, extent) == on2) continue;
      EXPECT_TRUE(pinned.count(g.op))
          << g.op << "'s rule depends on the mesh extent but has no N-D golden";
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
