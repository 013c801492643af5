// The ONNX importer: an .onnx model (opsets 13 to 21) becomes a program in
// `sbp plan`'s format (proto/program.proto) and its weights.
//
//   absl::StatusOr<ImportedModel> m = ImportOnnx("mlp.onnx", {});
//   // m->program: graph inputs as marked tensors (replicated), initializers
//   // as free tensors named by initializer, outputs named as in the graph;
//   // m->weights: the initializers' values (none for a weightless model).
//
// Each ONNX node maps to one catalog op or a short composition (Gemm ->
// matmul, then broadcast_add of its bias; onnx_ops.h). Nodes that only
// compute on shapes or integer constants are folded at import
// (onnx_fold.h), and an initializer becomes a program tensor only if an op
// reads it. A node the importer cannot
// map is an error naming the op type, the node and the file, unless
// `fallback_replicate` is set (not yet: refused with that message). A
// truncated or unparsable file, an opset outside 13..21, a weight stored
// outside the file that is not there, and a symbolic dimension without a
// value in `dims` are errors too, each naming what is wrong.
#ifndef IMPORTERS_ONNX_IMPORT_H_
#define IMPORTERS_ONNX_IMPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "proto/program.pb.h"

namespace oneflow_sbp::importers {

struct ImportOptions {
  // The catalog the program's ops come from (the engine's); must outlive
  // the import. nullptr: OpRegistry::Global().
  const OpRegistry* registry = nullptr;
  // The program's placement; every graph input is replicated on it.
  std::string placement = "cpu:0";
  // Values of symbolic dimensions ("batch" -> 8).
  std::map<std::string, int64_t> dims;
};

struct ImportedModel {
  oneflow::ProgramProto program;
  // The program's constant tensors by name (initializers, and Constant or
  // folded values an op reads), in the order ops first read them.
  // Initializers declared without data are not here (a model saved
  // without its weights imports for planning) but in `weightless`.
  std::vector<std::pair<std::string, LocalTensor>> weights;
  std::vector<std::string> weightless;
  // ONNX op type -> how many nodes of it were mapped, and folded.
  std::map<std::string, int> mapped;
  std::map<std::string, int> folded;
  int64_t opset = 0;
};

absl::StatusOr<ImportedModel> ImportOnnx(const std::string& path, const ImportOptions& options);

// The same from the file's bytes; `path` names it in errors and locates
// external data.
absl::StatusOr<ImportedModel> ImportOnnxBytes(const std::string& bytes, const std::string& path,
                                              const ImportOptions& options);

}  // namespace oneflow_sbp::importers

#endif  // IMPORTERS_ONNX_IMPORT_H_
