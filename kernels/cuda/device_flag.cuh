// A device-side error flag: kernels that meet an element the CPU kernel
// rejects with a status (an integer pow with a negative exponent, an
// integer fmod by 0) cannot return one, so they set this int to 1 and keep
// going; the launcher reads it back after the launch and reports it. One
// int of scratch and one synchronising copy, paid only by the dtypes that
// can raise it. nvcc-only.
#ifndef KERNELS_CUDA_DEVICE_FLAG_CUH_
#define KERNELS_CUDA_DEVICE_FLAG_CUH_

#include <string>

#include "kernels/cuda/cuda_common.cuh"

namespace oneflow_sbp::kernels::cuda {

class DeviceFlag {
 public:
  // Allocates the flag and clears it (on this thread's stream, so it is
  // clear before any later kernel of the stream runs).
  std::string Init() {
    const int zero = 0;
    std::string e = buf_.Allocate(sizeof(int));
    if (e.empty()) e = buf_.Put(0, &zero, sizeof(int));
    return e;
  }
  // The device int for the kernel's argument.
  int* get() const { return buf_.at<int>(0); }
  // *raised = whether any kernel set the flag; the copy to the host waits
  // for the stream's earlier work (cuda_device.h's Copy).
  std::string Read(bool* raised) const {
    int v = 0;
    std::string e = ::oneflow_sbp::cuda::Copy(&v, buf_.at<int>(0), sizeof(int), /*kind=*/2);
    *raised = e.empty() && v != 0;
    return e;
  }

 private:
  Upload buf_;  // freed after the stream drains
};

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_DEVICE_FLAG_CUH_
