// CUDA runtime facts for the GPU path (built only under --config=cuda).
//
// Example:
//   absl::StatusOr<CudaInfo> info = QueryCudaInfo();
//   if (info.ok()) printf("%d GPUs, runtime %d\n", info->device_count,
//                         info->runtime_version);
#ifndef ONEFLOW_SBP_STORAGE_CUDA_CUDA_INFO_H_
#define ONEFLOW_SBP_STORAGE_CUDA_CUDA_INFO_H_

#include <cstdint>
#include <string>

namespace oneflow_sbp::cuda {

struct CudaInfo {
  int runtime_version = 0;  // e.g. 13000 for CUDA 13.0
  int device_count = 0;     // 0 when the machine has no GPU
  int nccl_version = 0;     // e.g. 22800 for NCCL 2.28.0
  std::string error;        // non-empty if the runtime could not be queried
};

// Asks the CUDA runtime and NCCL for their versions and the device count.
// Never aborts: a machine without a GPU gets device_count == 0 and the
// runtime's message in `error`.
CudaInfo QueryCudaInfo();

// Fills out[i] = start + i on device `device` with a kernel and copies the
// result back; returns the runtime's error string, empty on success. This is
// the smallest end-to-end check that nvcc-built kernels link and run.
std::string FillIotaOnDevice(int device, int64_t start, int64_t* out,
                             int64_t n);

}  // namespace oneflow_sbp::cuda

#endif  // ONEFLOW_SBP_STORAGE_CUDA_CUDA_INFO_H_
