// Folding at import: nodes that only compute on shapes or constants
// (Shape, Constant, ConstantOfShape, and Gather, Unsqueeze, Squeeze,
// Concat, Cast and integer arithmetic on constants) become constants, so
// the shape subgraphs exporters write (a Reshape's target computed from
// Shape) leave no ops in the program.
#ifndef IMPORTERS_ONNX_FOLD_H_
#define IMPORTERS_ONNX_FOLD_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "importers/onnx.pb.h"
#include "importers/onnx_graph.h"

namespace oneflow_sbp::importers {

// Whether the node folded (its outputs are then constants of `g`).
absl::StatusOr<bool> FoldOnnxNode(OnnxGraph& g, const onnx::NodeProto& node);

// A TensorProto's bytes held in the message (raw_data, else the typed
// field of `dtype`); nullopt if it holds none (external or absent data).
std::optional<std::string> InlineBytes(const onnx::TensorProto& t, DataType dtype);

// `bytes` as a tensor of `desc`: kInvalidArgument naming `what` ("<what>
// f32[16,8] holds N bytes, not M: a truncated <noun>") if they do not
// match. Allocates only once the sizes agree.
absl::StatusOr<LocalTensor> TensorFromBytes(const TensorDesc& desc, const std::string& bytes,
                                            const std::string& what, const std::string& noun);

// A TensorProto's contents held in the message (not external data).
absl::StatusOr<LocalTensor> TensorFromProto(const onnx::TensorProto& t, const std::string& what);

}  // namespace oneflow_sbp::importers

#endif  // IMPORTERS_ONNX_FOLD_H_
