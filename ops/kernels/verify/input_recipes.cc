#include "ops/kernels/verify/input_recipes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/attr_value.h"
#include "oneflow_sbp/tensor_desc.h"
#include "ops/kernels/verify/random_tensor.h"
#include "oneflow_sbp/quoted_input.h"

namespace oneflow_sbp::kernels {
namespace {

// What the default recipe gives every required input: an uneven extent
// (5), a size-1 extent and an odd one.
constexpr char kDefaultInput[] = "f32[5,1,3]";

// FNV-1a: a seed per (op, input) that does not depend on the standard
// library's std::hash.
uint64_t Mix(uint64_t seed, absl::string_view op, size_t input) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : op) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return (h ^ input) * 1099511628211ull;
}

absl::StatusOr<LocalTensor> MakeInput(absl::string_view op, absl::string_view spec,
                                      uint64_t seed) {
  const size_t at = spec.find('@');
  const absl::string_view desc_text = spec.substr(0, at);
  const absl::string_view domain = at == absl::string_view::npos ? "" : spec.substr(at + 1);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("input recipe of ", op, ": ", QuotedInput(spec), ": ", why));
  };
  absl::StatusOr<TensorDesc> desc = TensorDesc::Parse(desc_text);
  if (!desc.ok()) return bad(desc.status().message());
  const std::vector<int64_t> dims(desc->shape.dims().begin(), desc->shape.dims().end());
  const DataType dtype = desc->dtype;
  const bool is_float = dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
                        dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
  if (domain == "mask") {
    if (dims.empty() || dims.back() == 0) return bad("@mask needs a last dim of extent >= 1");
    return MaskValues(dtype, dims, seed);
  }
  if (dtype == DataType::kBool) {
    if (!domain.empty()) return bad("bool inputs take no domain");
    return BoolValues(dims, seed);
  }
  if (domain.empty()) return is_float ? GridValues(dtype, dims, seed) : IntValues(dtype, dims, seed);
  if (domain == "pos") {
    if (!is_float) return bad("@pos is for float inputs");
    return GridValues(dtype, dims, seed, 0.25, 2);
  }
  if (domain == "int") return IntValues(dtype, dims, seed, -2, 2);
  int n = 0;
  if (absl::StartsWith(domain, "idx") && absl::SimpleAtoi(domain.substr(3), &n) && n > 0) {
    return IntValues(dtype, dims, seed, 0, n - 1);
  }
  return bad("unknown domain (pos, int, idx<N> or mask)");
}

}  // namespace

