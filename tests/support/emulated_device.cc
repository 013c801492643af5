#include "tests/support/emulated_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/check.h"

namespace oneflow_sbp::emulated {
namespace {

constexpr int64_t kAlign = 64;
constexpr unsigned char kPoison = 0xFF;

const char* DirectionName(CopyDirection dir) {
  switch (dir) {
    case CopyDirection::kSameDevice: return "kSameDevice";
    case CopyDirection::kHostToDevice: return "kHostToDevice";
    case CopyDirection::kDeviceToHost: return "kDeviceToHost";
  }
  return "?";
}

}  // namespace

EmulatedDevice* EmulatedDevice::Install() {
  static EmulatedDevice* const device = [] {
    auto* d = new EmulatedDevice;
    OFS_CHECK(RegisterDeviceOps(d))
        << "another cuda backend is installed; a test with the emulated device must not link "
           "//oneflow_sbp/storage/cuda:device_ops_cuda";
    return d;
  }();
  return device;
}

absl::StatusOr<void*> EmulatedDevice::Allocate(int64_t bytes) {
  absl::MutexLock lock(&mu_);
  if (!present_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "emulated cuda storage of ", bytes, " bytes: no CUDA device on this machine"));
  }
  if (bytes < 0) return Misuse(absl::StrCat("Allocate(", bytes, ")"));
  const int64_t padded = std::max<int64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  void* p = std::aligned_alloc(kAlign, static_cast<size_t>(padded));
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", bytes, " bytes on emulated cuda"));
  }
  std::memset(p, kPoison, static_cast<size_t>(padded));
  live_[reinterpret_cast<uintptr_t>(p)] = bytes;
  return p;
}

void EmulatedDevice::Free(void* data, int64_t bytes) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(data));
  if (it == live_.end()) {
    (void)Misuse("Free of a pointer that is not a live emulated allocation");
    return;
  }
  if (it->second != bytes) {
    (void)Misuse(absl::StrCat("Free of ", bytes, " bytes of an allocation of ", it->second));
  }
  // Poisoned again, so that a stale handle reads garbage, not old values.
  std::memset(data, kPoison, static_cast<size_t>(it->second));
  live_.erase(it);
  std::free(data);
}

bool EmulatedDevice::Owns(const void* p, int64_t bytes) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = live_.upper_bound(a);
  if (it == live_.begin()) return false;
  --it;
  return a + static_cast<uintptr_t>(std::max<int64_t>(bytes, 0)) <=
         it->first + static_cast<uintptr_t>(it->second);
}

absl::Status EmulatedDevice::Misuse(std::string what) {
  misuses_.push_back(what);
  return absl::InternalError(absl::StrCat("emulated cuda: ", what));
}

absl::Status EmulatedDevice::Copy(void* dst, const void* src, int64_t bytes, CopyDirection dir) {
  {
    absl::MutexLock lock(&mu_);
    const bool src_on_device = Owns(src, bytes);
    const bool dst_on_device = Owns(dst, bytes);
    const bool want_src = dir != CopyDirection::kHostToDevice;
    const bool want_dst = dir != CopyDirection::kDeviceToHost;
    if (src_on_device != want_src || dst_on_device != want_dst) {
      return Misuse(absl::StrCat(DirectionName(dir), " copy of ", bytes, " bytes from ",
                                 src_on_device ? "device" : "host", " to ",
                                 dst_on_device ? "device" : "host", " memory"));
    }
    switch (dir) {
      case CopyDirection::kSameDevice: ++counts_.same_device; break;
      case CopyDirection::kHostToDevice: ++counts_.host_to_device; break;
      case CopyDirection::kDeviceToHost: ++counts_.device_to_host; break;
    }
  }
  if (bytes > 0) std::memmove(dst, src, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status EmulatedDevice::Zero(void* dst, int64_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    if (!Owns(dst, bytes)) return Misuse(absl::StrCat("Zero of ", bytes, " bytes of host memory"));
  }
  if (bytes > 0) std::memset(dst, 0, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status EmulatedDevice::CopyBox(DataType dtype, const StridedBox& box, const void* src,
                                     void* dst, bool add) {
  {
    // The box is strided: only its first element's address is checked.
    absl::MutexLock lock(&mu_);
    if (!Owns(src, 1) || !Owns(dst, 1)) {
      return Misuse("CopyBox between pointers that are not both emulated device memory");
    }
  }
  absl::StatusOr<DeviceOps*> cpu = GetDeviceOps(DeviceType::kCpu);
  if (!cpu.ok()) return cpu.status();
  return (*cpu)->CopyBox(dtype, box, src, dst, add);
}

bool EmulatedDevice::Holds(const void* p) const {
  absl::MutexLock lock(&mu_);
  return Owns(p, 1);
}

void EmulatedDevice::SetPresent(bool present) {
  absl::MutexLock lock(&mu_);
  present_ = present;
}

EmulatedDevice::Counts EmulatedDevice::copies() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

int64_t EmulatedDevice::live_allocations() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(live_.size());
}

std::vector<std::string> EmulatedDevice::misuses() const {
  absl::MutexLock lock(&mu_);
  return misuses_;
}

void EmulatedDevice::ResetStats() {
  absl::MutexLock lock(&mu_);
  counts_ = Counts();
  misuses_.clear();
}

absl::Status RegisterCpuKernelsAsCuda(kernels::KernelRegistry& registry,
                                      absl::Span<const std::string> cuda_ops) {
  const kernels::KernelRegistry& global = kernels::KernelRegistry::Global();
  for (const std::string& op : global.OpsWithKernels(DeviceType::kCpu)) {
    absl::Status s = registry.Register(op, DeviceType::kCpu, *global.Find(op, DeviceType::kCpu),
                                       global.Dtypes(op, DeviceType::kCpu));
    if (!s.ok()) return s;
  }
  for (const std::string& op : cuda_ops) {
    absl::StatusOr<kernels::KernelFn> cpu = global.Find(op, DeviceType::kCpu);
    if (!cpu.ok()) {
      return absl::NotFoundError(absl::StrCat("no cpu kernel for '", op, "' to run as cuda"));
    }
    absl::Status s = registry.Register(op, DeviceType::kCuda, *cpu);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status RegisterWrongCudaKernel(kernels::KernelRegistry& registry, const std::string& op) {
  absl::StatusOr<kernels::KernelFn> cpu = kernels::KernelRegistry::Global().Find(op, DeviceType::kCpu);
  if (!cpu.ok()) return cpu.status();
  kernels::KernelFn right = *std::move(cpu);
  return registry.Register(op, DeviceType::kCuda,
                           [right](kernels::KernelContext& ctx) -> absl::Status {
                             absl::Status s = right(ctx);
                             if (!s.ok()) return s;
                             LocalTensor& y = ctx.output(0);
                             if (ctx.parallel_id() != 0 && y.dtype() == DataType::kFloat32 &&
                                 y.elem_cnt() > 0) {
                               y.data<float>()[0] += 1;
                             }
                             return absl::OkStatus();
                           });
}

}  // namespace oneflow_sbp::emulated
