// Folding at import: nodes that only compute on shapes or constants
// (Shape, Constant, ConstantOfShape, and Gather, Unsqueeze, Squeeze,
// Concat, Cast and integer arithmetic on constants) become constants, so
// the shape subgraphs exporters write (a Reshape's target computed from
// Shape) leave no ops in the program.
#ifndef IMPORTERS_ONNX_FOLD_H_
#define IMPORTERS_ONNX_FOLD_H_

#include "absl/status/statusor.h"
#include "importers/onnx.pb.h"
#include "importers/onnx_graph.h"

namespace oneflow_sbp::importers {

// Whether the node folded (its outputs are then constants of `g`).
absl::StatusOr<bool> FoldOnnxNode(OnnxGraph& g, const onnx::NodeProto& node);

// A TensorProto's contents (raw or typed fields; not external data):
// kInvalidArgument naming `what` if the bytes do not match the shape.
absl::StatusOr<LocalTensor> TensorFromProto(const onnx::TensorProto& t, const std::string& what);

}  // namespace oneflow_sbp::importers

#endif  // IMPORTERS_ONNX_FOLD_H_
