// Helpers of the CUDA registry glue (cuda_*kernels.cc, gcc-built): launcher
// errors as statuses and device scratch. No CUDA header.
#ifndef KERNELS_CUDA_CUDA_GLUE_H_
#define KERNELS_CUDA_CUDA_GLUE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// The launcher's error string ("" on success) as a status of the op.
inline absl::Status Launched(const KernelContext& ctx, const std::string& err) {
  if (err.empty()) return absl::OkStatus();
  return ctx.Internal(absl::StrCat("CUDA launch failed: ", err));
}

// kUnimplemented naming input `input` unless its dtype is one of `dtypes`:
// the CPU kernels' dispatch status (the registry's dtype lists only
// document).
inline absl::Status RequireDtype(const KernelContext& ctx, const std::vector<DataType>& dtypes,
                                 int input) {
  const DataType t = ctx.input(input).dtype();
  if (std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end()) return absl::OkStatus();
  return ctx.UnsupportedDtype(t, ctx.input_bn(input));
}

// Device scratch of `count` T, freed after the thread's stream has drained.
template <typename T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string Allocate(int64_t count) {
    return oneflow_sbp::cuda::Malloc(&ptr_, std::max<int64_t>(count, 1) * sizeof(T));
  }
  T* get() const { return static_cast<T*>(ptr_); }
  ~Scratch() {
    if (ptr_ == nullptr) return;
    oneflow_sbp::cuda::Synchronize();
    oneflow_sbp::cuda::Free(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_CUDA_CUDA_GLUE_H_
