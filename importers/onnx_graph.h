// The program an ONNX import builds, value by value (onnx_import.h drives
// it; onnx_ops.h maps nodes onto it, onnx_fold.h folds constant ones).
//
// Every ONNX value has a descriptor; initializers, Constant nodes and
// folded nodes also have contents. A value with contents becomes a program
// tensor (a free tensor with a weight) only when an emitted op reads it, so
// shape arithmetic that folds away leaves nothing behind.
#ifndef IMPORTERS_ONNX_GRAPH_H_
#define IMPORTERS_ONNX_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "importers/onnx.pb.h"
#include "importers/onnx_import.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::importers {

struct OnnxValue {
  TensorDesc desc;
  // Known at import: an initializer's data, a Constant node, a folded node.
  std::optional<LocalTensor> constant;
  // An initializer: a free tensor of the program, its layout the
  // planner's. Other constants (Constant nodes, folded values) are fixed,
  // replicated tensors.
  bool initializer = false;
  // An initializer declared without data (planning only).
  bool weightless = false;
};

// `s` with "<where>: " before its message (an OK status unchanged).
absl::Status In(absl::string_view where, const absl::Status& s);
template <typename T>
absl::StatusOr<T> In(absl::string_view where, absl::StatusOr<T> v) {
  if (v.ok()) return v;
  return In(where, v.status());
}

// TensorProto.DataType -> ours; kInvalidArgument naming the type.
absl::StatusOr<DataType> FromOnnxType(int type);

class OnnxGraph {
 public:
  OnnxGraph(std::string path, const ImportOptions& options, ImportedModel* out)
      : path_(std::move(path)), options_(options), out_(out) {}

  const std::string& path() const { return path_; }
  ImportedModel& out() { return *out_; }

  // Defines a value; `constant` if its contents are known.
  void Define(const std::string& name, TensorDesc desc, std::optional<LocalTensor> constant);
  // An initializer, with its data or `weightless`.
  void DefineInitializer(const std::string& name, TensorDesc desc,
                         std::optional<LocalTensor> data);
  // A graph input: a program tensor replicated on the placement.
  absl::Status DefineInput(const std::string& name, TensorDesc desc);
  bool Has(const std::string& name) const { return values_.contains(name); }
  const OnnxValue* Find(const std::string& name) const;

  // Input `i` of `node` (kInvalidArgument if absent or undefined).
  absl::StatusOr<const OnnxValue*> Input(const onnx::NodeProto& node, int i) const;
  bool HasInput(const onnx::NodeProto& node, int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
  // The integers of a constant input (a Reshape's shape, Unsqueeze's axes).
  absl::StatusOr<std::vector<int64_t>> ConstInts(const onnx::NodeProto& node, int i) const;

  static const onnx::AttributeProto* Attr(const onnx::NodeProto& node, absl::string_view name);
  static int64_t AttrInt(const onnx::NodeProto& node, absl::string_view name, int64_t dflt);
  static double AttrFloat(const onnx::NodeProto& node, absl::string_view name, double dflt);
  static std::vector<int64_t> AttrInts(const onnx::NodeProto& node, absl::string_view name);

  // One catalog op reading `inputs` and defining `outputs` (one per output
  // blob, trailing ones may be left off): checked with the op's own shape
  // function, then appended to the program. Constant inputs become program
  // tensors here, on first use.
  absl::Status Emit(const std::string& op, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs,
                    const std::vector<std::pair<std::string, AttrValue>>& attrs,
                    const std::string& label);

  // "<node's first output>/<what>": a value a composition adds.
  static std::string Temp(const onnx::NodeProto& node, absl::string_view what);

 private:
  absl::Status Materialize(const std::string& name);

  const std::string path_;
  const ImportOptions& options_;
  ImportedModel* out_;
  absl::flat_hash_map<std::string, OnnxValue> values_;
  absl::flat_hash_set<std::string> in_program_;
};

}  // namespace oneflow_sbp::importers

#endif  // IMPORTERS_ONNX_GRAPH_H_
