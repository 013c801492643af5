#include "importers/onnx_fold.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::importers {
namespace {

// A folded value larger than this is refused rather than materialized.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

struct Ints {
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
};

bool IsInteger(DataType t) {
  return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt8 ||
         t == DataType::kUInt8;
}

Ints ToInts(const LocalTensor& t) {
  Ints out;
  out.dims.assign(t.dims().begin(), t.dims().end());
  for (int64_t k = 0; k < t.elem_cnt(); ++k) out.values.push_back(static_cast<int64_t>(t.GetDouble(k)));
  return out;
}

absl::StatusOr<LocalTensor> FromInts(const Ints& v) {
  std::vector<double> d(v.values.begin(), v.values.end());
  return LocalTensor::FromDoubles(DataType::kInt64, v.dims, d);
}

absl::Status Define(OnnxGraph& g, const onnx::NodeProto& node, const Ints& v) {
  OFS_ASSIGN_OR_RETURN(LocalTensor t, FromInts(v));
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Make(v.dims));
  g.Define(node.output(0), TensorDesc{shape, DataType::kInt64}, t);
  ++g.out().folded[node.op_type()];
  return absl::OkStatus();
}

int64_t Normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// Integer ops on constant inputs; nullopt: not one of them.
absl::StatusOr<std::optional<Ints>> Evaluate(const onnx::NodeProto& node, std::vector<Ints>& in) {
  const std::string& type = node.op_type();
  if (type == "Unsqueeze" || type == "Squeeze") {
    Ints out = in[0];
    std::vector<int64_t> axes = in.size() > 1 ? in[1].values : OnnxGraph::AttrInts(node, "axes");
    if (type == "Unsqueeze") {
      const int64_t rank = static_cast<int64_t>(out.dims.size() + axes.size());
      for (int64_t& a : axes) a = Normalized(a, rank);
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) {
        if (a < 0 || a > static_cast<int64_t>(out.dims.size())) {
          return absl::InvalidArgumentError(absl::StrCat("axis ", a, " is out of range"));
        }
        out.dims.insert(out.dims.begin() + a, 1);
      }
    } else {
      std::vector<int64_t> dims;
      const int64_t rank = static_cast<int64_t>(out.dims.size());
      for (int64_t i = 0; i < rank; ++i) {
        bool drop = axes.empty() ? out.dims[i] == 1 : false;
        for (int64_t a : axes) drop = drop || Normalized(a, rank) == i;
        if (!drop) dims.push_back(out.dims[i]);
      }
      out.dims = dims;
    }
    return std::optional<Ints>(out);
  }
  if (type == "Gather") {
    if (in[0].dims.size() != 1 || OnnxGraph::AttrInt(node, "axis", 0) != 0) return std::optional<Ints>();
    Ints out;
    out.dims = in[1].dims;
    const int64_t n = static_cast<int64_t>(in[0].values.size());
    for (int64_t i : in[1].values) {
      const int64_t k = i < 0 ? i + n : i;
      if (k < 0 || k >= n) return absl::InvalidArgumentError(absl::StrCat("index ", i, " is out of range"));
      out.values.push_back(in[0].values[k]);
    }
    return std::optional<Ints>(out);
  }
  if (type == "Concat") {
    Ints out;
    out.dims = {0};
    for (const Ints& v : in) {
      if (v.dims.size() != 1) return std::optional<Ints>();
      out.values.insert(out.values.end(), v.values.begin(), v.values.end());
      out.dims[0] += v.dims[0];
    }
    return std::optional<Ints>(out);
  }
  if (type == "Cast" || type == "Identity") return std::optional<Ints>(in[0]);
  if (type == "Add" || type == "Sub" || type == "Mul" || type == "Div") {
    const Ints& a = in[0];
    const Ints& b = in[1];
    const bool a_scalar = a.values.size() == 1, b_scalar = b.values.size() == 1;
    if (a.values.size() != b.values.size() && !a_scalar && !b_scalar) return std::optional<Ints>();
    Ints out = a.values.size() >= b.values.size() ? a : b;
    for (size_t k = 0; k < out.values.size(); ++k) {
      const int64_t x = a.values[a_scalar ? 0 : k], y = b.values[b_scalar ? 0 : k];
      if (type == "Div" && y == 0) return absl::InvalidArgumentError("integer division by 0");
      out.values[k] = type == "Add" ? x + y : type == "Sub" ? x - y : type == "Mul" ? x * y : x / y;
    }
    return std::optional<Ints>(out);
  }
  return std::optional<Ints>();
}

}  // namespace

std::optional<std::string> InlineBytes(const onnx::TensorProto& t, DataType dtype) {
  auto typed = [](const auto& field, size_t width) {
    return std::string(reinterpret_cast<const char*>(field.data()), field.size() * width);
  };
  if (t.has_raw_data()) return t.raw_data();
  if (dtype == DataType::kFloat32 && t.float_data_size() > 0) return typed(t.float_data(), 4);
  if (dtype == DataType::kInt64 && t.int64_data_size() > 0) return typed(t.int64_data(), 8);
  if (dtype == DataType::kFloat64 && t.double_data_size() > 0) return typed(t.double_data(), 8);
  if (dtype == DataType::kInt32 && t.int32_data_size() > 0) return typed(t.int32_data(), 4);
  return std::nullopt;
}

