#include "io/infer_proto.h"

#include <map>
#include <memory>
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
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::io {

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

// A tensor given as text, or as shape, data_type and nd_sbp messages.
absl::StatusOr<InferInput> InputFromProto(const oneflow::InferInputProto& in) {
  if (in.has_tensor()) return ParseInferInput(in.tensor());
  if (!in.has_shape() || !in.has_data_type() || !in.has_nd_sbp()) {
    return absl::InvalidArgumentError(
        "give `tensor` (e.g. \"f32[64,32]:(S(0),B)\") or shape, data_type and nd_sbp");
  }
  OFS_ASSIGN_OR_RETURN(Shape shape, oneflow_sbp::io::FromProto(in.shape()));
  OFS_ASSIGN_OR_RETURN(DataType dtype, oneflow_sbp::io::FromProto(in.data_type()));
  OFS_ASSIGN_OR_RETURN(NdSbp nd, oneflow_sbp::io::FromProto(in.nd_sbp()));
  TensorDesc desc{std::move(shape), dtype};
  OFS_RETURN_IF_ERROR(CheckedByteSize(desc.shape, ByteSizeOf(desc.dtype)).status());
  return InferInput{std::move(desc), nd};
}

}  // namespace

InferRequestSpec InferRequestSpecFromProto(const oneflow::InferRequestProto& proto,
                                           const OpRegistry& registry) {
  InferRequestSpec spec;
  spec.op = proto.op_type_name();
  // Messages name the op as the registry does (BuildInferRequest refuses
  // an unknown one before it reads an attribute).
  const std::shared_ptr<const OpDef> def = registry.Find(spec.op);
  const std::string op = def != nullptr ? def->type_name() : spec.op;
  for (const auto& [name, value] : proto.attr()) spec.SetAttr(name, FromProto(value, op, name));
  if (proto.has_parallel_conf()) {
    spec.placement = oneflow_sbp::io::FromProto(proto.parallel_conf());
  } else if (proto.has_placement()) {
    spec.placement = Placement::Parse(proto.placement());
  }
  for (const oneflow::InferInputProto& in : proto.input()) {
    spec.inputs.push_back({in.has_bn() ? std::optional<std::string>(in.bn()) : std::nullopt,
                           InputFromProto(in)});
  }
  for (const auto& [bn, nd] : proto.constraint()) {
    spec.SetConstraint(bn, oneflow_sbp::io::FromProto(nd));
  }
  if (proto.has_cost_policy()) spec.cost_policy = proto.cost_policy();
  spec.partial_penalty = PartialPenaltyFromNumber(proto.partial_penalty_policy());
  spec.explain = proto.explain();
  return spec;
}

absl::StatusOr<InferRequest> InferRequestFromProto(const oneflow::InferRequestProto& proto,
                                                   const OpRegistry& registry) {
  return BuildInferRequest(InferRequestSpecFromProto(proto, registry), registry);
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