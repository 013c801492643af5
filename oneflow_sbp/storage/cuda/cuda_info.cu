#include "oneflow_sbp/storage/cuda/cuda_info.h"

#include <cuda_runtime.h>
#include <nccl.h>

namespace oneflow_sbp::cuda {
namespace {

__global__ void FillIotaKernel(int64_t start, int64_t* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = start + i;
}

}  // namespace

CudaInfo QueryCudaInfo() {
  CudaInfo info;
  cudaRuntimeGetVersion(&info.runtime_version);
  ncclGetVersion(&info.nccl_version);
  const cudaError_t err = cudaGetDeviceCount(&info.device_count);
  if (err != cudaSuccess) {
    info.device_count = 0;
    info.error = cudaGetErrorString(err);
  }
  return info;
}

std::string FillIotaOnDevice(int device, int64_t start, int64_t* out,
                             int64_t n) {
  cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) return cudaGetErrorString(err);
  int64_t* buf = nullptr;
  err = cudaMalloc(&buf, n * sizeof(int64_t));
  if (err != cudaSuccess) return cudaGetErrorString(err);
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  FillIotaKernel<<<static_cast<unsigned>(blocks), threads>>>(start, buf, n);
  err = cudaMemcpy(out, buf, n * sizeof(int64_t), cudaMemcpyDeviceToHost);
  cudaFree(buf);
  return err == cudaSuccess ? std::string() : cudaGetErrorString(err);
}

}  // namespace oneflow_sbp::cuda