absl::StatusOr<LocalTensor> TensorFromBytes(const TensorDesc& desc, const std::string& bytes,
                                            const std::string& what, const std::string& noun) {
  const int64_t want = desc.byte_size();
  if (static_cast<int64_t>(bytes.size()) != want) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", desc.ToString(), " holds ",
                                                   bytes.size(), " bytes, not ", want,
                                                   ": a truncated ", noun));
  }
  OFS_ASSIGN_OR_RETURN(LocalTensor tensor, In(what, LocalTensor::Empty(desc.dtype, desc.shape.dims())));
  if (want > 0) std::memcpy(tensor.raw_data(), bytes.data(), bytes.size());
  return tensor;
}

absl::StatusOr<LocalTensor> TensorFromProto(const onnx::TensorProto& t, const std::string& what) {
  OFS_ASSIGN_OR_RETURN(const DataType dtype, In(what, FromOnnxType(t.data_type())));
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  OFS_ASSIGN_OR_RETURN(const Shape shape, In(what, Shape::Make(dims)));
  return TensorFromBytes(TensorDesc{shape, dtype}, InlineBytes(t, dtype).value_or(""), what,
                         "tensor");
}

absl::StatusOr<bool> FoldOnnxNode(OnnxGraph& g, const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  if (type == "Constant") {
    const onnx::AttributeProto* value = OnnxGraph::Attr(node, "value");
    if (value != nullptr && value->has_t()) {
      OFS_ASSIGN_OR_RETURN(LocalTensor t, TensorFromProto(value->t(), "its value"));
      OFS_ASSIGN_OR_RETURN(const Shape shape, Shape::Make(std::vector<int64_t>(t.dims().begin(), t.dims().end())));
      g.Define(node.output(0), TensorDesc{shape, t.dtype()}, t);
    } else if (const onnx::AttributeProto* i = OnnxGraph::Attr(node, "value_int")) {
      OFS_RETURN_IF_ERROR(Define(g, node, Ints{{}, {i->i()}}));
      return true;
    } else if (const onnx::AttributeProto* is = OnnxGraph::Attr(node, "value_ints")) {
      Ints v{{is->ints_size()}, std::vector<int64_t>(is->ints().begin(), is->ints().end())};
      OFS_RETURN_IF_ERROR(Define(g, node, v));
      return true;
    } else if (const onnx::AttributeProto* f = OnnxGraph::Attr(node, "value_float")) {
      OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::FromDoubles(DataType::kFloat32, {}, {f->f()}));
      g.Define(node.output(0), TensorDesc{Shape(), DataType::kFloat32}, t);
    } else {
      return absl::UnimplementedError("a Constant without value, value_int(s) or value_float");
    }
    ++g.out().folded[type];
    return true;
  }
  if (type == "Shape") {
    OFS_ASSIGN_OR_RETURN(const OnnxValue* x, g.Input(node, 0));
    const int64_t rank = x->desc.shape.rank();
    int64_t start = Normalized(OnnxGraph::AttrInt(node, "start", 0), rank);
    int64_t end = Normalized(OnnxGraph::AttrInt(node, "end", rank), rank);
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    Ints v;
    for (int64_t i = start; i < end; ++i) v.values.push_back(x->desc.shape.dim(static_cast<int>(i)));
    v.dims = {static_cast<int64_t>(v.values.size())};
    OFS_RETURN_IF_ERROR(Define(g, node, v));
    return true;
  }
  if (type == "ConstantOfShape") {
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, g.ConstInts(node, 0));
    OFS_ASSIGN_OR_RETURN(const Shape shape, Shape::Make(dims));
    if (shape.elem_cnt() > kMaxFoldedElements) {
      return absl::UnimplementedError(absl::StrCat("ConstantOfShape of ", shape.ToString(),
                                                   " is too large to fold at import"));
    }
    DataType dtype = DataType::kFloat32;
    double fill = 0;
    if (const onnx::AttributeProto* value = OnnxGraph::Attr(node, "value")) {
      OFS_ASSIGN_OR_RETURN(LocalTensor t, TensorFromProto(value->t(), "its value"));
      if (t.elem_cnt() != 1) return absl::InvalidArgumentError("its value must hold one element");
      dtype = t.dtype();
      fill = t.GetDouble(0);
    }
    OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Full(dtype, dims, fill));
    g.Define(node.output(0), TensorDesc{shape, dtype}, t);
    ++g.out().folded[type];
    return true;
  }
  // Integer arithmetic on constants only: float constants may be weights
  // an op reads (Mul by a scale), and those stay ops.
  std::vector<Ints> in;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    const OnnxValue* v = g.Find(node.input(i));
    if (v == nullptr || !v->constant || !IsInteger(v->desc.dtype)) return false;
    if (v->constant->elem_cnt() > kMaxFoldedElements) return false;
    in.push_back(ToInts(*v->constant));
  }
  if (in.empty()) return false;
  if (type == "Cast" && !IsInteger(FromOnnxType(static_cast<int>(OnnxGraph::AttrInt(node, "to", 0)))
                                       .value_or(DataType::kFloat32))) {
    return false;
  }
  OFS_ASSIGN_OR_RETURN(std::optional<Ints> out, Evaluate(node, in));
  if (!out) return false;
  OFS_RETURN_IF_ERROR(Define(g, node, *out));
  return true;
}

}  // namespace oneflow_sbp::importers
