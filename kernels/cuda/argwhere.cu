// argwhere on CUDA without a trip to the host: nonzero flags, an inclusive
// scan of them (CUB) giving each nonzero element its output row, then one
// thread per element writing its coordinates. The count (the last scan
// value) is written to output_size by the device, so the data-dependent
// size never leaves the device; the output's tail rows are zero-filled
// first, as the CPU kernel leaves them (index_kernels.cc).
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/reduce_conv.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

struct Dims {
  int rank;
  int64_t d[kMaxRank];
};

// Nonzero as the CPU's ConvertElement<bool>: NaN counts (NaN != 0).
template <typename T>
__device__ __forceinline__ bool Nonzero(T v) { return v != T(0); }
template <>
__device__ __forceinline__ bool Nonzero<__half>(__half v) { return __half2float(v) != 0.0f; }
template <>
__device__ __forceinline__ bool Nonzero<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v) != 0.0f;
}

template <typename T>
__global__ void FlagKernel(const T* x, int64_t n, int64_t* flags) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    flags[i] = Nonzero(x[i]) ? 1 : 0;
  }
}

// pos is the inclusive scan of the flags: element i, if nonzero, is output
// row pos[i] - 1.
template <typename L>
__global__ void ScatterKernel(Dims dims, int64_t n, const int64_t* flags, const int64_t* pos,
                              L* out, L* size) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (i == n - 1) size[0] = static_cast<L>(pos[i]);
    if (flags[i] == 0) continue;
    L* row = out + (pos[i] - 1) * dims.rank;
    int64_t rest = i;
    for (int d = dims.rank - 1; d >= 0; --d) {
      row[d] = static_cast<L>(rest % dims.d[d]);
      rest /= dims.d[d];
    }
  }
}

// CUB's own error code: cudaGetLastError (LaunchError) may hold nothing
// for an error CUB returned, which would report a failed scan as success.
std::string ScanError(const char* what, cudaError_t e) {
  cudaGetLastError();  // clear a launch error CUB may have left
  return std::string(what) + ": " + cudaGetErrorString(e);
}

template <typename T>
std::string Flags(const void* x, int64_t n, int64_t* flags) {
  FlagKernel<T><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(static_cast<const T*>(x), n,
                                                                 flags);
  return LaunchError("argwhere flags");
}

template <typename L>
std::string Scatter(const Dims& dims, int64_t n, const int64_t* flags, const int64_t* pos,
                    void* out, void* size) {
  ScatterKernel<L><<<GridFor(n, kThreads), kThreads, 0, Stream()>>>(
      dims, n, flags, pos, static_cast<L*>(out), static_cast<L*>(size));
  return LaunchError("argwhere scatter");
}

}  // namespace

std::string Argwhere(int dtype, int rank, const int64_t* dims, int64_t n, const void* x,
                     int index_dtype, void* out, void* size) {
  if (rank > kMaxRank) return "argwhere: rank above 8";
  if (index_dtype != DtypeCode::kI32 && index_dtype != DtypeCode::kI64) {
    return "argwhere: unsupported index dtype " + std::to_string(index_dtype);
  }
  const int64_t index_bytes = index_dtype == DtypeCode::kI32 ? 4 : 8;
  // Rows past the count stay zero; no element: the count is 0.
  std::string err = ::oneflow_sbp::cuda::Zero(out, n * rank * index_bytes);
  if (err.empty() && n == 0) err = ::oneflow_sbp::cuda::Zero(size, index_bytes);
  if (!err.empty() || n == 0) return err.empty() ? "" : "argwhere: " + err;
#if CUB_VERSION < 200700
  // Before CUB 2.7 (CCCL PR 2171) the scan's item count is an int: more
  // items would be truncated (a wrong count, rows never written), not
  // refused.
  if (n > 0x7fffffff) return "argwhere: more than 2^31 - 1 elements for this CUB's scan";
#endif
  Dims d{};
  d.rank = rank;
  for (int i = 0; i < rank; ++i) d.d[i] = dims[i];
  // Scratch: CUB's temporary storage first (the allocation's alignment),
  // then flags [n] and scan [n].
  size_t cub_bytes = 0;
  int64_t* null = nullptr;
  if (const cudaError_t e = cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, null, null, n,
                                                           Stream());
      e != cudaSuccess) {
    return ScanError("argwhere scan size", e);
  }
  Upload scratch;
  const int64_t table = n * static_cast<int64_t>(sizeof(int64_t));
  const int64_t tables_at = (static_cast<int64_t>(cub_bytes) + 255) / 256 * 256;
  err = scratch.Allocate(tables_at + 2 * table);
  if (!err.empty()) return "argwhere scratch: " + err;
  int64_t* flags = scratch.at<int64_t>(tables_at);
  int64_t* pos = scratch.at<int64_t>(tables_at + table);
  switch (dtype) {
    case DtypeCode::kF16: err = Flags<__half>(x, n, flags); break;
    case DtypeCode::kBF16: err = Flags<__nv_bfloat16>(x, n, flags); break;
    case DtypeCode::kF32: err = Flags<float>(x, n, flags); break;
    case DtypeCode::kF64: err = Flags<double>(x, n, flags); break;
    case DtypeCode::kI8: err = Flags<int8_t>(x, n, flags); break;
    case DtypeCode::kI32: err = Flags<int32_t>(x, n, flags); break;
    case DtypeCode::kI64: err = Flags<int64_t>(x, n, flags); break;
    default: err = Flags<uint8_t>(x, n, flags); break;  // u8, bool
  }
  if (!err.empty()) return err;
  if (const cudaError_t e = cub::DeviceScan::InclusiveSum(scratch.at<char>(0), cub_bytes, flags,
                                                           pos, n, Stream());
      e != cudaSuccess) {
    return ScanError("argwhere scan", e);
  }
  return index_dtype == DtypeCode::kI32 ? Scatter<int32_t>(d, n, flags, pos, out, size)
                                        : Scatter<int64_t>(d, n, flags, pos, out, size);
}

}  // namespace oneflow_sbp::kernels::cuda
