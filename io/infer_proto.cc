#include "io/infer_proto.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "io/proto_convert.h"
#include "oneflow_sbp/inference/copy_cost.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/inference/policy_name.h"

namespace oneflow_sbp::io {

absl::StatusOr<InferInput> ParseInferInput(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  const size_t close = t.find(']');
  if (close == absl::string_view::npos || close + 1 >= t.size() || t[close + 1] != ':') {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed input ", QuotedInput(text),
        ": expected <dtype>[<dims>]:<nd_sbp>, e.g. f32[64,32]:(S(0),B)"));
  }
  absl::StatusOr<TensorDesc> desc = TensorDesc::Parse(t.substr(0, close + 1));
  if (!desc.ok()) return desc.status();
  absl::StatusOr<NdSbp> nd = NdSbp::Parse(t.substr(close + 2));
  if (!nd.ok()) return nd.status();
  return InferInput{*std::move(desc), *nd};
}

namespace {

absl::StatusOr<AttrValue> FromProto(const oneflow::AttrValueProto& v, absl::string_view op,
                                    absl::string_view name) {
  switch (v.value_case()) {
    case oneflow::AttrValueProto::kI: return AttrValue(v.i());
    case oneflow::AttrValueProto::kF: return AttrValue(v.f());
    case oneflow::AttrValueProto::kB: return AttrValue(v.b());
    case oneflow::AttrValueProto::kS: return AttrValue(v.s());
    case oneflow::AttrValueProto::kInts:
      return AttrValue(std::vector<int64_t>(v.ints().value().begin(), v.ints().value().end()));
    case oneflow::AttrValueProto::VALUE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": attribute ", QuotedInput(name), " has no value"));
}

absl::StatusOr<InferInput> InputFromProto(const oneflow::InferInputProto& in,
                                          absl::string_view op, int position) {
  absl::StatusOr<InferInput> parsed;
  if (in.has_tensor()) {
    parsed = ParseInferInput(in.tensor());
  } else if (in.has_shape() && in.has_data_type() && in.has_nd_sbp()) {
    absl::StatusOr<Shape> shape = oneflow_sbp::io::FromProto(in.shape());
    absl::StatusOr<DataType> dtype = oneflow_sbp::io::FromProto(in.data_type());
    absl::StatusOr<NdSbp> nd = oneflow_sbp::io::FromProto(in.nd_sbp());
    if (!shape.ok()) parsed = shape.status();
    else if (!dtype.ok()) parsed = dtype.status();
    else if (!nd.ok()) parsed = nd.status();
    else {
      TensorDesc desc{*shape, *dtype};
      absl::StatusOr<int64_t> bytes = CheckedByteSize(desc.shape, ByteSizeOf(desc.dtype));
      parsed = bytes.ok() ? absl::StatusOr<InferInput>(InferInput{desc, *nd})
                          : absl::StatusOr<InferInput>(bytes.status());
    }
  } else {
    parsed = absl::InvalidArgumentError(
        "give `tensor` (e.g. \"f32[64,32]:(S(0),B)\") or shape, data_type and nd_sbp");
  }
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": input #", position, in.has_bn() ? absl::StrCat(" (", in.bn(), ")") : "",
        ": ", parsed.status().message()));
  }
  return parsed;
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

absl::StatusOr<AttrMap> AttrsFromProto(const oneflow::InferRequestProto& proto,
                                       absl::string_view op) {
  AttrMap attrs;
  std::map<std::string, oneflow::AttrValueProto> sorted(proto.attr().begin(),
                                                        proto.attr().end());
  for (const auto& [name, value] : sorted) {
    absl::StatusOr<AttrValue> v = FromProto(value, op, name);
    if (!v.ok()) return v.status();
    attrs.Set(name, *v);
  }
  return attrs;
}

