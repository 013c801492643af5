#include "oneflow_sbp/storage/cuda/cuda_device.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <vector>

#include "oneflow_sbp/storage/cuda/thread_device_slots.cuh"

namespace oneflow_sbp::cuda {
namespace {

std::string Err(cudaError_t e) { return e == cudaSuccess ? std::string() : cudaGetErrorString(e); }

cudaStream_t Stream() { return static_cast<cudaStream_t>(ThreadStream()); }

constexpr int kMaxRank = 8;
struct Box {
  int rank;
  int64_t ext[kMaxRank];
  int64_t src_stride[kMaxRank];
  int64_t dst_stride[kMaxRank];
};

template <typename T>
__device__ __forceinline__ T AddOf(T a, T b) { return a + b; }
template <>
__device__ __forceinline__ bool AddOf<bool>(bool a, bool b) { return a || b; }
template <>
__device__ __forceinline__ __half AddOf<__half>(__half a, __half b) {
  return __float2half(__half2float(a) + __half2float(b));
}
template <>
__device__ __forceinline__ __nv_bfloat16 AddOf<__nv_bfloat16>(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __float2bfloat16(__bfloat162float(a) + __bfloat162float(b));
}

// One thread per element: the box's flat index is decomposed into the
// source and destination offsets. Region copies in boxing are whole rows
// or blocks, so this stays memory-bound.
template <typename T, bool kAdd>
__global__ void BoxKernel(Box box, int64_t n, const T* src, T* dst) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, so = 0, dof = 0;
    for (int d = box.rank - 1; d >= 0; --d) {
      const int64_t c = rest % box.ext[d];
      rest /= box.ext[d];
      so += c * box.src_stride[d];
      dof += c * box.dst_stride[d];
    }
    if (kAdd) {
      dst[dof] = AddOf<T>(dst[dof], src[so]);
    } else {
      dst[dof] = src[so];
    }
  }
}

template <typename T>
std::string LaunchBox(const Box& box, int64_t n, const void* src, void* dst, bool add) {
  const int threads = 256;
  const int64_t blocks64 = (n + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 32 ? blocks64 : 65535 * 32);
  if (add) {
    BoxKernel<T, true><<<blocks, threads, 0, Stream()>>>(box, n, static_cast<const T*>(src),
                                                           static_cast<T*>(dst));
  } else {
    BoxKernel<T, false><<<blocks, threads, 0, Stream()>>>(box, n, static_cast<const T*>(src),
                                                            static_cast<T*>(dst));
  }
  return Err(cudaGetLastError());
}

}  // namespace

int DeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

int CurrentDevice() {
  int d = -1;
  if (cudaGetDevice(&d) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return d;
}

std::string SetCurrentDevice(int device) { return Err(cudaSetDevice(device)); }

namespace {

bool MakeStream(cudaStream_t* s) {
  return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking) == cudaSuccess;
}

// A thread's device work is complete once the thread has ended: whoever
// joins a rank thread may read what it wrote from any other stream (the
// rank-thread collectives read NaN before this, on the first GPU run).
void FreeStream(cudaStream_t s) {
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
}

}  // namespace

void* ThreadStream() {
  // Without a stream of its own a thread uses the legacy default stream:
  // slower, still ordered.
  thread_local ThreadDeviceSlots<cudaStream_t, MakeStream, FreeStream> streams;
  const int d = CurrentDevice();
  if (d < 0) return nullptr;
  return streams.Get(d);
}

std::string Malloc(void** ptr, int64_t bytes) { return Err(cudaMalloc(ptr, bytes)); }
std::string Free(void* ptr) { return Err(cudaFree(ptr)); }

std::string Copy(void* dst, const void* src, int64_t bytes, int kind) {
  if (bytes <= 0) return "";
  const cudaMemcpyKind k = kind == 0   ? cudaMemcpyDeviceToDevice
                           : kind == 1 ? cudaMemcpyHostToDevice
                                       : cudaMemcpyDeviceToHost;
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, k, Stream());
  if (e == cudaSuccess && kind != 0) e = cudaStreamSynchronize(Stream());
  return Err(e);
}

std::string Zero(void* dst, int64_t bytes) {
  if (bytes <= 0) return "";
  return Err(cudaMemsetAsync(dst, 0, bytes, Stream()));
}

bool IsDevicePointer(const void* p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // an unknown (host) pointer leaves an error to clear
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

std::string Synchronize() { return Err(cudaStreamSynchronize(Stream())); }

std::string LastError() { return Err(cudaGetLastError()); }

std::string CopyBox(int dtype, int elem_size, int rank, const int64_t* ext,
                    const int64_t* src_stride, const int64_t* dst_stride, const void* src,
                    void* dst, bool add) {
  if (rank < 0 || rank > kMaxRank) return "CopyBox rank out of range";
  Box box{};
  box.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    box.ext[d] = ext[d];
    box.src_stride[d] = src_stride[d];
    box.dst_stride[d] = dst_stride[d];
    n *= ext[d];
  }
  if (n == 0) return "";
  if (!add) {
    switch (elem_size) {
      case 1: return LaunchBox<uint8_t>(box, n, src, dst, false);
      case 2: return LaunchBox<uint16_t>(box, n, src, dst, false);
      case 4: return LaunchBox<uint32_t>(box, n, src, dst, false);
      case 8: return LaunchBox<uint64_t>(box, n, src, dst, false);
      default: return "CopyBox: element size not 1, 2, 4 or 8";
    }
  }
  switch (dtype) {
    case kF16: return LaunchBox<__half>(box, n, src, dst, true);
    case kBF16: return LaunchBox<__nv_bfloat16>(box, n, src, dst, true);
    case kF32: return LaunchBox<float>(box, n, src, dst, true);
    case kF64: return LaunchBox<double>(box, n, src, dst, true);
    case kI32: return LaunchBox<int32_t>(box, n, src, dst, true);
    case kI64: return LaunchBox<int64_t>(box, n, src, dst, true);
    case kBool: return LaunchBox<bool>(box, n, src, dst, true);
    default: return "CopyBox: no device add for this dtype";
  }
}

}  // namespace oneflow_sbp::cuda
