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
#include "importers/onnx_fold.h"
#include "importers/onnx_graph.h"
#include "importers/onnx_ops.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::importers {
namespace {

constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 21;

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

class Importer {
 public:
  Importer(const std::string& path, const ImportOptions& options)
      : path_(path), options_(options), graph_(path, options_, &out_) {}

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
      if (graph_.Has(in.name())) continue;  // an initializer listed as input
      OFS_RETURN_IF_ERROR(AddGraphInput(in));
    }
    int index = 0;
    for (const onnx::NodeProto& node : g.node()) {
      const std::string where = absl::StrCat(
          path_, ": node ", node.name().empty() ? absl::StrCat("#", index) : node.name(), " (",
          node.op_type(), ")");
      ++index;
      OFS_RETURN_IF_ERROR(In(where, MapOrFold(node)));
    }
    for (const onnx::ValueInfoProto& o : g.output()) {
      const OnnxValue* v = graph_.Find(o.name());
      if (v == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ": graph output ", o.name(), " is never defined"));
      }
      if (v->constant) {
        return absl::UnimplementedError(absl::StrCat(
            path_, ": graph output ", o.name(), " is a constant known at import"));
      }
      out_.program.add_outputs()->set_name(o.name());
    }
    return std::move(out_);
  }

 private:
  absl::Status MapOrFold(const onnx::NodeProto& node) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return absl::UnimplementedError(absl::StrCat("op domain '", node.domain(),
                                                   "' is not supported"));
    }
    if (node.output_size() < 1 || node.output(0).empty()) {
      return absl::InvalidArgumentError("the node has no output");
    }
    OFS_ASSIGN_OR_RETURN(const bool folded, FoldOnnxNode(graph_, node));
    if (folded) return absl::OkStatus();
    return MapOnnxNode(graph_, node);
  }

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
    TensorDesc desc;
    OFS_ASSIGN_OR_RETURN(desc.dtype, In(where, FromOnnxType(t.data_type())));
    OFS_ASSIGN_OR_RETURN(desc.shape, In(where, Shape::Make(std::vector<int64_t>(t.dims().begin(), t.dims().end()))));
    std::optional<std::string> bytes;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      OFS_ASSIGN_OR_RETURN(bytes, In(path_, ReadExternal(t)));
    } else {
      bytes = InlineBytes(t, desc.dtype);
    }
    if (!bytes && desc.byte_size() == 0) bytes = "";  // an empty tensor holds all its data
    std::optional<LocalTensor> contents;
    if (bytes) {
      OFS_ASSIGN_OR_RETURN(contents, TensorFromBytes(desc, *bytes, where, "weight"));
    }
    // A program tensor (and a weight) once an op reads it: onnx_graph.h.
    graph_.DefineInitializer(t.name(), desc, contents);
    return absl::OkStatus();
  }

  absl::Status AddGraphInput(const onnx::ValueInfoProto& in) {
    const std::string where = absl::StrCat(path_, ": graph input ", in.name());
    if (!in.type().has_tensor_type()) {
      return absl::InvalidArgumentError(where + " is not a tensor");
    }
    const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
    OFS_ASSIGN_OR_RETURN(const DataType dtype, In(where, FromOnnxType(tt.elem_type())));
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
    OnnxValue v;
    v.desc.dtype = dtype;
    OFS_ASSIGN_OR_RETURN(v.desc.shape, In(where, Shape::Make(dims)));
    return graph_.DefineInput(in.name(), v.desc);
  }

  const std::string path_;
  const ImportOptions options_;
  ImportedModel out_;
  OnnxGraph graph_;
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
