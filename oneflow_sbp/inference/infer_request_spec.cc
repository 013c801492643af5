#include "oneflow_sbp/inference/infer_request_spec.h"

#include <algorithm>
#include <map>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

namespace {

// Replaces the entry named `name`, or appends one.
template <typename T>
void SetByName(std::vector<std::pair<std::string, T>>& entries, const std::string& name,
               T value) {
  for (auto& [n, v] : entries) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(name, std::move(value));
}

}  // namespace

void InferRequestSpec::SetAttr(const std::string& name, absl::StatusOr<AttrValue> value) {
  SetByName(attrs, name, std::move(value));
}

void InferRequestSpec::SetConstraint(const std::string& bn, absl::StatusOr<NdSbp> nd_sbp) {
  SetByName(constraints, bn, std::move(nd_sbp));
}

absl::StatusOr<InferInput> ParseInferInput(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  const size_t close = t.find(']');
  if (close == absl::string_view::npos || close + 1 >= t.size() || t[close + 1] != ':') {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed input ", QuotedInput(text),
        ": expected <dtype>[<dims>]:<nd_sbp>, e.g. f32[64,32]:(S(0),B)"));
  }
  OFS_ASSIGN_OR_RETURN(TensorDesc desc, TensorDesc::Parse(t.substr(0, close + 1)));
  OFS_ASSIGN_OR_RETURN(NdSbp nd, NdSbp::Parse(t.substr(close + 2)));
  return InferInput{std::move(desc), nd};
}

namespace {

// `status` as kInvalidArgument with `context` before its message; OK stays OK.
absl::Status InvalidWithContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::InvalidArgumentError(absl::StrCat(context, status.message()));
}

// The attributes by name (sorted, so that the first bad one is always the
// same), in the typed name's terms.
absl::StatusOr<AttrMap> Attrs(const InferRequestSpec& spec) {
  std::map<std::string, const absl::StatusOr<AttrValue>*> sorted;
  for (const auto& [name, value] : spec.attrs) sorted[name] = &value;
  AttrMap attrs;
  for (const auto& [name, value] : sorted) {
    OFS_RETURN_IF_ERROR(value->status());
    attrs.Set(name, **value);
  }
  return attrs;
}

// The input's value, or its error naming the op, its position and its name.
absl::StatusOr<InferInput> InputValue(const InferRequestSpec::Input& in, absl::string_view op,
                                      int position) {
  OFS_RETURN_IF_ERROR(InvalidWithContext(
      in.value.status(), absl::StrCat(op, ": input #", position,
                                      in.bn ? absl::StrCat(" (", *in.bn, ")") : "", ": ")));
  return *in.value;
}

// Arg index of a named input: "gamma" or "gamma_0" style names.
int ArgOfName(const OpDef& def, const std::string& name, int* index) {
  const int direct = def.FindInput(name);
  if (direct >= 0) {
    *index = -1;
    return direct;
  }
  const size_t us = name.rfind('_');
  if (us == std::string::npos) return -1;
  const int arg = def.FindInput(name.substr(0, us));
  int k = 0;
  if (arg < 0 || !absl::SimpleAtoi(name.substr(us + 1), &k) || k < 0) return -1;
  *index = k;
  return arg;
}

// The inputs in blob order, and how many of them each declared arg has.
struct OrderedInputs {
  std::vector<InferInput> inputs;
  std::vector<int> counts;
};

absl::StatusOr<OrderedInputs> UnnamedInputs(const InferRequestSpec& spec, const OpDef& def,
                                            absl::string_view op) {
  const int n = static_cast<int>(spec.inputs.size());
  OFS_ASSIGN_OR_RETURN(std::vector<int> counts, OpCall::DeduceInputCounts(def, n));
  OrderedInputs ordered{std::vector<InferInput>(n), std::move(counts)};
  for (int i = 0; i < n; ++i) {
    OFS_ASSIGN_OR_RETURN(ordered.inputs[i], InputValue(spec.inputs[i], op, i));
  }
  return ordered;
}

// Per declared arg, its named inputs keyed by their index within the arg.
using InputsByArg = std::vector<std::map<int, InferInput>>;

