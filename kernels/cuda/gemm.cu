// Matrix products through cuBLAS. Row-major C = op(A) op(B) is computed as
// the column-major C^T = op(B)^T op(A)^T, so no transposes are copied.
// One handle per host thread and GPU, bound to that thread's stream.
#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "oneflow_sbp/storage/cuda/thread_device_slots.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

bool MakeHandle(cublasHandle_t* h) {
  if (cublasCreate(h) != CUBLAS_STATUS_SUCCESS) return false;
  cublasSetStream(*h, Stream());
  // f16/bf16 accumulate in float and round once, as the CPU kernel
  // (matmul_kernels.cc); cuBLAS's default lets split-K kernels reduce
  // their partial sums in the output type (f16/bf16 rounding per
  // partial).
  cublasSetMathMode(*h, static_cast<cublasMath_t>(
                            CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  return true;
}

void FreeHandle(cublasHandle_t h) { cublasDestroy(h); }

// One handle per (host thread, GPU), like the streams (ThreadStream): a
// handle is bound to the GPU current at cublasCreate, and holds a workspace
// of device memory, so a thread's handles go when it ends (kept, they
// exhausted the GPU after a few thousand verify candidates: "cublasCreate
// failed", then "out of memory").
cublasHandle_t Handle() {
  // The thread's stream first: thread-locals are destroyed in the reverse
  // order of their construction, so the handles (bound to the streams) go
  // before the streams do.
  (void)Stream();
  thread_local ::oneflow_sbp::cuda::ThreadDeviceSlots<cublasHandle_t, MakeHandle, FreeHandle>
      handles;
  const int d = ::oneflow_sbp::cuda::CurrentDevice();
  return d < 0 ? nullptr : handles.Get(d);
}

}  // namespace

std::string Gemm(int dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                 double alpha, const void* a, int64_t stride_a, const void* b, int64_t stride_b,
                 double beta, void* c, int64_t stride_c, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return "";
  // cuBLAS takes int extents and leading dims: a larger one would wrap.
  const int64_t lda = std::max<int64_t>(1, trans_a ? m : k);  // row-major leading dims
  const int64_t ldb = std::max<int64_t>(1, trans_b ? k : n);
  for (int64_t v : {m, n, k, batch, lda, ldb}) {
    if (v > INT_MAX) {
      return "gemm: extent " + std::to_string(v) + " (m " + std::to_string(m) + ", n " +
             std::to_string(n) + ", k " + std::to_string(k) + ", batch " +
             std::to_string(batch) + ") above cuBLAS's int range";
    }
  }
  cudaDataType_t type;
  int elem = 4;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (dtype) {
    case DtypeCode::kF32: type = CUDA_R_32F; break;
    case DtypeCode::kF64: type = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; elem = 8; break;
    case DtypeCode::kF16: type = CUDA_R_16F; elem = 2; break;
    case DtypeCode::kBF16: type = CUDA_R_16BF; elem = 2; break;
    default: return "gemm: unsupported dtype " + std::to_string(dtype);
  }
  if (k == 0) {
    // An empty contraction: C = beta * C, i.e. zeros (beta 0, whatever C
    // held, as the CPU's Gemm) or C unchanged (beta 1, _add_to_output).
    // Done here rather than trusting cuBLAS's quick returns with k = 0.
    if (beta != 0) return "";
    const size_t row = static_cast<size_t>(m * n) * elem;
    const cudaError_t e =
        stride_c == m * n || batch == 1
            ? cudaMemsetAsync(c, 0, row * static_cast<size_t>(batch), Stream())
            : cudaMemset2DAsync(c, static_cast<size_t>(stride_c) * elem, 0, row,
                                static_cast<size_t>(batch), Stream());
    return e == cudaSuccess ? "" : std::string("gemm: ") + cudaGetErrorString(e);
  }
  cublasHandle_t h = Handle();
  if (h == nullptr) return "gemm: cublasCreate failed";
  // Column-major view: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  // Leading dims are at least 1 (cuBLAS refuses 0 even where unused).
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* alpha_p = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&alpha)
                                                      : static_cast<const void*>(&alpha_f);
  const void* beta_p = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&beta)
                                                     : static_cast<const void*>(&beta_f);
  const cublasStatus_t s = cublasGemmStridedBatchedEx(
      h, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha_p, b,
      type, static_cast<int>(ldb), stride_b, a, type, static_cast<int>(lda), stride_a, beta_p, c,
      type, static_cast<int>(n), stride_c, static_cast<int>(batch), compute,
      CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return std::string("gemm: cuBLAS ") + cublasGetStatusString(s);
  }
  return LaunchError("gemm");
}

}  // namespace oneflow_sbp::kernels::cuda
