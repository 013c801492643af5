// BoxCopy: the one data-movement primitive of the CPU layout kernels
// (slice, narrow, their gradients, slice_update, cat, stack, split,
// transpose, expand, broadcast_like), in GLOBAL coordinates so that a
// kernel copies exactly the part of an op that its local shards hold.
//
// Model: an index space (a box of integer points) and, for the source and
// the destination tensor, one DimMap per tensor dim saying which global
// coordinate a point reads or writes:
//   coord = offset + step * point[index_dim]     (index_dim >= 0)
//   coord = offset                               (index_dim == -1)
// A point is copied when its source coordinates lie inside the source's
// local slice and its destination coordinates inside the destination's.
// Because every tensor dim depends on one index dim, those points form a
// box, so the copy is a strided loop with contiguous inner runs.
//
// Example: y = x[1:7:2, :] with x f32[8,5] split S(0) over 2 ranks
// (rank 1 holds rows [4,8)) and y held whole (a P output):
//   BoxCopyPlan p;
//   p.box = {{0, 3}, {0, 5}};                       // y's index space
//   p.src = {DimMap{0, 1, 2}, DimMap{1, 0, 1}};      // x[1 + 2i, j]
//   p.dst = {DimMap{0, 0, 1}, DimMap{1, 0, 1}};      // y[i, j]
//   BoxCopy(p, &x_local, x_slice, y_local, y_slice);
//   // copies rows i = 2 (x row 5) ; wanted = 15, copied = 5
//
// With a null source, BoxCopy writes zeros at every wanted point instead.
//
// Device tensors (a dst on a device other than the CPU, src on the same
// device) take the same plan and become one strided DeviceOps::CopyBox, so
// every kernel built on BoxCopy (copy_kernel_util.h) runs on any device
// with a backend (device_ops.h); boxes of more than StridedBox::kMaxRank
// index dims are kUnimplemented there.
#ifndef KERNELS_COMMON_BOX_COPY_H_
#define KERNELS_COMMON_BOX_COPY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::kernels {

struct DimMap {
  int index_dim = -1;
  int64_t offset = 0;
  // >= 0; 0 means every point reads the same coordinate (broadcast).
  int64_t step = 1;
};

// The identity map of index dim d.
inline DimMap SameDim(int d) { return DimMap{d, 0, 1}; }

struct BoxCopyPlan {
  std::vector<IndexRange> box;
  std::vector<DimMap> src;  // one per source tensor dim
  std::vector<DimMap> dst;  // one per destination tensor dim
};

struct BoxCopyCount {
  // Points whose destination lies in the destination's local slice.
  int64_t wanted = 0;
  // Of those, points whose source lies in the source's local slice (the
  // ones copied). copied < wanted means the local source lacks some.
  int64_t copied = 0;
};

// Copies (or zero-fills, for src == nullptr) as described above. `src` and
// `dst` hold their slices' elements (dims == slice sizes). kInternal for a
// plan that does not fit the tensors (a kernel bug): wrong number of
// DimMaps, an index_dim outside the box, a negative step, different
// dtypes, or tensor dims that differ from the slice sizes.
absl::StatusOr<BoxCopyCount> BoxCopy(const BoxCopyPlan& plan, const LocalTensor* src,
                                     const TensorSlice& src_slice, LocalTensor& dst,
                                     const TensorSlice& dst_slice);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_BOX_COPY_H_
