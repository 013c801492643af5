// The native module `oneflow_sbp._C`, bound in parts (one per concept):
//   rules_bindings.cc    values, infer, plan_boxing, ops, the engine
//   session_bindings.cc  Session (ranks driven from Python) and Tensor
//   custom_ops.cc        ops, SBP rules and kernels written in Python
//   io_bindings.cc       safetensors files and distributed checkpoints
#ifndef PYTHON_NATIVE_BINDINGS_H_
#define PYTHON_NATIVE_BINDINGS_H_

#include <pybind11/pybind11.h>

#include "engine/engine.h"

namespace oneflow_sbp::python {

// The engine every call of the module shares (built-in catalog plus the
// ops registered from Python), created on first use.
engine::Engine& SharedEngine();

void BindRules(pybind11::module_& m);
void BindSession(pybind11::module_& m);
void BindCustomOps(pybind11::module_& m);
// After BindSession: it adds methods to Session.
void BindIo(pybind11::module_& m);

}  // namespace oneflow_sbp::python

#endif  // PYTHON_NATIVE_BINDINGS_H_
