#include "importers/onnx_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::importers {
namespace {

// Pointwise ops, softmax, identity and dropout. false: not one of these.
absl::StatusOr<bool> MapElementwise(OnnxGraph& g, const onnx::NodeProto& node,
                                    const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
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
    OFS_RETURN_IF_ERROR(g.Input(node, 0).status());
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit(it->second, {node.input(0)}, {out}, {}, label));
    return true;
  }
  if (auto it = kBinary->find(type); it != kBinary->end()) {
    OFS_RETURN_IF_ERROR(g.Input(node, 0).status());
    OFS_RETURN_IF_ERROR(g.Input(node, 1).status());
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit(it->second, {node.input(0), node.input(1)}, {out}, {}, label));
    return true;
  }
  if (type == "Identity" || type == "Dropout") {
    // Dropout is the identity in inference (its mask output is unused).
    OFS_RETURN_IF_ERROR(g.Input(node, 0).status());
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("identity", {node.input(0)}, {out}, {}, label));
    return true;
  }
  if (type == "Gelu") {
    OFS_RETURN_IF_ERROR(g.Input(node, 0).status());
    const onnx::AttributeProto* a = OnnxGraph::Attr(node, "approximate");
    const bool tanh = a != nullptr && a->s() == "tanh";
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit(tanh ? "fast_gelu" : "gelu", {node.input(0)}, {out}, {}, label));
    return true;
  }
  if (type == "Softmax") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    const int64_t rank = x->desc.shape.rank();
    int64_t axis = OnnxGraph::AttrInt(node, "axis", -1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1) {
      return absl::UnimplementedError(absl::StrCat(
          "softmax over axis ", axis, " of a rank-", rank, " tensor (only the last axis maps)"));
    }
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("softmax", {node.input(0)}, {out}, {}, label));
    return true;
  }
  return false;
}

// Transpose and Reshape. false: not one of these.
absl::StatusOr<bool> MapLayout(OnnxGraph& g, const onnx::NodeProto& node,
                               const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
  if (type == "Transpose") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    std::vector<int64_t> perm;
    if (const onnx::AttributeProto* a = OnnxGraph::Attr(node, "perm")) {
      perm.assign(a->ints().begin(), a->ints().end());
    } else {
      for (int64_t i = x->desc.shape.rank() - 1; i >= 0; --i) perm.push_back(i);
    }
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("transpose", {node.input(0)}, {out}, {{"perm", AttrValue(perm)}}, label));
    return true;
  }
  if (type == "Reshape") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, g.ConstInts(node, 1));
    if (OnnxGraph::AttrInt(node, "allowzero", 0) != 0) {
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
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("reshape", {node.input(0)}, {out}, {{"shape", AttrValue(shape)}}, label));
    return true;
  }
  return false;
}

// MatMul and Gemm. false: not one of these.
absl::StatusOr<bool> MapMatmul(OnnxGraph& g, const onnx::NodeProto& node,
                               const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
  if (type == "MatMul") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* a, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(const OnnxValue* b, g.Input(node, 1));
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
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit(op, {node.input(0), node.input(1)}, {out}, {}, label));
    return true;
  }
  if (type == "Gemm") {
    OFS_RETURN_IF_ERROR(g.Input(node, 0).status());
    OFS_RETURN_IF_ERROR(g.Input(node, 1).status());
    if (OnnxGraph::AttrFloat(node, "alpha", 1.0) != 1.0 || OnnxGraph::AttrFloat(node, "beta", 1.0) != 1.0) {
      return absl::UnimplementedError("Gemm with alpha or beta other than 1");
    }
    const bool ta = OnnxGraph::AttrInt(node, "transA", 0) != 0;
    const bool tb = OnnxGraph::AttrInt(node, "transB", 0) != 0;
    const bool bias = node.input_size() > 2 && !node.input(2).empty();
    const std::string product = bias ? OnnxGraph::Temp(node, "matmul") : out;
    OFS_RETURN_IF_ERROR(g.Emit("matmul", {node.input(0), node.input(1)}, {product},
                             {{"transpose_a", AttrValue(ta)}, {"transpose_b", AttrValue(tb)}},
                             bias ? label + "/matmul" : label));
    ++g.out().mapped[type];
    if (!bias) return true;
    OFS_RETURN_IF_ERROR(g.Input(node, 2).status());
    OFS_RETURN_IF_ERROR(g.Emit("broadcast_add", {product, node.input(2)}, {out}, {}, label + "/bias"));
    return true;
  }
  return false;
}

int64_t Normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// The axes of an op that takes them as an input (opset 13+ Unsqueeze and
// Squeeze, opset 18+ reductions) or, before that, as an attribute.
absl::StatusOr<std::vector<int64_t>> AxesOf(OnnxGraph& g, const onnx::NodeProto& node, int input) {
  if (g.HasInput(node, input)) return g.ConstInts(node, input);
  return OnnxGraph::AttrInts(node, "axes");
}

