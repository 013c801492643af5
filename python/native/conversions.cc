#include "python/native/conversions.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "python/native/host_array.h"

namespace oneflow_sbp::python {

void ThrowIfError(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      throw py::value_error(message);
    case absl::StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kNotFound:
      throw py::key_error(message);
    case absl::StatusCode::kDeadlineExceeded:
      PyErr_SetString(PyExc_TimeoutError, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kCancelled:
      // The interrupt check left KeyboardInterrupt pending; raise it.
      if (PyErr_Occurred() != nullptr) throw py::error_already_set();
      PyErr_SetString(PyExc_KeyboardInterrupt, message.c_str());
      throw py::error_already_set();
    default:
      throw std::runtime_error(message);
  }
}

absl::StatusOr<DataType> DataTypeFromName(const std::string& name) {
  static const std::pair<const char*, DataType> kNumpyNames[] = {
      {"float16", DataType::kFloat16}, {"half", DataType::kFloat16},
      {"bfloat16", DataType::kBFloat16}, {"float32", DataType::kFloat32},
      {"float", DataType::kFloat32},   {"float64", DataType::kFloat64},
      {"double", DataType::kFloat64},  {"int8", DataType::kInt8},
      {"int32", DataType::kInt32},     {"int64", DataType::kInt64},
      {"long", DataType::kInt64},      {"uint8", DataType::kUInt8},
      {"bool", DataType::kBool},
  };
  for (const auto& [n, t] : kNumpyNames) {
    if (name == n) return t;
  }
  absl::StatusOr<DataType> t = ParseDataType(name);
  if (t.ok()) return t;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown dtype ", QuotedInput(name), "; use f16, bf16, f32, f64, i8, i32, i64, u8, bool or numpy's "
      "names (float32, int64, ...)"));
}

py::dtype NumpyDtypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return py::dtype("float16");
    case DataType::kBFloat16: return py::dtype("float32");
    case DataType::kFloat32: return py::dtype("float32");
    case DataType::kFloat64: return py::dtype("float64");
    case DataType::kInt8: return py::dtype("int8");
    case DataType::kInt32: return py::dtype("int32");
    case DataType::kInt64: return py::dtype("int64");
    case DataType::kUInt8: return py::dtype("uint8");
    case DataType::kBool: return py::dtype("bool");
  }
  return py::dtype("float32");
}

absl::StatusOr<DataType> DataTypeOfNumpy(const py::dtype& dtype) {
  // Through Python attributes: Debian's pybind11 2.10 reads the descriptor
  // struct directly, whose layout numpy 2 changed (elsize moved).
  const std::string kind_text = py::str(dtype.attr("kind"));
  const char kind = kind_text.empty() ? '?' : kind_text[0];
  const ssize_t size = dtype.attr("itemsize").cast<ssize_t>();
  if (kind == 'f' && size == 2) return DataType::kFloat16;
  if (kind == 'f' && size == 4) return DataType::kFloat32;
  if (kind == 'f' && size == 8) return DataType::kFloat64;
  if (kind == 'i' && size == 1) return DataType::kInt8;
  if (kind == 'i' && size == 4) return DataType::kInt32;
  if (kind == 'i' && size == 8) return DataType::kInt64;
  if (kind == 'u' && size == 1) return DataType::kUInt8;
  if (kind == 'b') return DataType::kBool;
  return absl::InvalidArgumentError(absl::StrCat(
      "numpy dtype ", std::string(py::str(py::reinterpret_borrow<py::object>(dtype))), " has no engine dtype (f16, f32, f64, i8, i32, "
      "i64, u8, bool; bf16 from float32 with dtype='bf16')"));
}

absl::StatusOr<LocalTensor> LocalFromNumpy(const py::array& array, std::optional<DataType> dtype) {
  py::object keep;
  OFS_ASSIGN_OR_RETURN(HostArray h, HostArrayOf(array, dtype, &keep));
  if (h.converted.defined()) return h.converted;
  OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Empty(h.dtype, h.dims));
  if (t.byte_size() > 0) std::memcpy(t.raw_data(), h.data, t.byte_size());
  return t;
}

py::array NumpyView(const LocalTensor& t, bool writable) {
  std::vector<ssize_t> dims(t.dims().begin(), t.dims().end());
  if (t.dtype() == DataType::kBFloat16) {
    std::vector<float> f(t.elem_cnt());
    for (int64_t i = 0; i < t.elem_cnt(); ++i) f[i] = static_cast<float>(t.GetDouble(i));
    py::array out = CopyToNumpy(DataType::kFloat32, t.dims(), f.data());
    if (!writable) out.attr("flags").attr("writeable") = false;
    return out;
  }
  // The capsule owns a handle to the storage; numpy keeps it as the base.
  auto* keep = new LocalTensor(t);
  py::capsule owner(keep, [](void* p) { delete static_cast<LocalTensor*>(p); });
  // Explicit strides: pybind11 2.10 would compute them from the descriptor
  // struct (see DataTypeOfNumpy).
  std::vector<ssize_t> strides(dims.size());
  ssize_t stride = ByteSizeOf(t.dtype());
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<ssize_t>(dims[i], 1);
  }
  py::array out(NumpyDtypeOf(t.dtype()), dims, strides, const_cast<void*>(t.raw_data()), owner);
  if (!writable) out.attr("flags").attr("writeable") = false;
  return out;
}

py::array CopyToNumpy(DataType dtype, absl::Span<const int64_t> dims, const void* data) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  py::bytes bytes(static_cast<const char*>(data), n * ByteSizeOf(dtype));
  py::module_ np = py::module_::import("numpy");
  py::object flat = np.attr("frombuffer")(bytes, NumpyDtypeOf(dtype));
  return flat.attr("reshape")(ShapeToPython(dims)).attr("copy")();
}