absl::StatusOr<Placement> PlacementFromRequest(const oneflow::InferRequestProto& proto,
                                               absl::string_view op) {
  if (proto.has_parallel_conf()) return oneflow_sbp::io::FromProto(proto.parallel_conf());
  if (proto.has_placement()) return Placement::Parse(proto.placement());
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": request has no placement (e.g. \"cpu:0-3 [2,2]\")"));
}

// The inputs in blob order, and how many of them each declared arg has.
struct OrderedInputs {
  std::vector<InferInput> inputs;
  std::vector<int> counts;
};

absl::StatusOr<OrderedInputs> UnnamedInputs(const oneflow::InferRequestProto& proto,
                                            const OpDef& def, absl::string_view op) {
  const int n = proto.input_size();
  absl::StatusOr<std::vector<int>> counts = OpCall::DeduceInputCounts(def, n);
  if (!counts.ok()) return counts.status();
  OrderedInputs ordered{std::vector<InferInput>(n), *counts};
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<InferInput> in = InputFromProto(proto.input(i), op, i);
    if (!in.ok()) return in.status();
    ordered.inputs[i] = *in;
  }
  return ordered;
}

// Per declared arg, its named inputs keyed by their index within the arg.
using InputsByArg = std::vector<std::map<int, InferInput>>;

absl::StatusOr<InputsByArg> GroupInputsByArg(const oneflow::InferRequestProto& proto,
                                             const OpDef& def, absl::string_view op) {
  InputsByArg by_arg(def.inputs().size());
  for (int i = 0; i < proto.input_size(); ++i) {
    int index = -1;
    const int arg = ArgOfName(def, proto.input(i).bn(), &index);
    if (arg < 0) {
      std::vector<std::string> names;
      for (const ArgDef& a : def.inputs()) names.push_back(a.name);
      return absl::InvalidArgumentError(absl::StrCat(op, ": no input named '", proto.input(i).bn(),
                                                     "'; inputs are ", absl::StrJoin(names, ", ")));
    }
    if (index < 0) index = static_cast<int>(by_arg[arg].size());
    absl::StatusOr<InferInput> in = InputFromProto(proto.input(i), op, i);
    if (!in.ok()) return in.status();
    if (!by_arg[arg].emplace(index, *in).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input ", def.inputs()[arg].name, "_", index, " is given twice"));
    }
  }
  return by_arg;
}

absl::StatusOr<OrderedInputs> NamedInputs(const oneflow::InferRequestProto& proto, const OpDef& def,
                                          absl::string_view op) {
  // Group by arg, then order by declared arg and index.
  absl::StatusOr<InputsByArg> by_arg = GroupInputsByArg(proto, def, op);
  if (!by_arg.ok()) return by_arg.status();
  OrderedInputs ordered;
  for (size_t a = 0; a < by_arg->size(); ++a) {
    int expect = 0;
    for (const auto& [index, in] : (*by_arg)[a]) {
      if (index != expect++) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": inputs of ", def.inputs()[a].name, " must be numbered 0, 1, ..."));
      }
      ordered.inputs.push_back(in);
    }
    ordered.counts.push_back(static_cast<int>((*by_arg)[a].size()));
  }
  return ordered;
}

absl::StatusOr<OrderedInputs> InputsFromRequest(const oneflow::InferRequestProto& proto,
                                                const OpDef& def, absl::string_view op) {
  // Inputs: either all named or none.
  const int n = proto.input_size();
  int named = 0;
  for (const auto& in : proto.input()) named += in.has_bn() ? 1 : 0;
  if (named != 0 && named != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": name every input (bn=...) or none; ", named, " of ", n, " are named"));
  }
  return named == 0 ? UnnamedInputs(proto, def, op) : NamedInputs(proto, def, op);
}

