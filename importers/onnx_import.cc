#include "importers/onnx_import.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "importers/onnx.pb.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::importers {
namespace {

constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 21;

// TensorProto.DataType values this importer reads.
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
      return absl::InvalidArgumentError(absl::StrCat("element type ", type, " (",
          onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(type)),
          ") is not supported"));
  }
}

// `s` with "<where>: " before its message (an OK status unchanged).
absl::Status In(absl::string_view where, const absl::Status& s) {
  return s.ok() ? s : absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
}
template <typename T>
absl::StatusOr<T> In(absl::string_view where, absl::StatusOr<T> v) {
  if (v.ok()) return v;
  return In(where, v.status());
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// A value the graph defines: its descriptor, and its contents when known
// at import (an initializer, or a folded constant).
struct Value {
  TensorDesc desc;
  std::optional<LocalTensor> constant;
  bool is_weight = false;  // an initializer: a free tensor of the program
};

class Importer {
 public:
  Importer(const std::string& path, const ImportOptions& options)
      : path_(path), options_(options) {}

  absl::StatusOr<ImportedModel> Run(const std::string& bytes) {
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": not an ONNX model (the file does not parse as onnx.ModelProto; ",
          bytes.size(), " bytes: truncated or another format?)"));
    }
    if (!model.has_graph()) {
      return absl::InvalidArgumentError(absl::StrCat(path_, ": the ONNX model has no graph"));
    }
    for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
      if (id.domain().empty() || id.domain() == "ai.onnx") out_.opset = id.version();
    }
    if (out_.opset < kMinOpset || out_.opset > kMaxOpset) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": ONNX opset ", out_.opset, " is not supported (opsets ", kMinOpset, " to ",
          kMaxOpset, " are; re-export with opset_version in that range)"));
    }
    const onnx::GraphProto& g = model.graph();
    out_.program.set_placement(options_.placement);
    for (const onnx::TensorProto& t : g.initializer()) OFS_RETURN_IF_ERROR(AddInitializer(t));
    for (const onnx::ValueInfoProto& in : g.input()) {
      if (values_.contains(in.name())) continue;  // an initializer listed as input
      OFS_RETURN_IF_ERROR(AddGraphInput(in));
    }
    for (const onnx::NodeProto& node : g.node()) {
      OFS_RETURN_IF_ERROR(In(absl::StrCat(path_, ": node ", NodeName(node), " (",
                                          node.op_type(), ")"),
                             MapNode(node)));
    }
    for (const onnx::ValueInfoProto& o : g.output()) {
      auto it = values_.find(o.name());
      if (it == values_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ": graph output ", o.name(), " is never defined"));
      }
      if (it->second.constant && !it->second.is_weight) {
        return absl::UnimplementedError(absl::StrCat(
            path_, ": graph output ", o.name(), " is a constant folded at import"));
      }
      out_.program.add_outputs()->set_name(Renamed(o.name()));
    }
    return std::move(out_);
  }

 private:
  std::string NodeName(const onnx::NodeProto& node) const {
    return node.name().empty() ? absl::StrCat("#", node_index_) : node.name();
  }

  // Program tensor names: ONNX names may hold characters the program
  // format accepts anyway, so they are kept; empty names are refused.
  std::string Renamed(const std::string& name) const { return name; }

  absl::StatusOr<std::string> ReadExternal(const onnx::TensorProto& t) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      if ((e.key() == "offset" && !absl::SimpleAtoi(e.value(), &offset)) ||
          (e.key() == "length" && !absl::SimpleAtoi(e.value(), &length))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "initializer ", t.name(), ": external data ", e.key(), " '", e.value(),
            "' is not a number"));
      }
    }
    if (location.empty() || location.find("..") != std::string::npos || location[0] == '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer ", t.name(), ": external data location '", location,
          "' must be a file beside the model"));
    }
    const std::string file = absl::StrCat(Dirname(path_), "/", location);
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(absl::StrCat("initializer ", t.name(),
                                              ": missing weight file ", file));
    }
    in.seekg(0, std::ios::end);
    const int64_t size = in.tellg();
    if (length < 0) length = size - offset;
    if (offset < 0 || offset > size || length > size - offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer ", t.name(), ": external data [", offset, ", ", offset + length,
          ") is outside ", file, " (", size, " bytes): a missing or truncated weight"));
    }
    std::string data(static_cast<size_t>(length), '\0');
    in.seekg(offset);
    in.read(data.data(), length);
    return data;
  }

  absl::Status AddInitializer(const onnx::TensorProto& t) {
    if (t.name().empty()) return absl::InvalidArgumentError(path_ + ": an unnamed initializer");
    const std::string where = absl::StrCat(path_, ": initializer ", t.name());
    OFS_ASSIGN_OR_RETURN(const DataType dtype_value, In(where, FromOnnxType(t.data_type())));
    const DataType* dtype = &dtype_value;
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    Value v;
    v.desc.dtype = *dtype;
    OFS_ASSIGN_OR_RETURN(v.desc.shape, In(where, Shape::Make(dims)));
    v.is_weight = true;
    // Allocated only once the bytes are there: a header may claim any size.
    const int64_t want = v.desc.byte_size();
    std::string bytes;
    bool has_data = true;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      OFS_ASSIGN_OR_RETURN(bytes, In(path_, ReadExternal(t)));
    } else if (t.has_raw_data()) {
      bytes = t.raw_data();
    } else if (t.float_data_size() > 0 && *dtype == DataType::kFloat32) {
      bytes.assign(reinterpret_cast<const char*>(t.float_data().data()), t.float_data_size() * 4);
    } else if (t.int64_data_size() > 0 && *dtype == DataType::kInt64) {
      bytes.assign(reinterpret_cast<const char*>(t.int64_data().data()), t.int64_data_size() * 8);
    } else if (t.double_data_size() > 0 && *dtype == DataType::kFloat64) {
      bytes.assign(reinterpret_cast<const char*>(t.double_data().data()), t.double_data_size() * 8);
    } else if (t.int32_data_size() > 0 && *dtype == DataType::kInt32) {
      bytes.assign(reinterpret_cast<const char*>(t.int32_data().data()), t.int32_data_size() * 4);
    } else {
      has_data = want == 0;
    }
    if (has_data && static_cast<int64_t>(bytes.size()) != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": initializer ", t.name(), " ", v.desc.ToString(), " holds ", bytes.size(),
          " bytes, not ", want, ": a truncated weight"));
    }
    if (has_data) {
      OFS_ASSIGN_OR_RETURN(LocalTensor tensor, In(where, LocalTensor::Empty(*dtype, dims)));
      if (want > 0) std::memcpy(tensor.raw_data(), bytes.data(), bytes.size());
      v.constant = tensor;
      out_.weights.emplace_back(t.name(), tensor);
    } else {
      out_.weightless.push_back(t.name());
    }
    oneflow::ProgramTensorProto* p = out_.program.add_tensors();
    p->set_name(t.name());
    for (int64_t d : dims) p->add_shape(d);
    p->set_dtype(std::string(DataTypeName(*dtype)));
    values_[t.name()] = std::move(v);
    return absl::OkStatus();
  }

  absl::Status AddGraphInput(const onnx::ValueInfoProto& in) {
    const std::string where = absl::StrCat(path_, ": graph input ", in.name());
    if (!in.type().has_tensor_type()) {
      return absl::InvalidArgumentError(where + " is not a tensor");
    }
    const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
    OFS_ASSIGN_OR_RETURN(const DataType dtype_value, In(where, FromOnnxType(tt.elem_type())));
    const DataType* dtype = &dtype_value;
    std::vector<int64_t> dims;
    for (const onnx::TensorShapeProto::Dimension& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        dims.push_back(d.dim_value());
        continue;
      }
      auto it = options_.dims.find(d.dim_param());
      if (it == options_.dims.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": dimension '", d.dim_param(), "' has no value; give it with --dim=",
            d.dim_param().empty() ? "NAME" : d.dim_param(), "=N"));
      }
      dims.push_back(it->second);
    }
    Value v;
    v.desc.dtype = *dtype;
    OFS_ASSIGN_OR_RETURN(v.desc.shape, In(where, Shape::Make(dims)));
    oneflow::ProgramTensorProto* p = out_.program.add_tensors();
    p->set_name(in.name());
    for (int64_t d : dims) p->add_shape(d);
    p->set_dtype(std::string(DataTypeName(*dtype)));
    absl::StatusOr<Placement> placement = Placement::Parse(options_.placement);
    OFS_RETURN_IF_ERROR(placement.status());
    p->set_nd_sbp(NdSbp::Repeat(SbpParallel::Broadcast(), placement->num_axes()).ToString());
    values_[in.name()] = std::move(v);
    return absl::OkStatus();
  }

  // ---- helpers for mapping ----

  absl::StatusOr<const Value*> Input(const onnx::NodeProto& node, int i) {
    if (i >= node.input_size() || node.input(i).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
    }
    auto it = values_.find(node.input(i));
    if (it == values_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", node.input(i), " is never defined"));
    }
    return &it->second;
  }

  // Integer contents of a constant input (a Reshape's shape, Unsqueeze's axes).
  absl::StatusOr<std::vector<int64_t>> ConstInts(const onnx::NodeProto& node, int i) {
    OFS_ASSIGN_OR_RETURN(const Value* v, Input(node, i));
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

  const onnx::AttributeProto* Attr(const onnx::NodeProto& node, const std::string& name) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  int64_t AttrInt(const onnx::NodeProto& node, const std::string& name, int64_t dflt) {
    const onnx::AttributeProto* a = Attr(node, name);
    return a == nullptr ? dflt : a->i();
  }
  double AttrFloat(const onnx::NodeProto& node, const std::string& name, double dflt) {
    const onnx::AttributeProto* a = Attr(node, name);
    return a == nullptr ? dflt : a->f();
  }

  // One catalog op: checks it with the op's own shape function (so the
  // program `sbp plan` reads is valid), then appends it to the program.
  // `attrs` pairs each attribute's value with its JSON form.
  absl::Status Emit(const std::string& op, const std::vector<std::string>& inputs,
                    const std::string& output,
                    const std::vector<std::pair<std::string, AttrValue>>& attrs,
                    const std::string& label) {
    const OpRegistry& registry =
        options_.registry != nullptr ? *options_.registry : OpRegistry::Global();
    std::shared_ptr<const OpDef> def = registry.Find(op);
    if (def == nullptr) return absl::InternalError(absl::StrCat("catalog op ", op, " is missing"));
    AttrMap map;
    oneflow::ProgramOpProto* p = out_.program.add_ops();
    p->set_op(op);
    p->set_name(label);
    for (const auto& [name, value] : attrs) {
      map.Set(name, value);
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
    std::vector<TensorDesc> descs;
    for (const std::string& in : inputs) {
      p->add_inputs(in);
      descs.push_back(values_.at(in).desc);
    }
    OFS_ASSIGN_OR_RETURN(std::vector<int> counts,
                         OpCall::DeduceInputCounts(*def, static_cast<int>(inputs.size())));
    OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpCall> call, OpCall::Make(def, counts, map));
    OFS_ASSIGN_OR_RETURN(std::vector<TensorDesc> outs, call->InferOutputDescs(descs));
    p->add_outputs(output);
    Value v;
    v.desc = outs.at(0);
    values_[output] = std::move(v);
    return absl::OkStatus();
  }

  std::string Temp(const onnx::NodeProto& node, const std::string& what) {
    return absl::StrCat(node.output(0), "/", what);
  }

  // Pointwise ops, softmax, identity and dropout. false: not one of these.
  absl::StatusOr<bool> MapElementwise(const onnx::NodeProto& node) {
    const std::string& type = node.op_type();
    const std::string out = node.output(0);
    const std::string label = NodeName(node);
    static const auto* kUnary = new absl::flat_hash_map<std::string, std::string>{
        {"Relu", "relu"},       {"Tanh", "tanh"},   {"Sigmoid", "sigmoid"}, {"Erf", "erf"},
        {"Sqrt", "sqrt"},       {"Exp", "exp"},     {"Log", "log"},         {"Abs", "abs"},
        {"Neg", "negative"},    {"Reciprocal", "reciprocal"},              {"Floor", "floor"},
        {"Ceil", "ceil"},       {"Sin", "sin"},     {"Cos", "cos"},         {"Sign", "sign"},
        {"Softplus", "softplus"},
    };
    static const auto* kBinary = new absl::flat_hash_map<std::string, std::string>{
        {"Add", "broadcast_add"}, {"Sub", "broadcast_sub"}, {"Mul", "broadcast_mul"},
        {"Div", "broadcast_div"}, {"Pow", "broadcast_pow"}, {"Max", "broadcast_maximum"},
        {"Min", "broadcast_minimum"},
    };
    if (auto it = kUnary->find(type); it != kUnary->end()) {
      OFS_RETURN_IF_ERROR(Input(node, 0).status());
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit(it->second, {node.input(0)}, out, {}, label));
      return true;
    }
    if (auto it = kBinary->find(type); it != kBinary->end()) {
      OFS_RETURN_IF_ERROR(Input(node, 0).status());
      OFS_RETURN_IF_ERROR(Input(node, 1).status());
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit(it->second, {node.input(0), node.input(1)}, out, {}, label));
      return true;
    }
    if (type == "Identity" || type == "Dropout") {
      // Dropout is the identity in inference (its mask output is unused).
      OFS_RETURN_IF_ERROR(Input(node, 0).status());
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit("identity", {node.input(0)}, out, {}, label));
      return true;
    }
    if (type == "Gelu") {
      OFS_RETURN_IF_ERROR(Input(node, 0).status());
      const onnx::AttributeProto* a = Attr(node, "approximate");
      const bool tanh = a != nullptr && a->s() == "tanh";
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit(tanh ? "fast_gelu" : "gelu", {node.input(0)}, out, {}, label));
      return true;
    }
    if (type == "Softmax") {
      OFS_ASSIGN_OR_RETURN(const Value* x, Input(node, 0));
      const int64_t rank = x->desc.shape.rank();
      int64_t axis = AttrInt(node, "axis", -1);
      if (axis < 0) axis += rank;
      if (axis != rank - 1) {
        return absl::UnimplementedError(absl::StrCat(
            "softmax over axis ", axis, " of a rank-", rank, " tensor (only the last axis maps)"));
      }
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit("softmax", {node.input(0)}, out, {}, label));
      return true;
    }
    return false;
  }

  // Transpose and Reshape. false: not one of these.
  absl::StatusOr<bool> MapLayout(const onnx::NodeProto& node) {
    const std::string& type = node.op_type();
    const std::string out = node.output(0);
    const std::string label = NodeName(node);
    if (type == "Transpose") {
      OFS_ASSIGN_OR_RETURN(const Value* x, Input(node, 0));
      std::vector<int64_t> perm;
      if (const onnx::AttributeProto* a = Attr(node, "perm")) {
        perm.assign(a->ints().begin(), a->ints().end());
      } else {
        for (int64_t i = x->desc.shape.rank() - 1; i >= 0; --i) perm.push_back(i);
      }
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit("transpose", {node.input(0)}, out, {{"perm", AttrValue(perm)}}, label));
      return true;
    }
    if (type == "Reshape") {
      OFS_ASSIGN_OR_RETURN(const Value* x, Input(node, 0));
      OFS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstInts(node, 1));
      if (AttrInt(node, "allowzero", 0) != 0) {
        return absl::UnimplementedError("allowzero=1 is not supported");
      }
      // ONNX: 0 copies the input's dim; one -1 is inferred.
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0) {
          if (static_cast<int>(i) >= x->desc.shape.rank()) {
            return absl::InvalidArgumentError(absl::StrCat("shape entry ", i, " is 0 past the input's rank"));
          }
          shape[i] = x->desc.shape.dim(static_cast<int>(i));
        }
        if (shape[i] == -1) {
          if (infer >= 0) return absl::InvalidArgumentError("shape has two -1 entries");
          infer = static_cast<int64_t>(i);
        } else {
          known *= shape[i];
        }
      }
      if (infer >= 0) {
        if (known == 0 || x->desc.shape.elem_cnt() % known != 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "cannot reshape ", x->desc.ToString(), " to [", absl::StrJoin(shape, ","), "]"));
        }
        shape[infer] = x->desc.shape.elem_cnt() / known;
      }
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit("reshape", {node.input(0)}, out, {{"shape", AttrValue(shape)}}, label));
      return true;
    }
    return false;
  }

  // MatMul and Gemm. false: not one of these.
  absl::StatusOr<bool> MapMatmul(const onnx::NodeProto& node) {
    const std::string& type = node.op_type();
    const std::string out = node.output(0);
    const std::string label = NodeName(node);
    if (type == "MatMul") {
      OFS_ASSIGN_OR_RETURN(const Value* a, Input(node, 0));
      OFS_ASSIGN_OR_RETURN(const Value* b, Input(node, 1));
      const int ra = a->desc.shape.rank(), rb = b->desc.shape.rank();
      std::string op;
      if (ra == 2 && rb == 2) {
        op = "matmul";
      } else if (ra >= 3 && rb == 2) {
        op = "broadcast_matmul";
      } else if (ra == 3 && rb == 3) {
        op = "batch_matmul";
      } else {
        return absl::UnimplementedError(absl::StrCat("MatMul of ranks ", ra, " and ", rb));
      }
      ++out_.mapped[type];
      OFS_RETURN_IF_ERROR(Emit(op, {node.input(0), node.input(1)}, out, {}, label));
      return true;
    }
    if (type == "Gemm") {
      OFS_RETURN_IF_ERROR(Input(node, 0).status());
      OFS_RETURN_IF_ERROR(Input(node, 1).status());
      if (AttrFloat(node, "alpha", 1.0) != 1.0 || AttrFloat(node, "beta", 1.0) != 1.0) {
        return absl::UnimplementedError("Gemm with alpha or beta other than 1");
      }
      const bool ta = AttrInt(node, "transA", 0) != 0;
      const bool tb = AttrInt(node, "transB", 0) != 0;
      const bool bias = node.input_size() > 2 && !node.input(2).empty();
      const std::string product = bias ? Temp(node, "matmul") : out;
      OFS_RETURN_IF_ERROR(Emit("matmul", {node.input(0), node.input(1)}, product,
                               {{"transpose_a", AttrValue(ta)}, {"transpose_b", AttrValue(tb)}},
                               bias ? label + "/matmul" : label));
      ++out_.mapped[type];
      if (!bias) return true;
      OFS_RETURN_IF_ERROR(Input(node, 2).status());
      OFS_RETURN_IF_ERROR(Emit("broadcast_add", {product, node.input(2)}, out, {}, label + "/bias"));
      return true;
    }
    return false;
  }

  absl::Status MapNode(const onnx::NodeProto& node) {
    ++node_index_;
    const std::string& type = node.op_type();
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return absl::UnimplementedError(absl::StrCat("op domain '", node.domain(),
                                                   "' is not supported"));
    }
    if (node.output_size() < 1) return absl::InvalidArgumentError("the node has no output");
    // Each family says whether the node is one of its ops.
    for (auto family : {&Importer::MapElementwise, &Importer::MapLayout, &Importer::MapMatmul}) {
      OFS_ASSIGN_OR_RETURN(const bool mapped, (this->*family)(node));
      if (mapped) return absl::OkStatus();
    }
    return absl::UnimplementedError(absl::StrCat(
        "ONNX op ", type, " has no mapping to the catalog (docs/IMPORT.md lists the mapped ops)"));
  }

  const std::string path_;
  const ImportOptions options_;
  ImportedModel out_;
  absl::flat_hash_map<std::string, Value> values_;
  int node_index_ = -1;
};

}  // namespace

absl::StatusOr<ImportedModel> ImportOnnxBytes(const std::string& bytes, const std::string& path,
                                              const ImportOptions& options) {
  Importer importer(path, options);
  return importer.Run(bytes);
}

absl::StatusOr<ImportedModel> ImportOnnx(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the ONNX model"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ImportOnnxBytes(ss.str(), path, options);
}

}  // namespace oneflow_sbp::importers
