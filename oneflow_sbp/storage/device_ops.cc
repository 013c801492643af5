#include "oneflow_sbp/storage/device_ops.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/storage/element_type.h"

namespace oneflow_sbp {
namespace {

// Host memory. Storage keeps its own caching allocator for the CPU (see
// local_tensor.cc); this backend serves generic callers and the tests.
class CpuDeviceOps final : public DeviceOps {
 public:
  DeviceType device() const override { return DeviceType::kCpu; }

  absl::StatusOr<void*> Allocate(int64_t bytes) override {
    constexpr int64_t kAlign = 64;
    const int64_t padded = std::max<int64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    void* p = std::aligned_alloc(kAlign, static_cast<size_t>(padded));
    if (p == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("out of memory allocating ", bytes,
                                                       " bytes on cpu"));
    }
    return p;
  }
  void Free(void* data, int64_t) override { std::free(data); }

  absl::Status Copy(void* dst, const void* src, int64_t bytes, CopyDirection) override {
    if (bytes > 0) std::memmove(dst, src, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  absl::Status Zero(void* dst, int64_t bytes) override {
    if (bytes > 0) std::memset(dst, 0, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }

  absl::Status CopyBox(DataType dtype, const StridedBox& box, const void* src, void* dst,
                       bool add) override {
    if (box.rank < 0 || box.rank > StridedBox::kMaxRank) {
      return absl::InvalidArgumentError(absl::StrCat("CopyBox of rank ", box.rank));
    }
    if (box.elem_cnt() == 0) return absl::OkStatus();
    VisitDataType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* s = static_cast<const T*>(src);
      T* d = static_cast<T*>(dst);
      std::array<int64_t, StridedBox::kMaxRank> idx{};
      const int64_t n = box.elem_cnt();
      for (int64_t i = 0; i < n; ++i) {
        int64_t so = 0, dof = 0;
        for (int k = 0; k < box.rank; ++k) {
          so += idx[k] * box.src_stride[k];
          dof += idx[k] * box.dst_stride[k];
        }
        if (!add) {
          d[dof] = s[so];
        } else if constexpr (std::is_same_v<T, bool>) {
          d[dof] = d[dof] || s[so];
        } else if constexpr (kIsHalfType<T>) {
          d[dof] = T(static_cast<float>(d[dof]) + static_cast<float>(s[so]));
        } else {
          d[dof] = static_cast<T>(d[dof] + s[so]);
        }
        for (int k = box.rank - 1; k >= 0; --k) {
          if (++idx[k] < box.ext[k]) break;
          idx[k] = 0;
        }
      }
    });
    return absl::OkStatus();
  }

  absl::Status Synchronize() override { return absl::OkStatus(); }
};

constexpr int kNumDeviceTypes = 2;
// Indexed by DeviceType; the CPU backend is installed on first use.
std::atomic<DeviceOps*>* Backends() {
  static std::atomic<DeviceOps*> backends[kNumDeviceTypes] = {};
  static CpuDeviceOps* cpu = [] {
    auto* c = new CpuDeviceOps;
    backends[static_cast<int>(DeviceType::kCpu)].store(c);
    return c;
  }();
  (void)cpu;
  return backends;
}

}  // namespace

absl::StatusOr<DeviceOps*> GetDeviceOps(DeviceType device) {
  const int i = static_cast<int>(device);
  DeviceOps* ops = i < kNumDeviceTypes ? Backends()[i].load() : nullptr;
  if (ops == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "no ", DeviceTypeName(device),
        " device backend in this program (build with --config=cuda and link "
        "//oneflow_sbp/storage/cuda:device_ops_cuda)"));
  }
  return ops;
}

bool RegisterDeviceOps(DeviceOps* ops) {
  const int i = static_cast<int>(ops->device());
  if (i >= kNumDeviceTypes) return false;
  DeviceOps* expected = nullptr;
  return Backends()[i].compare_exchange_strong(expected, ops);
}

}  // namespace oneflow_sbp
