// The native module oneflow_sbp._C. The Python package (python/oneflow_sbp)
// is the public face; this module is its engine room.
#include <pybind11/pybind11.h>

#include "python/native/bindings.h"
#include "python/native/gil_release.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "oneflow_sbp's native engine (use the oneflow_sbp package)";
  oneflow_sbp::python::BindRules(m);
  oneflow_sbp::python::BindSession(m);
  oneflow_sbp::python::BindCustomOps(m);
  oneflow_sbp::python::BindIo(m);
  oneflow_sbp::python::BindGilProbe(m);
}