// Gather, Unsqueeze, Squeeze, Concat.
absl::StatusOr<bool> MapGatherAndDims(OnnxGraph& g, const onnx::NodeProto& node,
                                  const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
  if (type == "Gather") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_RETURN_IF_ERROR(g.Input(node, 1).status());
    const int64_t axis = Normalized(OnnxGraph::AttrInt(node, "axis", 0), x->desc.shape.rank());
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("gather", {node.input(0), node.input(1)}, {out},
                               {{"axis", AttrValue(axis)}}, label));
    return true;
  }
  if (type == "Unsqueeze") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOf(g, node, 1));
    const int64_t rank = x->desc.shape.rank() + static_cast<int64_t>(axes.size());
    for (int64_t& a : axes) a = Normalized(a, rank);
    std::sort(axes.begin(), axes.end());
    // One expand_dims per axis, in ascending order (each counts in the
    // final rank, so earlier insertions do not shift later ones).
    std::string current = node.input(0);
    for (size_t k = 0; k < axes.size(); ++k) {
      const std::string next = k + 1 == axes.size() ? out : OnnxGraph::Temp(node, absl::StrCat("unsqueeze", k));
      OFS_RETURN_IF_ERROR(g.Emit("expand_dims", {current}, {next}, {{"axis", AttrValue(axes[k])}},
                                 axes.size() == 1 ? label : absl::StrCat(label, "/", k)));
      current = next;
    }
    if (axes.empty()) {
      OFS_RETURN_IF_ERROR(g.Emit("identity", {current}, {out}, {}, label));
    }
    ++g.out().mapped[type];
    return true;
  }
  if (type == "Squeeze") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOf(g, node, 1));
    const int64_t rank = x->desc.shape.rank();
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) {
        if (x->desc.shape.dim(static_cast<int>(i)) == 1) axes.push_back(i);
      }
    }
    for (int64_t& a : axes) a = Normalized(a, rank);
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("squeeze", {node.input(0)}, {out}, {{"axes", AttrValue(axes)}}, label));
    return true;
  }
  if (type == "Concat") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    std::vector<std::string> inputs;
    for (int i = 0; i < node.input_size(); ++i) {
      OFS_RETURN_IF_ERROR(g.Input(node, i).status());
      inputs.push_back(node.input(i));
    }
    const int64_t axis = Normalized(OnnxGraph::AttrInt(node, "axis", 0), x->desc.shape.rank());
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("cat", inputs, {out}, {{"axis", AttrValue(axis)}}, label));
    return true;
  }
  return false;
}

// Slice and Expand.
absl::StatusOr<bool> MapSliceAndExpand(OnnxGraph& g, const onnx::NodeProto& node,
                        const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
  if (type == "Slice") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> starts, g.ConstInts(node, 1));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> ends, g.ConstInts(node, 2));
    std::vector<int64_t> axes, steps;
    if (g.HasInput(node, 3)) {
      OFS_ASSIGN_OR_RETURN(axes, g.ConstInts(node, 3));
    }
    if (g.HasInput(node, 4)) {
      OFS_ASSIGN_OR_RETURN(steps, g.ConstInts(node, 4));
    }
    const int rank = x->desc.shape.rank();
    if (axes.empty()) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
      return absl::InvalidArgumentError("starts, ends, axes and steps differ in length");
    }
    std::vector<int64_t> start(rank, 0), stop(x->desc.shape.dims().begin(), x->desc.shape.dims().end()),
        step(rank, 1);
    for (size_t k = 0; k < starts.size(); ++k) {
      const int64_t a = Normalized(axes[k], rank);
      if (a < 0 || a >= rank) return absl::InvalidArgumentError(absl::StrCat("axis ", axes[k], " is out of range"));
      if (steps[k] <= 0) return absl::UnimplementedError("Slice with a step below 1");
      const int64_t n = x->desc.shape.dim(static_cast<int>(a));
      // ONNX clamps: negative counts from the end, then into [0, n].
      auto clamp = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
      start[a] = clamp(starts[k]);
      stop[a] = std::max(start[a], clamp(ends[k]));
      step[a] = steps[k];
    }
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("slice", {node.input(0)}, {out},
                               {{"start", AttrValue(start)}, {"stop", AttrValue(stop)},
                                {"step", AttrValue(step)}}, label));
    return true;
  }
  if (type == "Expand") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, g.ConstInts(node, 1));
    // ONNX broadcasts the input and the shape together (a 1 keeps the
    // input's dim).
    const int64_t rank = std::max<int64_t>(x->desc.shape.rank(), static_cast<int64_t>(shape.size()));
    std::vector<int64_t> target(rank, 1);
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t xi = i - (rank - x->desc.shape.rank());
      const int64_t si = i - (rank - static_cast<int64_t>(shape.size()));
      const int64_t a = xi >= 0 ? x->desc.shape.dim(static_cast<int>(xi)) : 1;
      const int64_t b = si >= 0 ? shape[si] : 1;
      target[i] = a == 1 ? b : a;
    }
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("expand", {node.input(0)}, {out},
                               {{"expand_shape", AttrValue(target)}}, label));
    return true;
  }
  return false;
}

