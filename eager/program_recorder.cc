#include "eager/program_recorder.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::eager {

void ProgramRecorder::Name(const GlobalTensor& t, std::string name) {
  names_[t.value_id()] = std::move(name);
  keep_alive_.push_back(t);
}

const std::string& ProgramRecorder::NameOf(const GlobalTensor& t, bool produced,
                                           const std::string& fallback) {
  auto it = index_.find(t.value_id());
  if (it != index_.end()) return tensors_[it->second].name;
  auto named = names_.find(t.value_id());
  Tensor rec;
  rec.name = named != names_.end() ? named->second : fallback;
  rec.desc = t.desc();
  rec.nd_sbp = t.nd_sbp();
  rec.parameter = !produced && t.requires_grad();
  rec.produced = produced;
  index_.emplace(t.value_id(), static_cast<int>(tensors_.size()));
  tensors_.push_back(std::move(rec));
  keep_alive_.push_back(t);
  return tensors_.back().name;
}

const std::string* ProgramRecorder::FindName(const GlobalTensor& t) const {
  auto it = index_.find(t.value_id());
  return it == index_.end() ? nullptr : &tensors_[it->second].name;
}

void ProgramRecorder::Record(const OpCall& call, absl::Span<const GlobalTensor> inputs,
                             absl::Span<const GlobalTensor> outputs) {
  Op op;
  op.type = call.type_name();
  op.attrs = call.attrs();
  const int index = static_cast<int>(ops_.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    op.inputs.push_back(NameOf(inputs[i], false, absl::StrCat("input", tensors_.size())));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int blob = call.num_inputs() + static_cast<int>(i);
    op.outputs.push_back(NameOf(outputs[i], true, absl::StrCat(index, ".", call.bn(blob))));
  }
  ops_.push_back(std::move(op));
}

}  // namespace oneflow_sbp::eager