Placement ParsePlacement(const std::string& text) { return Unwrap(Placement::Parse(text)); }

NdSbp ParseNdSbp(const std::string& text, const std::string& what) {
  absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
  if (!nd.ok()) {
    throw py::value_error(what.empty() ? std::string(nd.status().message())
                                       : absl::StrCat(what, ": ", nd.status().message()));
  }
  return *nd;
}

absl::StatusOr<Shape> ShapeFromPython(const py::handle& dims) {
  std::vector<int64_t> v;
  try {
    for (py::handle d : dims) v.push_back(d.cast<int64_t>());
  } catch (const py::cast_error&) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", std::string(py::repr(dims)), " must be a sequence of ints"));
  }
  return Shape::Make(v);
}

py::tuple ShapeToPython(absl::Span<const int64_t> dims) {
  py::tuple t(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t[i] = py::int_(dims[i]);
  return t;
}

namespace {

// numpy's scalar base classes, looked up once (the module lives as long as
// the interpreter; the handles are never released).
const py::handle& NumpyType(const char* name) {
  static const py::handle bool_ = py::object(py::module_::import("numpy").attr("bool_")).release();
  static const py::handle integer = py::object(py::module_::import("numpy").attr("integer")).release();
  static const py::handle floating = py::object(py::module_::import("numpy").attr("floating")).release();
  if (name[0] == 'b') return bool_;
  return name[0] == 'i' ? integer : floating;
}

bool IsIntLike(const py::handle& v) {
  return (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) ||
         py::isinstance(v, NumpyType("integer"));
}

absl::Status AttrTypeError(const std::string& name, const py::handle& value) {
  return absl::InvalidArgumentError(absl::StrCat("attribute ", QuotedInput(name), ": ",
                                                 QuotedInput(std::string(py::repr(value))),
                                                 " must be a bool, int, float, str or a sequence "
                                                 "of ints"));
}

// An int or numpy integer as int64; one past int64 is an error naming it.
absl::StatusOr<int64_t> IntFromPython(const std::string& name, const py::handle& value) {
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) {
    PyErr_Clear();
    return AttrTypeError(name, value);
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    return absl::InvalidArgumentError(absl::StrCat("attribute ", QuotedInput(name), ": ",
                                                   QuotedInput(std::string(py::repr(value))),
                                                   " does not fit in int64"));
  }
  return static_cast<int64_t>(v);
}

}  // namespace

absl::StatusOr<AttrValue> AttrFromPython(const std::string& name, const py::handle& value) {
  // The built-in types first, without touching numpy: every attribute the
  // package's own functions pass, on every op call (probing numpy's types
  // through its module cost ~4 us an attribute).
  PyObject* o = value.ptr();
  if (PyBool_Check(o)) return AttrValue(o == Py_True);
  if (PyFloat_CheckExact(o)) return AttrValue(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_CheckExact(o)) return AttrValue(value.cast<std::string>());
  if (py::isinstance(value, NumpyType("bool_"))) return AttrValue(value.cast<bool>());
  if (IsIntLike(value)) {
    OFS_ASSIGN_OR_RETURN(int64_t i, IntFromPython(name, value));
    return AttrValue(i);
  }
  if (PyFloat_Check(o) || py::isinstance(value, NumpyType("floating"))) {
    return AttrValue(value.cast<double>());
  }
  if (py::isinstance<py::str>(value)) return AttrValue(value.cast<std::string>());
  // A sequence of ints: a list, a tuple, a 1-D numpy array.
  if (PySequence_Check(o) && !PyBytes_Check(o)) {
    std::vector<int64_t> ints;
    py::iterator it = py::reinterpret_steal<py::iterator>(PyObject_GetIter(o));
    if (!it) {
      PyErr_Clear();
      return AttrTypeError(name, value);
    }
    for (py::handle e : it) {
      if (!IsIntLike(e)) return AttrTypeError(name, value);
      OFS_ASSIGN_OR_RETURN(int64_t i, IntFromPython(name, e));
      ints.push_back(i);
    }
    return AttrValue(std::move(ints));
  }
  return AttrTypeError(name, value);
}

absl::StatusOr<AttrMap> AttrsFromPython(const py::dict& attrs) {
  AttrMap map;
  for (auto [k, v] : attrs) {
    const std::string name = py::str(k);
    OFS_ASSIGN_OR_RETURN(AttrValue value, AttrFromPython(name, v));
    map.Set(name, std::move(value));
  }
  return map;
}

py::object AttrToPython(const AttrValue& value) {
  switch (value.type()) {
    case AttrType::kInt: return py::int_(value.i());
    case AttrType::kFloat: return py::float_(value.f());
    case AttrType::kBool: return py::bool_(value.b());
    case AttrType::kString: return py::str(value.s());
    case AttrType::kInts: {
      py::list l;
      for (int64_t x : value.ints()) l.append(x);
      return std::move(l);
    }
  }
  return py::none();
}

py::dict AttrsToPython(const AttrMap& attrs) {
  py::dict d;
  for (const auto& [name, value] : attrs.entries()) d[py::str(name)] = AttrToPython(value);
  return d;
}

absl::Status StatusFromPythonError(py::error_already_set& error, const std::string& where) {
  std::string type = "Exception";
  try {
    type = py::str(error.type().attr("__name__"));
  } catch (...) {
  }
  std::string text;
  try {
    text = py::str(error.value());
  } catch (...) {
  }
  const std::string message = absl::StrCat(where, " raised ", type, ": ", text);
  error.restore();
  PyErr_Clear();
  return absl::InternalError(message);
}

}  // namespace oneflow_sbp::python