// Flatten, Where and Cast.
absl::StatusOr<bool> MapFlattenWhereCast(OnnxGraph& g, const onnx::NodeProto& node,
                        const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
  if (type == "Flatten") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    const int64_t rank = x->desc.shape.rank();
    const int64_t axis = Normalized(OnnxGraph::AttrInt(node, "axis", 1), rank);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      (i < axis ? outer : inner) *= x->desc.shape.dim(static_cast<int>(i));
    }
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("reshape", {node.input(0)}, {out},
                               {{"shape", AttrValue(std::vector<int64_t>{outer, inner})}}, label));
    return true;
  }
  if (type == "Where") {
    for (int i = 0; i < 3; ++i) OFS_RETURN_IF_ERROR(g.Input(node, i).status());
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("where", {node.input(0), node.input(1), node.input(2)}, {out}, {},
                               label));
    return true;
  }
  if (type == "Cast") {
    OFS_RETURN_IF_ERROR(g.Input(node, 0).status());
    OFS_ASSIGN_OR_RETURN(const DataType to,
                         FromOnnxType(static_cast<int>(OnnxGraph::AttrInt(node, "to", 0))));
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit("cast", {node.input(0)}, {out},
                               {{"dtype", AttrValue(std::string(DataTypeName(to)))}}, label));
    return true;
  }
  return false;
}

// Reductions and LayerNormalization.
absl::StatusOr<bool> MapNormalization(OnnxGraph& g, const onnx::NodeProto& node,
                                      const std::string& label) {
  const std::string& type = node.op_type();
  const std::string out = node.output(0);
  static const auto* kReduce = new absl::flat_hash_map<std::string, std::string>{
      {"ReduceMean", "reduce_mean"}, {"ReduceSum", "reduce_sum"},
      {"ReduceMax", "reduce_max"},   {"ReduceMin", "reduce_min"},
      {"ReduceProd", "reduce_prod"},
  };
  if (auto it = kReduce->find(type); it != kReduce->end()) {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOf(g, node, 1));
    if (OnnxGraph::AttrInt(node, "noop_with_empty_axes", 0) != 0) {
      return absl::UnimplementedError("noop_with_empty_axes=1 is not supported");
    }
    const int64_t rank = x->desc.shape.rank();
    if (axes.empty()) {  // ONNX: every axis
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    for (int64_t& a : axes) a = Normalized(a, rank);
    const bool keepdims = OnnxGraph::AttrInt(node, "keepdims", 1) != 0;
    ++g.out().mapped[type];
    OFS_RETURN_IF_ERROR(g.Emit(it->second, {node.input(0)}, {out},
                               {{"axis", AttrValue(axes)}, {"keepdims", AttrValue(keepdims)}}, label));
    return true;
  }
  if (type == "LayerNormalization") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    OFS_RETURN_IF_ERROR(g.Input(node, 1).status());
    if (!g.HasInput(node, 2)) {
      return absl::UnimplementedError("LayerNormalization without a bias B");
    }
    if (node.output_size() > 1 && (!node.output(1).empty() ||
                                   (node.output_size() > 2 && !node.output(2).empty()))) {
      return absl::UnimplementedError("LayerNormalization's Mean and InvStdDev outputs");
    }
    const int64_t axis = Normalized(OnnxGraph::AttrInt(node, "axis", -1), x->desc.shape.rank());
    ++g.out().mapped[type];
    // Ours takes beta before gamma: (x, B, Scale).
    OFS_RETURN_IF_ERROR(g.Emit("layer_norm", {node.input(0), node.input(2), node.input(1)}, {out},
                               {{"begin_norm_axis", AttrValue(axis)},
                                {"begin_params_axis", AttrValue(axis)},
                                {"epsilon", AttrValue(OnnxGraph::AttrFloat(node, "epsilon", 1e-5))}},
                               label));
    return true;
  }
  return false;
}

}  // namespace

absl::Status MapOnnxNode(OnnxGraph& g, const onnx::NodeProto& node) {
  const std::string label = node.name().empty() ? node.output(0) : node.name();
  for (auto family : {&MapElementwise, &MapLayout, &MapMatmul, &MapGatherAndDims, &MapSliceAndExpand, &MapFlattenWhereCast,
                      &MapNormalization}) {
    OFS_ASSIGN_OR_RETURN(const bool mapped, family(g, node, label));
    if (mapped) return absl::OkStatus();
  }
  return absl::UnimplementedError(absl::StrCat(
      "ONNX op ", node.op_type(),
      " has no mapping to the catalog (docs/IMPORT.md lists the mapped ops)"));
}

}  // namespace oneflow_sbp::importers
