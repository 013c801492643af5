#include "graph/program.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::graph {

absl::string_view TensorRoleName(TensorRole role) {
  switch (role) {
    case TensorRole::kFixed: return "fixed";
    case TensorRole::kFree: return "free";
    case TensorRole::kActivation: return "activation";
  }
  return "?";
}

int Program::FindTensor(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

std::vector<int> Program::FreeTensors() const {
  std::vector<int> ids;
  for (int t = 0; t < static_cast<int>(tensors_.size()); ++t) {
    if (tensors_[t].role == TensorRole::kFree) ids.push_back(t);
  }
  return ids;
}

ProgramBuilder::ProgramBuilder(const OpRegistry& registry, Placement placement)
    : registry_(registry) {
  program_.placement_ = std::move(placement);
}

absl::Status ProgramBuilder::AddTensor(absl::string_view name, ProgramTensor tensor) {
  if (name.empty()) return absl::InvalidArgumentError("program: a tensor has an empty name");
  const int id = static_cast<int>(program_.tensors_.size());
  if (!program_.by_name_.emplace(std::string(name), id).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("program: tensor ", QuotedInput(name), " is defined twice"));
  }
  tensor.name = std::string(name);
  program_.tensors_.push_back(std::move(tensor));
  user_named_.push_back(true);
  return absl::OkStatus();
}

absl::Status ProgramBuilder::AddInput(absl::string_view name, TensorDesc desc, NdSbp nd_sbp,
                                      bool parameter) {
  absl::Status valid = ValidateNdSbp(nd_sbp, desc.shape, program_.placement_.hierarchy());
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("program: tensor ", QuotedInput(name), " ",
                                                   desc.ToString(), " on ",
                                                   program_.placement_.ToString(), ": ",
                                                   valid.message()));
  }
  ProgramTensor t;
  t.desc = std::move(desc);
  t.role = TensorRole::kFixed;
  t.nd_sbp = nd_sbp;
  t.parameter = parameter;
  return AddTensor(name, std::move(t));
}

absl::Status ProgramBuilder::AddParameter(absl::string_view name, TensorDesc desc) {
  ProgramTensor t;
  t.desc = std::move(desc);
  t.role = TensorRole::kFree;
  return AddTensor(name, std::move(t));
}

absl::Status ProgramBuilder::AddOp(absl::string_view type, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs,
                                   const AttrMap& attrs, absl::string_view label) {
  const int index = static_cast<int>(program_.ops_.size());
  ProgramOp op;
  op.label = label.empty() ? absl::StrCat("op ", index, " (", type, ")") : std::string(label);
  auto fail = [&op](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(UnquotedInput(op.label), ": ", why));
  };
  if (labels_.contains(op.label)) return fail("another op has this name");
  // `type` may be an alias naming attributes its own way (OpRegistry::ResolveCall).
  absl::StatusOr<ResolvedCall> resolved = registry_.ResolveCall(type, attrs);
  if (!resolved.ok()) return fail(resolved.status().message());
  const std::shared_ptr<const OpDef>& def = resolved->def;
  std::vector<TensorDesc> input_descs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int t = program_.FindTensor(inputs[i]);
    if (t < 0) {
      return fail(absl::StrCat("input ", i, " ", QuotedInput(inputs[i]),
                               " is not defined before this op (list it under \"tensors\" or "
                               "define it by an earlier op)"));
    }
    op.inputs.push_back(t);
    input_descs.push_back(program_.tensors_[t].desc);
  }
  absl::StatusOr<std::vector<int>> counts =
      OpCall::DeduceInputCounts(*def, static_cast<int>(inputs.size()));
  if (!counts.ok()) return fail(counts.status().message());
  absl::StatusOr<std::shared_ptr<const OpCall>> call = OpCall::Make(def, *counts, resolved->attrs);
  if (!call.ok()) return fail(call.status().message());
  op.call = *std::move(call);
  absl::StatusOr<std::vector<TensorDesc>> out_descs = op.call->InferOutputDescs(input_descs);
  if (!out_descs.ok()) return fail(out_descs.status().message());
  const int num_outputs = op.call->num_outputs();
  if (static_cast<int>(outputs.size()) > num_outputs) {
    return fail(absl::StrCat("names ", outputs.size(), " outputs but ", type, " has ",
                             num_outputs));
  }
  for (int o = 0; o < num_outputs; ++o) {
    const int blob = op.call->num_inputs() + o;
    ProgramTensor t;
    t.desc = (*out_descs)[o];
    t.role = TensorRole::kActivation;
    t.producer = index;
    t.producer_blob = blob;
    const bool named = o < static_cast<int>(outputs.size()) && !outputs[o].empty();
    const std::string name = named ? outputs[o] : absl::StrCat(op.label, ":", op.call->bn(blob));
    absl::Status s = AddTensor(name, std::move(t));
    if (!s.ok()) return fail(absl::StrCat("output ", QuotedInput(name), " is already defined"));
    user_named_.back() = named;
    op.outputs.push_back(static_cast<int>(program_.tensors_.size()) - 1);
  }
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    program_.tensors_[op.inputs[i]].uses.push_back(TensorUse{index, static_cast<int>(i)});
  }
  labels_.insert(op.label);
  program_.ops_.push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status ProgramBuilder::MarkOutput(absl::string_view name, std::optional<NdSbp> nd_sbp) {
  const int t = program_.FindTensor(name);
  if (t < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("program: output ", QuotedInput(name), " is not a tensor of the program"));
  }
  if (marked_.contains(t)) {
    return absl::InvalidArgumentError(
        absl::StrCat("program: output ", QuotedInput(name), " is listed twice"));
  }
  if (nd_sbp.has_value()) {
    const ProgramTensor& tensor = program_.tensors_[t];
    absl::Status valid =
        ValidateNdSbp(*nd_sbp, tensor.desc.shape, program_.placement_.hierarchy());
    if (!valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("program: output ", QuotedInput(name), " ",
                                                     tensor.desc.ToString(), ": ",
                                                     valid.message()));
    }
  }
  marked_.insert(t);
  program_.outputs_.push_back(ProgramOutput{t, nd_sbp});
  return absl::OkStatus();
}

absl::StatusOr<Program> ProgramBuilder::Build() && {
  if (program_.ops_.empty()) return absl::InvalidArgumentError("program: it has no ops");
  if (program_.outputs_.empty()) {
    for (int t = 0; t < static_cast<int>(program_.tensors_.size()); ++t) {
      const ProgramTensor& tensor = program_.tensors_[t];
      if (tensor.role == TensorRole::kActivation && tensor.uses.empty() && user_named_[t]) {
        program_.outputs_.push_back(ProgramOutput{t, std::nullopt});
      }
    }
  }
  return std::move(program_);
}

}  // namespace oneflow_sbp::graph
