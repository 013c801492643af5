// `sbp import MODEL.onnx --out=DIR`: a model from another framework as a
// program `sbp plan` reads (importers/onnx_import.h).
//   DIR/program.json         graph inputs (replicated), initializers as free
//                            tensors named by initializer, outputs named
//   DIR/weights.safetensors  the initializers' values (none for a
//                            weightless model)
// Prints what it mapped and what had no weights (--format=json too).
#ifndef CLI_CMD_IMPORT_H_
#define CLI_CMD_IMPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::cli {

struct ImportCmdOptions {
  std::string model;
  std::string out;
  std::string placement = "cpu:0";
  // "batch=8,seq=16": values of the model's symbolic dimensions.
  std::string dims;
  std::string format = "text";
};

absl::StatusOr<std::string> RunImport(const ImportCmdOptions& o, const OpRegistry& registry);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_IMPORT_H_
