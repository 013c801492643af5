// ThreadDeviceSlots: one CUDA object per (host thread, GPU), made on first
// use and released when the thread ends.
//
//   thread_local ThreadDeviceSlots<cudaStream_t, MakeStream, FreeStream> streams;
//   cudaStream_t s = streams.Get(device);   // nullptr if Make failed
//
// Streams and cuBLAS handles belong to the GPU that was current when they
// were made, so a thread that moves to another GPU gets that GPU's own.
// Rank threads are made per run (a verify run makes thousands), so objects
// kept for the process's life leak: each slot is released by `Free` with its
// GPU current when the thread ends, and the thread's GPU is restored after.
// nvcc-only (CUDA runtime types); the C++ side sees cuda_device.h.
#ifndef ONEFLOW_SBP_STORAGE_CUDA_THREAD_DEVICE_SLOTS_CUH_
#define ONEFLOW_SBP_STORAGE_CUDA_THREAD_DEVICE_SLOTS_CUH_

#include <cuda_runtime.h>

#include <vector>

namespace oneflow_sbp::cuda {

// Make(T*) returns true when it made an object; Free(T) releases one.
template <typename T, bool (*Make)(T*), void (*Free)(T)>
class ThreadDeviceSlots {
 public:
  ThreadDeviceSlots() = default;
  ThreadDeviceSlots(const ThreadDeviceSlots&) = delete;
  ThreadDeviceSlots& operator=(const ThreadDeviceSlots&) = delete;
  ~ThreadDeviceSlots() {
    int current = -1;
    const bool have_current = cudaGetDevice(&current) == cudaSuccess;
    for (size_t d = 0; d < slots_.size(); ++d) {
      if (slots_[d] == T{} || cudaSetDevice(static_cast<int>(d)) != cudaSuccess) continue;
      Free(slots_[d]);
    }
    if (have_current) cudaSetDevice(current);
    cudaGetLastError();  // a destructor has no one to report to
  }

  // The object of GPU `device` (>= 0) for this thread; T{} if it could not
  // be made (the next call tries again).
  T Get(int device) {
    if (static_cast<size_t>(device) >= slots_.size()) slots_.resize(device + 1, T{});
    if (slots_[device] == T{}) {
      T made{};
      if (!Make(&made)) {
        cudaGetLastError();
        return T{};
      }
      slots_[device] = made;
    }
    return slots_[device];
  }

 private:
  std::vector<T> slots_;
};

}  // namespace oneflow_sbp::cuda

#endif  // ONEFLOW_SBP_STORAGE_CUDA_THREAD_DEVICE_SLOTS_CUH_