// Empty when the request constrains nothing, else one entry per blob of `call`.
absl::StatusOr<std::vector<std::optional<NdSbp>>> ConstraintsFromRequest(
    const oneflow::InferRequestProto& proto, const OpCall& call, absl::string_view op) {
  std::vector<std::optional<NdSbp>> constraints;
  if (proto.constraint().empty()) return constraints;
  constraints.resize(call.num_blobs());
  std::map<std::string, oneflow::NdSbp> sorted_constraints(proto.constraint().begin(),
                                                           proto.constraint().end());
  for (const auto& [bn, nd_proto] : sorted_constraints) {
    const int b = call.BlobIndexOf(bn);
    if (b < 0) {
      std::vector<std::string> bns;
      for (int i = 0; i < call.num_blobs(); ++i) bns.push_back(call.bn(i));
      return absl::InvalidArgumentError(absl::StrCat(op, ": constraint on unknown blob ", QuotedInput(bn),
                                                     "; blobs are ", absl::StrJoin(bns, ", ")));
    }
    absl::StatusOr<NdSbp> nd = oneflow_sbp::io::FromProto(nd_proto);
    if (!nd.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": constraint on ", bn, ": ", nd.status().message()));
    }
    constraints[b] = *nd;
  }
  return constraints;
}

absl::StatusOr<CostOptions> CostFromRequest(const oneflow::InferRequestProto& proto,
                                            absl::string_view op) {
  CostOptions cost;
  // The name is resolved by the Engine, which knows the registered policies.
  if (proto.has_cost_policy()) {
    if (proto.cost_policy().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": cost_policy is empty"));
    }
    cost.policy = PolicyName::Of(proto.cost_policy());
  }
  absl::StatusOr<PartialPenalty> penalty = PartialPenaltyFromNumber(proto.partial_penalty_policy());
  if (!penalty.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", penalty.status().message()));
  }
  cost.partial_penalty = *penalty;
  return cost;
}

}  // namespace

absl::StatusOr<InferRequest> InferRequestFromProto(const oneflow::InferRequestProto& proto,
                                                   const OpRegistry& registry) {
  if (proto.op_type_name().empty()) {
    return absl::InvalidArgumentError("request names no op (op_type_name)");
  }
  absl::StatusOr<std::shared_ptr<const OpDef>> def = registry.Get(proto.op_type_name());
  if (!def.ok()) return def.status();
  const std::string& op = (*def)->type_name();

  absl::StatusOr<AttrMap> typed = AttrsFromProto(proto, op);
  if (!typed.ok()) return typed.status();
  // The request may name an alias with attributes in its own names.
  absl::StatusOr<ResolvedCall> resolved = registry.ResolveCall(proto.op_type_name(), *typed);
  if (!resolved.ok()) return resolved.status();
  const AttrMap* attrs = &resolved->attrs;
  InferRequest req;
  absl::StatusOr<Placement> placement = PlacementFromRequest(proto, op);
  if (!placement.ok()) return placement.status();
  req.placement = *placement;
  absl::StatusOr<OrderedInputs> inputs = InputsFromRequest(proto, **def, op);
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<std::shared_ptr<const OpCall>> call = OpCall::Make(*def, inputs->counts, *attrs);
  if (!call.ok()) return call.status();
  req.op = *call;
  req.inputs = std::move(inputs->inputs);

  absl::StatusOr<std::vector<std::optional<NdSbp>>> constraints =
      ConstraintsFromRequest(proto, *req.op, op);
  if (!constraints.ok()) return constraints.status();
  req.constraints = *std::move(constraints);
  absl::StatusOr<CostOptions> cost = CostFromRequest(proto, op);
  if (!cost.ok()) return cost.status();
  req.cost = *cost;
  req.explain = proto.explain();
  return req;
}

oneflow::NdSbpSignature NdSbpSignatureToProto(const OpCall& call,
                                              const NdSbpSignature& signature) {
  oneflow::NdSbpSignature proto;
  for (int b = 0; b < call.num_blobs(); ++b) {
    (*proto.mutable_bn_in_op2nd_sbp())[call.bn(b)] = ToProto(signature[b]);
  }
  return proto;
}

