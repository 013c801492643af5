#include "importers/onnx_graph.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::importers {

absl::Status In(absl::string_view where, const absl::Status& s) {
  return s.ok() ? s : absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
}

absl::StatusOr<DataType> FromOnnxType(int type) {
  switch (type) {
    case onnx::TensorProto::FLOAT: return DataType::kFloat32;
    case onnx::TensorProto::DOUBLE: return DataType::kFloat64;
    case onnx::TensorProto::FLOAT16: return DataType::kFloat16;
    case onnx::TensorProto::BFLOAT16: return DataType::kBFloat16;
    case onnx::TensorProto::INT64: return DataType::kInt64;
    case onnx::TensorProto::INT32: return DataType::kInt32;
    case onnx::TensorProto::INT8: return DataType::kInt8;
    case onnx::TensorProto::UINT8: return DataType::kUInt8;
    case onnx::TensorProto::BOOL: return DataType::kBool;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "element type ", type, " (",
          onnx::TensorProto::DataType_IsValid(type)
              ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(type))
              : std::string("unknown"),
          ") is not supported"));
  }
}

void OnnxGraph::Define(const std::string& name, TensorDesc desc,
                       std::optional<LocalTensor> constant) {
  OnnxValue v;
  v.desc = std::move(desc);
  v.constant = std::move(constant);
  values_[name] = std::move(v);
}

void OnnxGraph::DefineInitializer(const std::string& name, TensorDesc desc,
                                  std::optional<LocalTensor> data) {
  OnnxValue v;
  v.desc = std::move(desc);
  v.weightless = !data.has_value();
  v.constant = std::move(data);
  v.initializer = true;
  values_[name] = std::move(v);
}

absl::Status OnnxGraph::DefineInput(const std::string& name, TensorDesc desc) {
  OFS_ASSIGN_OR_RETURN(const Placement placement, Placement::Parse(options_.placement));
  oneflow::ProgramTensorProto* p = out_->program.add_tensors();
  p->set_name(name);
  for (int64_t d : desc.shape.dims()) p->add_shape(d);
  p->set_dtype(std::string(DataTypeName(desc.dtype)));
  p->set_nd_sbp(NdSbp::Repeat(SbpParallel::Broadcast(), placement.num_axes()).ToString());
  in_program_.insert(name);
  Define(name, std::move(desc), std::nullopt);
  return absl::OkStatus();
}

const OnnxValue* OnnxGraph::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

absl::StatusOr<const OnnxValue*> OnnxGraph::Input(const onnx::NodeProto& node, int i) const {
  if (!HasInput(node, i)) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  const OnnxValue* v = Find(node.input(i));
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("input ", node.input(i), " is never defined"));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> OnnxGraph::ConstInts(const onnx::NodeProto& node,
                                                          int i) const {
  OFS_ASSIGN_OR_RETURN(const OnnxValue* v, Input(node, i));
  if (!v->constant) {
    return absl::UnimplementedError(absl::StrCat(
        "input ", node.input(i), " must be a constant known at import (it is computed)"));
  }
  std::vector<int64_t> out;
  for (int64_t k = 0; k < v->constant->elem_cnt(); ++k) {
    out.push_back(static_cast<int64_t>(v->constant->GetDouble(k)));
  }
  return out;
}

const onnx::AttributeProto* OnnxGraph::Attr(const onnx::NodeProto& node, absl::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t OnnxGraph::AttrInt(const onnx::NodeProto& node, absl::string_view name, int64_t dflt) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a == nullptr ? dflt : a->i();
}

double OnnxGraph::AttrFloat(const onnx::NodeProto& node, absl::string_view name, double dflt) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a == nullptr ? dflt : a->f();
}

std::vector<int64_t> OnnxGraph::AttrInts(const onnx::NodeProto& node, absl::string_view name) {
  const onnx::AttributeProto* a = Attr(node, name);
  if (a == nullptr) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string OnnxGraph::Temp(const onnx::NodeProto& node, absl::string_view what) {
  return absl::StrCat(node.output(0), "/", what);
}

absl::Status OnnxGraph::Materialize(const std::string& name) {
  if (in_program_.contains(name)) return absl::OkStatus();
  const OnnxValue& v = values_.at(name);
  oneflow::ProgramTensorProto* p = out_->program.add_tensors();
  p->set_name(name);
  for (int64_t d : v.desc.shape.dims()) p->add_shape(d);
  p->set_dtype(std::string(DataTypeName(v.desc.dtype)));
  if (!v.initializer) {
    OFS_ASSIGN_OR_RETURN(const Placement placement, Placement::Parse(options_.placement));
    p->set_nd_sbp(NdSbp::Repeat(SbpParallel::Broadcast(), placement.num_axes()).ToString());
  }
  if (v.constant) {
    out_->weights.emplace_back(name, *v.constant);
  } else if (v.weightless) {
    out_->weightless.push_back(name);
  } else {
    return absl::InternalError(absl::StrCat(name, " is neither an input nor a constant"));
  }
  in_program_.insert(name);
  return absl::OkStatus();
}

absl::Status OnnxGraph::Emit(const std::string& op, const std::vector<std::string>& inputs,
                             const std::vector<std::string>& outputs,
                             const std::vector<std::pair<std::string, AttrValue>>& attrs,
                             const std::string& label) {
  const OpRegistry& registry =
      options_.registry != nullptr ? *options_.registry : OpRegistry::Global();
  std::shared_ptr<const OpDef> def = registry.Find(op);
  if (def == nullptr) return absl::InternalError(absl::StrCat("catalog op ", op, " is missing"));
  AttrMap map;
  for (const auto& [name, value] : attrs) map.Set(name, value);
  std::vector<TensorDesc> descs;
  for (const std::string& in : inputs) {
    const OnnxValue* v = Find(in);
    if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat(in, " is never defined"));
    descs.push_back(v->desc);
  }
  OFS_ASSIGN_OR_RETURN(std::vector<int> counts,
                       OpCall::DeduceInputCounts(*def, static_cast<int>(inputs.size())));
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpCall> call, OpCall::Make(def, counts, map));
  OFS_ASSIGN_OR_RETURN(std::vector<TensorDesc> outs, call->InferOutputDescs(descs));
  if (outputs.size() > outs.size()) {
    return absl::InternalError(absl::StrCat(op, " has ", outs.size(), " outputs, not ",
                                            outputs.size()));
  }
  for (const std::string& in : inputs) OFS_RETURN_IF_ERROR(Materialize(in));
  oneflow::ProgramOpProto* p = out_->program.add_ops();
  p->set_op(op);
  p->set_name(label);
  for (const std::string& in : inputs) p->add_inputs(in);
  for (const auto& [name, value] : attrs) {
    google::protobuf::Value& j = (*p->mutable_attrs())[name];
    switch (value.type()) {
      case AttrType::kBool: j.set_bool_value(value.b()); break;
      case AttrType::kInt: j.set_number_value(static_cast<double>(value.i())); break;
      case AttrType::kFloat: j.set_number_value(value.f()); break;
      case AttrType::kString: j.set_string_value(value.s()); break;
      case AttrType::kInts:
        for (int64_t x : value.ints()) {
          j.mutable_list_value()->add_values()->set_number_value(static_cast<double>(x));
        }
        break;
    }
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    p->add_outputs(outputs[o]);
    Define(outputs[o], outs[o], std::nullopt);
    in_program_.insert(outputs[o]);
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::importers
