// Prints what the GPU path sees; exits 0 even without a GPU (that is a fact
// to report, not a failure), 1 if a present GPU fails to run the kernel.
#include <cstdio>
#include <vector>

#include "oneflow_sbp/storage/cuda/cuda_info.h"

int main() {
  const oneflow_sbp::cuda::CudaInfo info = oneflow_sbp::cuda::QueryCudaInfo();
  std::printf("cuda runtime %d, nccl %d, devices %d%s%s\n",
              info.runtime_version, info.nccl_version, info.device_count,
              info.error.empty() ? "" : ", ", info.error.c_str());
  if (info.device_count == 0) return 0;
  std::vector<int64_t> out(1000);
  const std::string err =
      oneflow_sbp::cuda::FillIotaOnDevice(0, 7, out.data(), out.size());
  if (!err.empty() || out[999] != 1006) {
    std::printf("kernel failed: %s\n", err.c_str());
    return 1;
  }
  std::printf("kernel ok\n");
  return 0;
}
