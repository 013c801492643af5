// ONNX nodes as catalog ops (docs/IMPORT.md has the table). Each family
// says whether the node is one of its ops; MapOnnxNode tries them in turn.
#ifndef IMPORTERS_ONNX_OPS_H_
#define IMPORTERS_ONNX_OPS_H_

#include "absl/status/statusor.h"
#include "importers/onnx.pb.h"
#include "importers/onnx_graph.h"

namespace oneflow_sbp::importers {

// Emits the node's ops into `g`. kUnimplemented naming the op type when no
// family maps it, or naming the attribute a family does not cover.
absl::Status MapOnnxNode(OnnxGraph& g, const onnx::NodeProto& node);

}  // namespace oneflow_sbp::importers

#endif  // IMPORTERS_ONNX_OPS_H_