oneflow::InferResultProto InferResultToProto(const InferRequest& request,
                                             const InferResult& result) {
  const OpCall& call = *request.op;
  oneflow::InferResultProto proto;
  proto.set_op_type_name(call.type_name());
  proto.set_placement(request.placement.ToString());
  *proto.mutable_parallel_conf() = ToProto(request.placement);
  *proto.mutable_nd_sbp_signature() = NdSbpSignatureToProto(call, result.signature);
  proto.set_signature(SignatureToString(call, result.signature));
  for (int b = 0; b < call.num_blobs(); ++b) {
    const bool is_input = b < call.num_inputs();
    const TensorDesc& desc =
        is_input ? request.inputs[b].desc() : result.output_descs[b - call.num_inputs()];
    oneflow::BlobResultProto* blob = is_input ? proto.add_inputs() : proto.add_outputs();
    blob->set_bn(call.bn(b));
    *blob->mutable_shape() = ToProto(desc.shape);
    blob->set_data_type(ToProto(desc.dtype));
    blob->set_dtype(std::string(DataTypeName(desc.dtype)));
    *blob->mutable_nd_sbp() = ToProto(result.signature[b]);
    blob->set_nd_sbp_str(result.signature[b].ToString());
    if (is_input) {
      const NdSbp& producer = request.inputs[b].nd_sbp();
      *blob->mutable_producer_nd_sbp() = ToProto(producer);
      blob->set_producer_nd_sbp_str(producer.ToString());
      blob->set_needs_boxing(producer != result.signature[b]);
    }
  }
  proto.set_cost_policy(request.cost.policy.str());
  proto.set_used_broadcast_fallback(result.used_broadcast_fallback);
  proto.set_num_candidates(result.num_candidates);
  for (const CandidateRecord& rec : result.candidates) {
    oneflow::CandidateProto* c = proto.add_candidates();
    c->set_signature(SignatureToString(call, rec.signature));
    c->set_order_value(rec.order_value);
    // Unsupported prints as OneFlow's sentinel, FLT_MAX, which readers
    // already know (and `unsupported` says it plainly).
    c->set_copy_cost(rec.copy_cost.ValueOrFltMax());
    if (!rec.copy_cost.supported()) c->set_unsupported(true);
    c->set_status(std::string(CandidateStatusName(rec.status)));
    c->set_rank(rec.rank);
    c->set_emission_index(rec.emission_index);
    c->set_mismatched_inputs(rec.mismatched_inputs);
    c->set_note(rec.note);
    c->set_final_position(rec.final_position);
  }
  return proto;
}

oneflow::OpDefProto OpDefToProto(const OpDef& def) {
  oneflow::OpDefProto proto;
  proto.set_op_type_name(def.type_name());
  for (const auto& [args, add] :
       {std::pair{&def.inputs(), &oneflow::OpDefProto::add_input},
        std::pair{&def.outputs(), &oneflow::OpDefProto::add_output}}) {
    for (const ArgDef& a : *args) {
      oneflow::ArgDefProto* p = (proto.*add)();
      p->set_name(a.name);
      if (a.variadic) p->set_variadic(true);
      if (a.optional) p->set_optional(true);
      if (a.is_mutable) p->set_is_mutable(true);
    }
  }
  for (const AttrDef& a : def.attrs()) {
    oneflow::AttrDefProto* p = proto.add_attr();
    p->set_name(a.name);
    p->set_type(std::string(AttrTypeName(a.type)));
    if (a.default_value) p->set_default_value(a.default_value->ToString());
  }
  proto.set_broadcast_fallback(def.uses_broadcast_fallback());
  if (def.extended_sbp_fn()) proto.set_extended_partials(true);
  if (!def.doc().empty()) proto.set_doc(def.doc());
  return proto;
}

}  // namespace oneflow_sbp::io