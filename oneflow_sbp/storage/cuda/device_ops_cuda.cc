// The CUDA DeviceOps backend: registers itself at program start when this
// library is linked (only under --config=cuda). Allocation caches freed
// buffers by (device, size), as the CPU storage does, because
// cudaMalloc/cudaFree synchronise the device and an eager loop allocates
// the same shapes each step. The device is part of the key because rank
// threads of one process may each drive their own GPU (NCCL worlds of
// threads): a buffer freed on one GPU must not be handed to another.
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/storage/device_ops.h"

namespace oneflow_sbp::cuda {
namespace {

static_assert(static_cast<int>(DataType::kFloat16) == kF16 &&
                  static_cast<int>(DataType::kBFloat16) == kBF16 &&
                  static_cast<int>(DataType::kFloat32) == kF32 &&
                  static_cast<int>(DataType::kFloat64) == kF64 &&
                  static_cast<int>(DataType::kInt8) == kI8 &&
                  static_cast<int>(DataType::kInt32) == kI32 &&
                  static_cast<int>(DataType::kInt64) == kI64 &&
                  static_cast<int>(DataType::kUInt8) == kU8 &&
                  static_cast<int>(DataType::kBool) == kBool,
              "cuda::DtypeCode must equal DataType");

absl::Status ToStatus(absl::string_view what, const std::string& err) {
  if (err.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuda ", what, ": ", err));
}

class CudaDeviceOps final : public DeviceOps {
 public:
  DeviceType device() const override { return DeviceType::kCuda; }

  absl::StatusOr<void*> Allocate(int64_t bytes) override {
    const Key key{CurrentDevice(), bytes};
    {
      absl::MutexLock lock(&mu_);
      auto it = free_.find(key);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        return p;
      }
    }
    if (DeviceCount() == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cuda storage of ", bytes, " bytes: no CUDA device on this machine"));
    }
    void* p = nullptr;
    std::string err = Malloc(&p, bytes);
    if (!err.empty()) {
      // Give cached buffers back and try once more before failing.
      ReleaseCache();
      err = Malloc(&p, bytes);
    }
    if (!err.empty()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory allocating ", bytes, " bytes on cuda: ", err));
    }
    absl::MutexLock lock(&mu_);
    owner_[p] = key.first;
    return p;
  }

  void Free(void* data, int64_t bytes) override {
    // Work on other threads' streams may still read the buffer; wait for
    // this thread's stream (the usual owner) before reuse.
    (void)cuda::Synchronize();
    absl::MutexLock lock(&mu_);
    auto owner = owner_.find(data);
    const int device = owner != owner_.end() ? owner->second : CurrentDevice();
    free_[Key{device, bytes}].push_back(data);
  }

  absl::Status Copy(void* dst, const void* src, int64_t bytes, CopyDirection dir) override {
    const int kind = dir == CopyDirection::kSameDevice ? 0
                     : dir == CopyDirection::kHostToDevice ? 1
                                                          : 2;
    return ToStatus("copy", cuda::Copy(dst, src, bytes, kind));
  }

  bool Holds(const void* p) const override { return cuda::IsDevicePointer(p); }

  absl::Status Zero(void* dst, int64_t bytes) override {
    return ToStatus("zero-fill", cuda::Zero(dst, bytes));
  }

  absl::Status CopyBox(DataType dtype, const StridedBox& box, const void* src, void* dst,
                       bool add) override {
    const std::string err =
        cuda::CopyBox(static_cast<int>(dtype), ByteSizeOf(dtype), box.rank, box.ext,
                      box.src_stride, box.dst_stride, src, dst, add);
    if (!err.empty() && add && (dtype == DataType::kInt8 || dtype == DataType::kUInt8)) {
      return absl::UnimplementedError(
          absl::StrCat("cuda region add of ", DataTypeName(dtype), ": ", err));
    }
    return ToStatus("region copy", err);
  }

  absl::Status Synchronize() override { return ToStatus("synchronize", cuda::Synchronize()); }

 private:
  void ReleaseCache() {
    absl::MutexLock lock(&mu_);
    for (auto& [key, list] : free_) {
      for (void* p : list) {
        (void)cuda::Free(p);
        owner_.erase(p);
      }
    }
    free_.clear();
  }

  // (device, bytes).
  using Key = std::pair<int, int64_t>;
  absl::Mutex mu_;
  absl::flat_hash_map<Key, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  // The device each buffer was allocated on.
  absl::flat_hash_map<void*, int> owner_ ABSL_GUARDED_BY(mu_);
};

const bool kRegistered = RegisterDeviceOps(new CudaDeviceOps);

}  // namespace
}  // namespace oneflow_sbp::cuda