const std::vector<InputRecipe>& BuiltinInputRecipes() {
  // Only ops the default recipe does not fit. Extents: 5 is uneven over 2
  // and 3 ranks; 1 leaves some ranks empty; indexed extents (7) differ from
  // the others so a wrong axis shows.
  static const std::vector<InputRecipe>* table = new std::vector<InputRecipe>{
      {"adam_update", {"f32[5,1,3]", "f32[5,1,3]", "f32[5,1,3]", "f32[5,1,3]@pos"}, {}},
      {"add_n", {"f32[5,1,3]", "f32[5,1,3]", "f32[5,1,3]"}, {}},
      {"batch_matmul", {"f32[3,5,4]", "f32[3,4,1]"}, {}},
      {"bias_add", {"f32[5,3]", "f32[3]"}, {}},
      {"broadcast_add", {"f32[5,1]", "f32[5,3]"}, {}},
      {"broadcast_div", {"f32[5,3]", "f32[3]@pos"}, {}},
      {"broadcast_equal", {"f32[5,3]@int", "f32[5,3]@int"}, {}},
      {"broadcast_fmod", {"f32[5,3]", "f32[5,3]@pos"}, {}},
      {"broadcast_greater", {"f32[5,3]@int", "f32[1,3]@int"}, {}},
      {"broadcast_greater_equal", {"f32[5,3]@int", "f32[5,3]@int"}, {}},
      {"broadcast_less", {"f32[5,3]@int", "f32[5,1]@int"}, {}},
      {"broadcast_less_equal", {"f32[5,3]@int", "f32[5,3]@int"}, {}},
      {"broadcast_like", {"f32[3]", "f32[5,3]"}, {"broadcast_axes=0"}},
      {"broadcast_matmul", {"f32[3,5,4]", "f32[4,2]"}, {}},
      {"broadcast_mul", {"f32[3,1]", "f32[2,3,5]"}, {}},
      {"broadcast_not_equal", {"f32[5,3]@int", "f32[5,3]@int"}, {}},
      {"broadcast_pow", {"f32[5,3]@pos", "f32[5,3]"}, {}},
      // To an integer: truncation is not linear, so P -> P must not pass.
      {"cast", {"f32[5,1,3]"}, {"dtype=i32"}},
      {"cat", {"f32[5,3]", "f32[5,1]", "f32[5,2]"}, {"axis=1"}},
      {"conv2d", {"f32[3,3,5,4]", "f32[4,3,3,3]", "f32[4]"}, {"filters=4", "kernel_size=3,3"}},
      {"dim_gather", {"f32[5,4]", "i64[5,3]@idx4"}, {"dim=1"}},
      {"dropout", {"f32[5,1,3]"}, {"rate=0.25"}},
      {"dropout_grad", {"f32[5,3]", "bool[5,3]"}, {"scale=2"}},
      // A batched contraction, a free letter on each side and a three-way
      // product: every kind of letter the einsum rule splits.
      {"einsum", {"f32[3,5,4]", "f32[4,6]", "f32[6,2]"}, {"equation=bmk,kn,nj->bmj"}},
      {"embedding", {"f32[7,3]", "i64[3,5]@idx7"}, {}},
      {"embedding_grad", {"f32[3,5,3]", "f32[7,3]", "i64[3,5]@idx7"}, {}},
      {"expand", {"f32[5,1]"}, {"expand_shape=2,5,3"}},
      {"expand_dims", {"f32[5,3]"}, {"axis=1"}},
      {"fill", {"f32[5,1,3]"}, {"value=1.5"}},
      {"flatten", {"f32[6,2,3]"}, {"start_dim=0", "end_dim=1"}},
      {"gather", {"f32[5,7]", "i64[2,3]@idx7"}, {"axis=1"}},
      // Vectors of two multiples of 1/8 in [-2, 2]: with epsilon 1 some
      // norms fall below it, so both branches of the grad run.
      {"l2_normalize", {"f32[5,2,3]"}, {"axis=1", "epsilon=1"}},
      {"l2_normalize_grad", {"f32[5,2,3]", "f32[5,2,3]"}, {"axis=1", "epsilon=1"}},
      {"layer_norm", {"f32[3,5,4]", "f32[4]", "f32[4]"}, {"begin_norm_axis=2"}},
      {"layer_norm_grad",
       {"f32[3,5,4]", "f32[3,5,4]", "f32[3,5]", "f32[3,5]@pos", "f32[4]"},
       {"begin_norm_axis=2"}},
      {"layer_norm_param_grad",
       {"f32[3,5,4]", "f32[3,5,4]", "f32[3,5]", "f32[3,5]@pos"},
       {"begin_params_axis=2"}},
      {"log", {"f32[5,1,3]@pos"}, {}},
      {"log_softmax", {"f32[5,3]"}, {}},
      {"log_softmax_grad", {"f32[5,3]", "f32[5,3]"}, {}},
      {"logical_not", {"bool[5,1,3]"}, {}},
      {"masked_mean_pool", {"f32[3,5,4]", "bool[3,5]@mask"}, {}},
      {"masked_mean_pool_grad", {"f32[3,4]", "i64[3,5]@mask"}, {}},
      {"matmul", {"f32[5,3]", "f32[3,2]"}, {}},
      {"narrow", {"f32[5,6]"}, {"dim=1", "start=2", "length=3"}},
      {"narrow_grad", {"f32[5,3]", "f32[5,6]"}, {"dim=1", "start=2", "length=3"}},
      {"reciprocal", {"f32[5,1,3]@pos"}, {}},
      {"reduce_max", {"f32[3,5,4]"}, {"axis=1"}},
      {"reduce_mean", {"f32[3,5,4]"}, {"axis=1"}},
      {"reduce_min", {"f32[3,5,4]"}, {"axis=1"}},
      {"reduce_nansum", {"f32[3,5,4]"}, {"axis=1"}},
      {"reduce_prod", {"f32[3,5,4]"}, {"axis=1"}},
      {"reduce_sum", {"f32[3,5,4]"}, {"axis=1"}},
      {"reduce_sum_like", {"f32[3,5,4]", "f32[3,1,4]"}, {"axis=1"}},
      // [5,6,6] -> [5,36]: dim 0 maps to itself with an extent uneven over
      // 2 and 3 (any split of it, nested too, must be offered and exact);
      // dims 1-2 merge as [6,6] -> [36], where on [2,2] the second split
      // of 3 rows is uneven (the nested-split filter must reject it).
      {"reshape", {"f32[5,6,6]"}, {"shape=5,36"}},
      {"rms_norm", {"f32[3,5,4]", "f32[4]"}, {"normalized_shape=4"}},
      {"rms_norm_grad", {"f32[3,5,4]", "f32[3,5,4]", "f32[3,5]@pos", "f32[4]"}, {}},
      {"rms_norm_param_grad", {"f32[3,5,4]", "f32[3,5,4]", "f32[3,5]@pos"}, {}},
      {"rotary_embedding", {"f32[2,3,5,4]", "f32[5,4]", "f32[5,4]"}, {}},
      {"rotary_embedding_grad", {"f32[2,3,5,4]", "f32[5,4]", "f32[5,4]"}, {}},
      {"rsqrt", {"f32[5,1,3]@pos"}, {}},
      // Nonzero operands (the default 0 makes add/mul trivial, div infinite).
      {"scalar_add", {"f32[5,1,3]"}, {"float_operand=1.5"}},
      {"scalar_div", {"f32[5,1,3]"}, {"float_operand=2"}},
      {"scalar_floordiv", {"f32[5,1,3]"}, {"float_operand=0.75"}},
      {"scalar_fmod", {"f32[5,1,3]"}, {"float_operand=0.75"}},
      {"scalar_mul", {"f32[5,1,3]"}, {"float_operand=1.5"}},
      {"scalar_pow", {"f32[5,1,3]@pos"}, {"float_operand=2"}},
      // With a key_padding_mask and the causal mask together: a query row
      // whose visible keys are all padded (the mask's first key is 0) takes
      // the no-key path; without the mask the op is covered by the kernel
      // tests' sweeps (kernels_attention_test).
      {"scaled_dot_product_attention",
       {"f32[2,3,5,4]", "f32[2,3,5,4]", "f32[2,3,5,4]", "i64[2,5]@mask"},
       {"causal=true"}},
      {"scaled_dot_product_attention_grad",
       {"f32[2,3,5,4]", "f32[2,3,5,4]", "f32[2,3,5,4]", "f32[2,3,5,4]", "i64[2,5]@mask"},
       {"causal=true"}},
      {"sgd_update", {"f32[5,1,3]", "f32[5,1,3]"}, {"learning_rate=0.5"}},
      {"slice", {"f32[5,7]"}, {"start=0,1", "stop=5,6", "step=1,2"}},
      {"slice_grad", {"f32[5,3]", "f32[5,7]"}, {"start=0,1", "stop=5,6", "step=1,2"}},
      {"slice_update", {"f32[5,7]", "f32[5,3]"}, {"start=0,1", "stop=5,6", "step=1,2"}},
      {"softmax", {"f32[5,3]"}, {}},
      {"softmax_grad", {"f32[5,3]", "f32[5,3]"}, {}},
      {"sparse_softmax_cross_entropy", {"f32[5,7]", "i64[5]@idx7"}, {"depth=7"}},
      {"sparse_softmax_cross_entropy_grad",
       {"f32[5]", "i64[5]@idx7", "f32[5,7]@pos"},
       {"depth=7"}},
      {"sparse_softmax_cross_entropy_ms", {"f32[5,7]", "i64[5]@idx7"}, {"depth=7"}},
      {"sparse_softmax_cross_entropy_ms_grad",
       {"f32[5]", "i64[5]@idx7", "f32[5,7]@pos"},
       {"depth=7"}},
      {"split", {"f32[5,6]"}, {"axis=1", "sizes=1,2,3"}},
      {"sqrt", {"f32[5,1,3]@pos"}, {}},
      {"squeeze", {"f32[5,1,3]"}, {"axes=1"}},
      {"stack", {"f32[5,3]", "f32[5,3]"}, {"axis=1"}},
      {"transpose", {"f32[3,5,4]"}, {"perm=2,0,1"}},
      {"tril", {"f32[5,6]"}, {"diagonal=1"}},
      {"where", {"bool[5,1]", "f32[5,3]", "f32[3]"}, {}},
  };
  return *table;
}