absl::StatusOr<InputsByArg> GroupInputsByArg(const InferRequestSpec& spec, const OpDef& def,
                                             absl::string_view op) {
  InputsByArg by_arg(def.inputs().size());
  for (int i = 0; i < static_cast<int>(spec.inputs.size()); ++i) {
    const std::string& bn = *spec.inputs[i].bn;
    int index = -1;
    const int arg = ArgOfName(def, bn, &index);
    if (arg < 0) {
      std::vector<std::string> names;
      for (const ArgDef& a : def.inputs()) names.push_back(a.name);
      return absl::InvalidArgumentError(absl::StrCat(op, ": no input named '", bn,
                                                     "'; inputs are ", absl::StrJoin(names, ", ")));
    }
    if (index < 0) index = static_cast<int>(by_arg[arg].size());
    OFS_ASSIGN_OR_RETURN(InferInput in, InputValue(spec.inputs[i], op, i));
    if (!by_arg[arg].emplace(index, std::move(in)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input ", def.inputs()[arg].name, "_", index, " is given twice"));
    }
  }
  return by_arg;
}

absl::StatusOr<OrderedInputs> NamedInputs(const InferRequestSpec& spec, const OpDef& def,
                                          absl::string_view op) {
  // Group by arg, then order by declared arg and index.
  OFS_ASSIGN_OR_RETURN(InputsByArg by_arg, GroupInputsByArg(spec, def, op));
  OrderedInputs ordered;
  for (size_t a = 0; a < by_arg.size(); ++a) {
    int expect = 0;
    for (const auto& [index, in] : by_arg[a]) {
      if (index != expect++) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": inputs of ", def.inputs()[a].name, " must be numbered 0, 1, ..."));
      }
      ordered.inputs.push_back(in);
    }
    ordered.counts.push_back(static_cast<int>(by_arg[a].size()));
  }
  return ordered;
}

absl::StatusOr<OrderedInputs> Inputs(const InferRequestSpec& spec, const OpDef& def,
                                     absl::string_view op) {
  // Inputs: either all named or none.
  const int n = static_cast<int>(spec.inputs.size());
  const int named = static_cast<int>(std::count_if(
      spec.inputs.begin(), spec.inputs.end(), [](const auto& in) { return in.bn.has_value(); }));
  if (named != 0 && named != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": name every input (bn=...) or none; ", named, " of ", n, " are named"));
  }
  return named == 0 ? UnnamedInputs(spec, def, op) : NamedInputs(spec, def, op);
}

// Empty when the request constrains nothing, else one entry per blob of `call`.
absl::StatusOr<std::vector<std::optional<NdSbp>>> Constraints(const InferRequestSpec& spec,
                                                              const OpCall& call,
                                                              absl::string_view op) {
  std::vector<std::optional<NdSbp>> constraints;
  if (spec.constraints.empty()) return constraints;
  constraints.resize(call.num_blobs());
  std::map<std::string, const absl::StatusOr<NdSbp>*> sorted;
  for (const auto& [bn, nd] : spec.constraints) sorted[bn] = &nd;
  for (const auto& [bn, nd] : sorted) {
    const int b = call.BlobIndexOf(bn);
    if (b < 0) {
      std::vector<std::string> bns;
      for (int i = 0; i < call.num_blobs(); ++i) bns.push_back(call.bn(i));
      return absl::InvalidArgumentError(absl::StrCat(op, ": constraint on unknown blob ",
                                                     QuotedInput(bn), "; blobs are ",
                                                     absl::StrJoin(bns, ", ")));
    }
    OFS_RETURN_IF_ERROR(
        InvalidWithContext(nd->status(), absl::StrCat(op, ": constraint on ", bn, ": ")));
    constraints[b] = **nd;
  }
  return constraints;
}

}  // namespace

absl::StatusOr<InferRequest> BuildInferRequest(const InferRequestSpec& spec,
                                               const OpRegistry& registry) {
  if (spec.op.empty()) return absl::InvalidArgumentError("request names no op (op_type_name)");
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpDef> def, registry.Get(spec.op));
  const std::string& op = def->type_name();
  OFS_ASSIGN_OR_RETURN(AttrMap typed, Attrs(spec));
  // The request may name an alias with attributes in its own names.
  OFS_ASSIGN_OR_RETURN(ResolvedCall resolved, registry.ResolveCall(spec.op, typed));
  InferRequest req;
  if (!spec.placement.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": request has no placement (e.g. \"cpu:0-3 [2,2]\")"));
  }
  OFS_ASSIGN_OR_RETURN(req.placement, *spec.placement);
  OFS_ASSIGN_OR_RETURN(OrderedInputs inputs, Inputs(spec, *def, op));
  OFS_ASSIGN_OR_RETURN(req.op, OpCall::Make(def, inputs.counts, resolved.attrs));
  req.inputs = std::move(inputs.inputs);
  OFS_ASSIGN_OR_RETURN(req.constraints, Constraints(spec, *req.op, op));
  if (spec.cost_policy) {
    if (spec.cost_policy->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": cost_policy is empty"));
    }
    req.cost.policy = PolicyName::Of(*spec.cost_policy);
  }
  OFS_RETURN_IF_ERROR(InvalidWithContext(spec.partial_penalty.status(), absl::StrCat(op, ": ")));
  req.cost.partial_penalty = *spec.partial_penalty;
  req.explain = spec.explain;
  return req;
}

}  // namespace oneflow_sbp
