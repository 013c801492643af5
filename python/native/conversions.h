// Conversions at the Python boundary: absl::Status to Python exceptions,
// numpy arrays to and from LocalTensor, Python attribute values to
// AttrMap. Everything here runs with the GIL held.
//
// Status mapping (the package's documented contract):
//   kInvalidArgument, kOutOfRange  -> ValueError
//   kUnimplemented                 -> NotImplementedError
//   kNotFound                      -> KeyError
//   kDeadlineExceeded              -> TimeoutError
//   kCancelled (an interrupt)      -> the pending KeyboardInterrupt
//   anything else                  -> RuntimeError
// with the engine's message unchanged.
#ifndef PYTHON_NATIVE_CONVERSIONS_H_
#define PYTHON_NATIVE_CONVERSIONS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::python {

namespace py = pybind11;

// Throws the Python exception for a non-OK status.
void ThrowIfError(const absl::Status& status);

template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  ThrowIfError(value.status());
  return std::move(*value);
}

// "f32" and numpy's names ("float32", "int64", "bool", ...) to a DataType;
// kInvalidArgument naming the text otherwise.
absl::StatusOr<DataType> DataTypeFromName(const std::string& name);
// The numpy dtype holding a DataType's elements (bf16: float32, converted).
py::dtype NumpyDtypeOf(DataType dtype);
// The DataType of a numpy dtype; kInvalidArgument for one we lack.
absl::StatusOr<DataType> DataTypeOfNumpy(const py::dtype& dtype);

// A LocalTensor holding `array`'s elements (one copy, C order), as
// `dtype` (the array's own when unset; a different one converts).
absl::StatusOr<LocalTensor> LocalFromNumpy(const py::array& array,
                                           std::optional<DataType> dtype = std::nullopt);
// A numpy array over `t`'s storage without copying (it keeps the storage
// alive); read-only unless `writable`. bf16 converts to a float32 copy.
py::array NumpyView(const LocalTensor& t, bool writable);

// A fresh numpy array of `dtype` holding a copy of `data` (row-major
// `dims`). Made by numpy itself (frombuffer + copy): Debian's pybind11
// 2.10 computes strides from the descriptor struct that numpy 2 changed.
py::array CopyToNumpy(DataType dtype, absl::Span<const int64_t> dims, const void* data);

// Parsed or raised as ValueError; `what` (if any) prefixes the message.
Placement ParsePlacement(const std::string& text);
NdSbp ParseNdSbp(const std::string& text, const std::string& what = "");

absl::StatusOr<Shape> ShapeFromPython(const py::handle& dims);
py::tuple ShapeToPython(absl::Span<const int64_t> dims);

// Python attribute values: bool, int, float, str, or a sequence of ints.
absl::StatusOr<AttrValue> AttrFromPython(const std::string& name, const py::handle& value);
absl::StatusOr<AttrMap> AttrsFromPython(const py::dict& attrs);
py::object AttrToPython(const AttrValue& value);
py::dict AttrsToPython(const AttrMap& attrs);

// The Python error being handled as a status: "<Type>: <message>",
// prefixed with `where` (the op and the callback). Clears the error.
absl::Status StatusFromPythonError(py::error_already_set& error, const std::string& where);

}  // namespace oneflow_sbp::python

#endif  // PYTHON_NATIVE_CONVERSIONS_H_
