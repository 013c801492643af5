// The CUDA runtime calls of the GPU path behind a plain C++ interface:
// nvcc compiles cuda_device.cu, and the gcc-built code (absl, kernels,
// DeviceOps) calls these without including any CUDA header.
//
// Example:
//   void* p = nullptr;
//   std::string err = cuda::Malloc(&p, 1 << 20);   // "" on success
//   if (err.empty()) err = cuda::Zero(p, 1 << 20);
//
// Every function returns "" on success or the runtime's error string.
// Work goes to one stream per host thread (ThreadStream), so rank threads
// sharing a GPU overlap; Copy to or from the host and Synchronize wait for
// that stream, so a returned host copy is complete.
#ifndef ONEFLOW_SBP_STORAGE_CUDA_CUDA_DEVICE_H_
#define ONEFLOW_SBP_STORAGE_CUDA_CUDA_DEVICE_H_

#include <cstdint>
#include <string>

namespace oneflow_sbp::cuda {

// Element codes shared with .cu files; equal to oneflow_sbp::DataType
// values (checked by static_assert in device_ops_cuda.cc).
enum DtypeCode : int {
  kF16 = 0,
  kBF16 = 1,
  kF32 = 2,
  kF64 = 3,
  kI8 = 4,
  kI32 = 5,
  kI64 = 6,
  kU8 = 7,
  kBool = 8,
};

// Number of visible devices; 0 (and no error) on a machine without a GPU.
int DeviceCount();
// The calling thread's current device (cudaGetDevice), or -1 on error.
int CurrentDevice();
// Makes `device` the calling thread's current device (cudaSetDevice).
std::string SetCurrentDevice(int device);
// This thread's stream on its current device (one per thread and device,
// created on first use), as an opaque cudaStream_t.
void* ThreadStream();

std::string Malloc(void** ptr, int64_t bytes);
std::string Free(void* ptr);
// kind: 0 device to device, 1 host to device, 2 device to host.
std::string Copy(void* dst, const void* src, int64_t bytes, int kind);
std::string Zero(void* dst, int64_t bytes);
// True for device (or managed) memory, false for host memory.
bool IsDevicePointer(const void* p);
std::string Synchronize();

// dst[box] = src[box] or dst[box] += src[box] for a strided box of `rank`
// dims (rank <= 8), strides in elements. Copies move elem_size bytes per
// element whatever the dtype; adds read `dtype` (kUnimplemented-like error
// string for i8/u8).
std::string CopyBox(int dtype, int elem_size, int rank, const int64_t* ext,
                    const int64_t* src_stride, const int64_t* dst_stride, const void* src,
                    void* dst, bool add);

// The last launch error on this thread ("" if none) after a kernel launch.
std::string LastError();

}  // namespace oneflow_sbp::cuda

#endif  // ONEFLOW_SBP_STORAGE_CUDA_CUDA_DEVICE_H_
