// GilRelease: the GIL released around engine work, with a probe that
// proves the release without timing anything.
//
// Every binding that hands work to the engine (inference, boxing plans, a
// step on the rank threads) holds a GilRelease for the length of that work:
//
//   {
//     GilRelease released;          // the GIL is free from here...
//     result = engine.Infer(req);   // ...while the engine works
//   }
//
// The probe is for tests (python/tests/test_tensors.py). `_gil_probe_arm()`
// makes the next GilRelease wait, with the GIL already released, until
// another Python thread calls `_gil_probe_release()`; that thread can only
// run Python if the GIL really is free, so the call returning with the probe
// "released" proves it, on a machine however loaded. A binding that forgot
// to release would hold the other thread off until the probe's timeout, and
// the probe reports "timed out" instead of hanging.
#ifndef PYTHON_NATIVE_GIL_RELEASE_H_
#define PYTHON_NATIVE_GIL_RELEASE_H_

#include <pybind11/pybind11.h>

namespace oneflow_sbp::python {

class GilRelease {
 public:
  // Releases the GIL, then waits on an armed probe (at once when none is).
  GilRelease();
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  pybind11::gil_scoped_release release_;
};

// _gil_probe_arm(timeout_s), _gil_probe_release(), _gil_probe_result().
void BindGilProbe(pybind11::module_& m);

}  // namespace oneflow_sbp::python

#endif  // PYTHON_NATIVE_GIL_RELEASE_H_
