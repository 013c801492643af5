#include "python/native/gil_release.h"

#include <atomic>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace oneflow_sbp::python {
namespace py = pybind11;
namespace {

// One probe per process: a test arms it, one GilRelease consumes it.
class GilProbe {
 public:
  static GilProbe& Get() {
    static GilProbe* probe = new GilProbe();
    return *probe;
  }

  void Arm(double timeout_s) {
    absl::MutexLock lock(&mu_);
    armed_ = true;
    armed_hint_.store(true, std::memory_order_release);
    released_ = false;
    timeout_ = absl::Seconds(timeout_s);
    result_ = "armed";
  }

  // Called with the GIL released. Only the first GilRelease after Arm waits.
  // Every engine call from Python passes here: when nothing is armed (the
  // usual case) it reads one atomic and takes no lock.
  void WaitIfArmed() {
    if (!armed_hint_.load(std::memory_order_acquire)) return;
    absl::MutexLock lock(&mu_);
    if (!armed_) return;
    armed_ = false;
    armed_hint_.store(false, std::memory_order_release);
    result_ = "waiting";
    const bool released =
        mu_.AwaitWithTimeout(absl::Condition(&released_), timeout_);
    result_ = released ? "released" : "timed out";
  }

  // From another Python thread (so with the GIL): lets the waiting call go.
  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }

  std::string Result() {
    absl::MutexLock lock(&mu_);
    return result_;
  }

 private:
  absl::Mutex mu_;
  // armed_ as a lock-free hint for the fast path; written under mu_.
  std::atomic<bool> armed_hint_{false};
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration timeout_ ABSL_GUARDED_BY(mu_);
  std::string result_ ABSL_GUARDED_BY(mu_) = "idle";
};

}  // namespace

GilRelease::GilRelease() { GilProbe::Get().WaitIfArmed(); }

void BindGilProbe(py::module_& m) {
  m.def(
      "_gil_probe_arm",
      [](double timeout_s) {
        if (!(timeout_s > 0) || timeout_s > 600) {
          throw py::value_error(absl::StrCat("timeout_s=", timeout_s, ": seconds in (0, 600]"));
        }
        GilProbe::Get().Arm(timeout_s);
      },
      py::arg("timeout_s"),
      "Test hook: the next engine call waits, with the GIL released, for "
      "_gil_probe_release() from another thread (python/native/gil_release.h).");
  m.def("_gil_probe_release", [] { GilProbe::Get().Release(); });
  m.def("_gil_probe_result", [] { return GilProbe::Get().Result(); },
        "idle, armed, waiting, released or timed out");
}

}  // namespace oneflow_sbp::python
