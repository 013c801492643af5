// DeviceOps: the memory primitives of one device type (allocate, copy,
// zero-fill, strided box copy, accumulate), so that storage and the boxing
// copies work on any device the program links a backend for.
//
// Example:
//   absl::StatusOr<DeviceOps*> ops = GetDeviceOps(DeviceType::kCuda);
//   if (!ops.ok()) return ops.status();     // "no cuda device backend ..."
//   OFS_RETURN_IF_ERROR((*ops)->Copy(dst, src, bytes, CopyDirection::kHostToDevice));
//
// The CPU backend is always present. A CUDA backend registers itself when
// the program links //oneflow_sbp/storage/cuda:device_ops_cuda (only built under
// --config=cuda), so the default build has no CUDA dependency and asking
// it for kCuda is a clean kUnimplemented.
//
// Ordering: every call on one device's backend is ordered after the
// previous ones (the CUDA backend uses one stream per thread and
// synchronises it before a copy returns to the host), so callers never see
// partial results and need no events. This costs speed on CUDA but keeps
// the contract of the CPU path: when a call returns, the bytes are there.
#ifndef ONEFLOW_SBP_STORAGE_DEVICE_OPS_H_
#define ONEFLOW_SBP_STORAGE_DEVICE_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp {

enum class CopyDirection : uint8_t {
  kSameDevice,    // both pointers on this backend's device
  kHostToDevice,  // src on the host, dst on this device
  kDeviceToHost,  // src on this device, dst on the host
};

// A box of `rank` dims (extents `ext`) copied between two strided layouts,
// strides in elements. rank <= kMaxRank; rank 0 is one element.
struct StridedBox {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t ext[kMaxRank] = {};
  int64_t src_stride[kMaxRank] = {};
  int64_t dst_stride[kMaxRank] = {};

  int64_t elem_cnt() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= ext[d];
    return n;
  }
};

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  virtual DeviceType device() const = 0;

  // kResourceExhausted when out of memory, naming the size and device.
  virtual absl::StatusOr<void*> Allocate(int64_t bytes) = 0;
  virtual void Free(void* data, int64_t bytes) = 0;

  virtual absl::Status Copy(void* dst, const void* src, int64_t bytes, CopyDirection dir) = 0;
  virtual absl::Status Zero(void* dst, int64_t bytes) = 0;
  // dst[box] = src[box] (add = false) or dst[box] += src[box] (add = true,
  // logical or for bool), both on this device.
  virtual absl::Status CopyBox(DataType dtype, const StridedBox& box, const void* src,
                               void* dst, bool add) = 0;
  // Waits until every call issued by this thread has finished.
  virtual absl::Status Synchronize() = 0;
  // True when `p` points into memory of this backend's device. The
  // communicators of a device world use it to tell a call on plain host
  // buffers (small metadata, per-row statistics) from one on device
  // buffers. The default claims every pointer (right for the CPU backend).
  virtual bool Holds(const void* p) const {
    (void)p;
    return true;
  }
};

// The backend of `device`; kUnimplemented naming the device and the build
// option when none is linked.
absl::StatusOr<DeviceOps*> GetDeviceOps(DeviceType device);

// For backends: installs `ops` (not owned, lives for the program) as the
// backend of ops->device(). Returns false if one is installed already.
bool RegisterDeviceOps(DeviceOps* ops);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_STORAGE_DEVICE_OPS_H_