const InputRecipe* FindInputRecipe(absl::string_view op) {
  const std::vector<InputRecipe>& table = BuiltinInputRecipes();
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const InputRecipe& r, absl::string_view o) { return r.op < o; });
  return it != table.end() && it->op == op ? &*it : nullptr;
}

InputRecipe DefaultInputRecipe(const OpDef& def) {
  InputRecipe r;
  r.op = def.type_name();
  for (const ArgDef& arg : def.inputs()) {
    if (!arg.optional) r.inputs.push_back(kDefaultInput);
  }
  return r;
}

absl::StatusOr<std::shared_ptr<const OpCall>> MakeCallFromStrings(
    std::shared_ptr<const OpDef> def, int num_inputs, const std::vector<std::string>& attrs) {
  AttrMap map;
  for (const std::string& a : attrs) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(def->type_name(), ": attr ", QuotedInput(a), " has no '='"));
    }
    const std::string name = a.substr(0, eq);
    const AttrDef* decl = def->FindAttr(name);
    if (decl == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(def->type_name(), ": unknown attr ", name));
    }
    absl::StatusOr<AttrValue> v = ParseAttrValue(decl->type, a.substr(eq + 1));
    if (!v.ok()) return v.status();
    map.Set(name, *v);
  }
  absl::StatusOr<std::vector<int>> counts = OpCall::DeduceInputCounts(*def, num_inputs);
  if (!counts.ok()) return counts.status();
  return OpCall::Make(std::move(def), *counts, map);
}

absl::StatusOr<OpInputs> MakeOpInputs(std::shared_ptr<const OpDef> def,
                                      const InputRecipe& recipe, uint64_t seed) {
  const std::string op = def->type_name();
  OpInputs out;
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCallFromStrings(std::move(def), static_cast<int>(recipe.inputs.size()), recipe.attrs);
  if (!call.ok()) return call.status();
  out.call = *std::move(call);
  std::vector<TensorDesc> descs;
  for (size_t i = 0; i < recipe.inputs.size(); ++i) {
    absl::StatusOr<LocalTensor> t = MakeInput(op, recipe.inputs[i], Mix(seed, op, i));
    if (!t.ok()) return t.status();
    descs.push_back(TensorDesc{*Shape::Make(t->dims()), t->dtype()});
    out.inputs.push_back(*std::move(t));
  }
  absl::StatusOr<std::vector<TensorDesc>> outs = out.call->InferOutputDescs(descs);
  if (!outs.ok()) {
    return absl::Status(outs.status().code(),
                        absl::StrCat(op, ": ", outs.status().message()));
  }
  return out;
}

}  // namespace oneflow_sbp::kernels
