#include "kernels/verify/input_recipes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "kernels/verify/random_tensor.h"
#include "ops/op_record.h"

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

// The recipes live in the op records (ops/records/*.toml, `recipe`), only
// for ops the default recipe does not fit. Extents there: 5 is uneven over
// 2 and 3 ranks; 1 leaves some ranks empty; indexed extents (7) differ from
// the others so a wrong axis shows.
const std::vector<InputRecipe>& BuiltinInputRecipes() {
  static const std::vector<InputRecipe>* table = [] {
    auto* t = new std::vector<InputRecipe>();
    for (const ops::OpRecord& r : ops::BuiltinOpRecords()) {  // sorted by name
      if (r.recipe.has_value()) t->push_back({r.name, r.recipe->inputs, r.recipe->attrs});
    }
    return t;
  }();
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
    OFS_ASSIGN_OR_RETURN(AttrValue v, ParseAttrValue(decl->type, a.substr(eq + 1)));
    map.Set(name, v);
  }
  OFS_ASSIGN_OR_RETURN(std::vector<int> counts, OpCall::DeduceInputCounts(*def, num_inputs));
  return OpCall::Make(std::move(def), counts, map);
}

absl::StatusOr<OpInputs> MakeOpInputs(std::shared_ptr<const OpDef> def,
                                      const InputRecipe& recipe, uint64_t seed) {
  const std::string op = def->type_name();
  OpInputs out;
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpCall> call, MakeCallFromStrings(std::move(def),
      static_cast<int>(recipe.inputs.size()), recipe.attrs));
  out.call = std::move(call);
  std::vector<TensorDesc> descs;
  for (size_t i = 0; i < recipe.inputs.size(); ++i) {
    OFS_ASSIGN_OR_RETURN(LocalTensor t, MakeInput(op, recipe.inputs[i], Mix(seed, op, i)));
    descs.push_back(TensorDesc{*Shape::Make(t.dims()), t.dtype()});
    out.inputs.push_back(std::move(t));
  }
  absl::StatusOr<std::vector<TensorDesc>> outs = out.call->InferOutputDescs(descs);
  if (!outs.ok()) {
    return absl::Status(outs.status().code(),
                        absl::StrCat(op, ": ", outs.status().message()));
  }
  return out;
}

}  // namespace oneflow_sbp::kernels
