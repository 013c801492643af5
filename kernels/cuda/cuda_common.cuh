// Shared device helpers of the .cu kernels: compute types, conversions,
// dtype dispatch, launch sizes and block reductions. nvcc-only.
#ifndef KERNELS_CUDA_CUDA_COMMON_CUH_
#define KERNELS_CUDA_CUDA_COMMON_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "oneflow_sbp/storage/cuda/cuda_device.h"

namespace oneflow_sbp::kernels::cuda {

using ::oneflow_sbp::cuda::DtypeCode;

// Halves compute in float, as on the CPU.
template <typename T> struct Compute { using type = T; };
template <> struct Compute<__half> { using type = float; };
template <> struct Compute<__nv_bfloat16> { using type = float; };
template <typename T> using ComputeT = typename Compute<T>::type;

template <typename C, typename T>
__device__ __forceinline__ C To(T v) { return static_cast<C>(v); }
template <> __device__ __forceinline__ float To<float, __half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float To<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <> __device__ __forceinline__ __half To<__half, float>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 To<__nv_bfloat16, float>(float v) {
  return __float2bfloat16(v);
}
template <> __device__ __forceinline__ double To<double, __half>(__half v) {
  return __half2float(v);
}
template <> __device__ __forceinline__ double To<double, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
// double -> half goes through float, as the CPU's ConvertElement does
// (oneflow_sbp/storage/element_type.h): rounding twice, like the CPU, rather than
// once (__double2half), which differs from it in the last bit for about
// one value in 8000 (the double-accumulating kernels: norms, attention,
// adam, reductions, cross-entropy, embedding grad).
template <> __device__ __forceinline__ __half To<__half, double>(double v) {
  return __float2half(static_cast<float>(v));
}
template <> __device__ __forceinline__ __nv_bfloat16 To<__nv_bfloat16, double>(double v) {
  return __float2bfloat16(static_cast<float>(v));
}

inline cudaStream_t Stream() {
  return static_cast<cudaStream_t>(::oneflow_sbp::cuda::ThreadStream());
}

inline std::string LaunchError(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return "";
  return std::string(kernel) + ": " + cudaGetErrorString(e);
}

// N elements of T moved as one load or store (elementwise_access.cuh).
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  static constexpr int kN = N;
  T v[N];
};
// 16 bytes of T: the unit of the vectorised loads and stores of the
// memory-bound same-shape paths (elementwise.cu, select.cu, sgd.cu, adam in nn.cu), used where every
// pointer is Aligned16.
template <typename T>
using Pack = Vec<T, 16 / sizeof(T)>;

inline bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Grid for a grid-stride loop over n items.
inline unsigned GridFor(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65536) blocks = 65536;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// Device scratch filled from host arrays (index tables the host built),
// freed after the stream drains when it goes out of scope.
class Upload {
 public:
  ~Upload() {
    if (ptr_ == nullptr) return;
    ::oneflow_sbp::cuda::Synchronize();
    ::oneflow_sbp::cuda::Free(ptr_);
  }
  std::string Allocate(int64_t bytes) {
    return ::oneflow_sbp::cuda::Malloc(&ptr_, bytes < 8 ? 8 : bytes);
  }
  // Copies `bytes` from `host` to `offset` bytes into the buffer.
  std::string Put(int64_t offset, const void* host, int64_t bytes) {
    return ::oneflow_sbp::cuda::Copy(static_cast<char*>(ptr_) + offset, host, bytes, /*kind=*/1);
  }
  template <typename T>
  T* at(int64_t offset) const {
    return reinterpret_cast<T*>(static_cast<char*>(ptr_) + offset);
  }

 private:
  void* ptr_ = nullptr;
};

// Calls f(T{}) for a floating dtype; returns an error string otherwise.
template <typename F>
std::string DispatchFloating(const char* kernel, int dtype, F&& f) {
  switch (dtype) {
    case DtypeCode::kF32: return f(float{});
    case DtypeCode::kF64: return f(double{});
    case DtypeCode::kF16: return f(__half{});
    case DtypeCode::kBF16: return f(__nv_bfloat16{});
    default: return std::string(kernel) + ": unsupported dtype " + std::to_string(dtype);
  }
}

// Calls f(T{}) for any of the nine dtypes (bool as bool); kernels that
// take only some exclude the others with `if constexpr`.
template <typename F>
std::string DispatchAll(const char* kernel, int dtype, F&& f) {
  switch (dtype) {
    case DtypeCode::kI8: return f(int8_t{});
    case DtypeCode::kI32: return f(int32_t{});
    case DtypeCode::kI64: return f(int64_t{});
    case DtypeCode::kU8: return f(uint8_t{});
    case DtypeCode::kBool: return f(bool{});
    default: return DispatchFloating(kernel, dtype, f);
  }
}

// Calls f(U{}) with an unsigned type of `bytes` bytes (1, 2, 4, 8), for
// kernels that move elements without reading them (every dtype).
template <typename F>
std::string DispatchBytes(const char* kernel, int bytes, F&& f) {
  switch (bytes) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: return std::string(kernel) + ": unsupported element size " + std::to_string(bytes);
  }
}

// Whether element i of a mask of dtype `dtype` is nonzero (kept): the
// CPU's NonzeroFlags (kernels/cpu/mask_flags.h) on the device, for
// attention's key_padding_mask and masked_mean_pool's mask. A bool is read
// as its byte; NaN counts as nonzero, -0.0 as zero, as on the CPU.
__device__ __forceinline__ bool MaskNonzero(const void* mask, int dtype, int64_t i) {
  switch (dtype) {
    case DtypeCode::kF16: return __half2float(static_cast<const __half*>(mask)[i]) != 0.f;
    case DtypeCode::kBF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(mask)[i]) != 0.f;
    case DtypeCode::kF32: return static_cast<const float*>(mask)[i] != 0.f;
    case DtypeCode::kF64: return static_cast<const double*>(mask)[i] != 0.0;
    case DtypeCode::kI8: return static_cast<const int8_t*>(mask)[i] != 0;
    case DtypeCode::kI32: return static_cast<const int32_t*>(mask)[i] != 0;
    case DtypeCode::kI64: return static_cast<const int64_t*>(mask)[i] != 0;
    default: return static_cast<const uint8_t*>(mask)[i] != 0;  // u8, bool
  }
}

// Block-wide sum / max of one value per thread (blockDim.x a multiple of
// 32, <= 1024); every thread gets the result.
template <typename C>
__device__ C BlockSum(C v) {
  __shared__ C shared[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  v = lane < warps ? shared[lane] : C(0);
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename C>
__device__ C BlockMax(C v) {
  __shared__ C shared[32];
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  v = lane < warps ? shared[lane] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_CUDA_COMMON_CUH_
