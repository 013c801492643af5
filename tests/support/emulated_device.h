// An EMULATED cuda device, for tests only (testonly; never linked into the
// sbp tool or a test that does not ask for it): lets the device path of
// the shard harness and `sbp verify --device=cuda` run on a machine
// without a GPU, where the real CUDA backend is compile-only.
//
//   EmulatedDevice* dev = EmulatedDevice::Install();  // kCuda's backend now
//   KernelRegistry kernels;
//   ASSERT_OK(RegisterCpuKernelsAsCuda(kernels, {"relu", "matmul"}));
//   VerifyOptions o;  o.device = DeviceType::kCuda;  o.kernels = &kernels;
//   ... RunVerify ...
//   EXPECT_THAT(dev->misuses(), IsEmpty());
//   EXPECT_EQ(dev->live_allocations(), 0);
//
// What it is: a DeviceOps registered for DeviceType::kCuda whose memory is
// host memory in allocations of its own, so CPU kernels can run on "cuda"
// tensors unchanged. What it checks, as far as host memory allows:
//  * every fresh allocation is poisoned (0xFF bytes: NaN for floats, -1
//    for integers), and so is memory when it is freed;
//  * Copy: a kSameDevice copy must stay inside live allocations on both
//    sides, kHostToDevice must write one and read none, kDeviceToHost must
//    read one and write none, so a caller that uses the wrong direction
//    (or a host pointer as a device one) gets kInternal naming it;
//  * Zero and CopyBox must address a live allocation; Free must name one,
//    with the size it was allocated with.
// Every violation is an error where the call returns a Status and is also
// recorded in misuses() (Free cannot return one). What it cannot check: a
// kernel that reads a host pointer it was never given (all of it is host
// memory), and nothing about real CUDA kernels, streams or timing.
//
// It stays installed for the rest of the program (DeviceOps backends are
// never removed), so only binaries that call Install() have a cuda device.
#ifndef TESTS_SUPPORT_EMULATED_DEVICE_H_
#define TESTS_SUPPORT_EMULATED_DEVICE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::emulated {

class EmulatedDevice final : public DeviceOps {
 public:
  // The program's emulated device, installed as the kCuda backend on the
  // first call. Aborts if another kCuda backend (the real one) got there
  // first: a test linking both is a build mistake.
  static EmulatedDevice* Install();

  DeviceType device() const override { return DeviceType::kCuda; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override;
  void Free(void* data, int64_t bytes) override;
  absl::Status Copy(void* dst, const void* src, int64_t bytes, CopyDirection dir) override;
  absl::Status Zero(void* dst, int64_t bytes) override;
  absl::Status CopyBox(DataType dtype, const StridedBox& box, const void* src, void* dst,
                       bool add) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }
  // True for the emulated device's live allocations only.
  bool Holds(const void* p) const override;

  // false: allocations fail as the real backend's do on a machine without
  // a GPU (kFailedPrecondition "no CUDA device").
  void SetPresent(bool present);

  struct Counts {
    int64_t host_to_device = 0;
    int64_t device_to_host = 0;
    int64_t same_device = 0;
  };
  Counts copies() const;
  int64_t live_allocations() const;
  std::vector<std::string> misuses() const;
  // Forgets counts and misuses (not the live allocations).
  void ResetStats();

 private:
  EmulatedDevice() = default;
  // True if [p, p + bytes) lies inside one live allocation.
  bool Owns(const void* p, int64_t bytes) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Misuse(std::string what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  bool present_ ABSL_GUARDED_BY(mu_) = true;
  // Start address -> size of every live allocation.
  std::map<uintptr_t, int64_t> live_ ABSL_GUARDED_BY(mu_);
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> misuses_ ABSL_GUARDED_BY(mu_);
};

// Fills `registry` for a verify run on the emulated device: every CPU
// kernel of KernelRegistry::Global() under kCpu (the reference), and the
// same CPU kernel under kCuda for each op in `cuda_ops` (on emulated
// memory, which is host memory, CPU code runs as is). kNotFound for an op
// without a CPU kernel.
absl::Status RegisterCpuKernelsAsCuda(kernels::KernelRegistry& registry,
                                      absl::Span<const std::string> cuda_ops);

// Registers under kCuda a deliberately wrong kernel for the unary `op`:
// its CPU kernel, then element 0 of output 0 off by one on every rank but
// parallel id 0 (f32 outputs). One rank is right, so only sharded runs
// can catch it.
absl::Status RegisterWrongCudaKernel(kernels::KernelRegistry& registry, const std::string& op);

}  // namespace oneflow_sbp::emulated

#endif  // TESTS_SUPPORT_EMULATED_DEVICE_H_
