// Property checks shared by the fuzz targets. A failed property is a
// finding, so it aborts (libFuzzer saves the input; the replay test fails):
// the one place where aborting on input is the point.
#ifndef FUZZ_FUZZ_CHECK_H_
#define FUZZ_FUZZ_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::fuzz {

// Prints `what` and aborts.
[[noreturn]] void PropertyFailed(const char* file, int line, const char* cond,
                                 const std::string& what);

// No error from the library may be kInternal (or unknown) on any input:
// those codes mean a broken invariant, not bad input.
void CheckNotInternal(const absl::Status& status, const std::string& what);

// The rank slices of `shape` as `nd_sbp` over `placement` tile the tensor
// exactly: every element is held by exactly prod(hierarchy over B/P axes)
// ranks and no slice leaves the tensor. Checked element by element for
// tensors of at most `max_elems` elements, by counts above that.
void CheckSlicesTile(const Shape& shape, const NdSbp& nd_sbp, const Placement& placement,
                     int64_t max_elems = 1 << 12);

}  // namespace oneflow_sbp::fuzz

#define FUZZ_CHECK(cond, what)                                                     \
  do {                                                                             \
    if (!(cond)) ::oneflow_sbp::fuzz::PropertyFailed(__FILE__, __LINE__, #cond, (what)); \
  } while (0)

#endif  // FUZZ_FUZZ_CHECK_H_
