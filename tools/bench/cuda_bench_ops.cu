// cuBLAS called directly, for cuda_benchmark's baseline: the same GEMM the
// matmul kernels run, without the engine's launcher in between. nvcc-only.
#include <cublas_v2.h>

#include <string>

#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "tools/bench/cuda_bench_ops.h"

namespace oneflow_sbp::bench {

std::string CublasSgemmRowMajor(int m, int n, int k, const float* a, const float* b, float* c) {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    cublasCreate(&h);
    return h;
  }();
  if (handle == nullptr) return "cublasCreate failed";
  cublasSetStream(handle, static_cast<cudaStream_t>(::oneflow_sbp::cuda::ThreadStream()));
  const float alpha = 1, beta = 0;
  // Row-major C = A B is column-major C^T = B^T A^T.
  const cublasStatus_t s =
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, c, n);
  return s == CUBLAS_STATUS_SUCCESS ? "" : "cublasSgemm failed: " + std::to_string(s);
}

}  // namespace oneflow_sbp::bench
