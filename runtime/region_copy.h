// Copies between local shards and packed buffers by GLOBAL index region:
// the data-moving primitives of the boxing executor.
//
// A local shard is a LocalTensor together with the TensorSlice it holds of
// the logical tensor (tensor_slice_view.h); its dims equal the slice's
// extents. A region is a box in global coordinates inside that slice.
// Packed buffers hold a region's elements contiguously in row-major order,
// which is also exactly the layout of a shard whose slice is that region.
//
//   // rank holds rows [4,8) of a [8,6] tensor; send the rows [5,7) x cols [0,3)
//   PackRegion(shard, slice, region, buffer.data());
//   UnpackRegion(buffer.data(), region, &out, out_slice, RegionOp::kAdd);
//
// Runs are copied with memcpy; trailing dims a region covers fully are
// merged into one run, so whole-row regions are one copy. Shards on another
// device (CUDA) go to that device's DeviceOps::CopyBox as one strided box;
// packed buffers are then on the shard's device too.
#ifndef RUNTIME_REGION_COPY_H_
#define RUNTIME_REGION_COPY_H_

#include "absl/status/status.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::runtime {

enum class RegionOp : uint8_t {
  kCopy,
  kAdd,  // sums (logical or for bool): partial sums meeting
};

// kInvalidArgument unless `shard`'s dims are `slice`'s extents and
// `region` lies inside `slice` (same rank). Every function below checks it.
absl::Status CheckRegion(const LocalTensor& shard, const TensorSlice& slice,
                         const TensorSlice& region);

// Writes region.elem_cnt() elements of `shard` to `out`.
absl::Status PackRegion(const LocalTensor& shard, const TensorSlice& slice,
                        const TensorSlice& region, void* out);
// Reads region.elem_cnt() elements from `in` into `shard` (copy or add).
absl::Status UnpackRegion(const void* in, const TensorSlice& region, LocalTensor* shard,
                          const TensorSlice& slice, RegionOp op);
// Shard to shard, both with their slices; `region` inside both.
absl::Status CopyRegion(const LocalTensor& from, const TensorSlice& from_slice,
                        const TensorSlice& region, LocalTensor* to, const TensorSlice& to_slice,
                        RegionOp op);

// Element-wise `accumulator += addend` over `count` elements of `dtype`
// (or for bool): the reduction of partial sums.
void AddInto(DataType dtype, void* accumulator, const void* addend, int64_t count);

}  // namespace oneflow_sbp::runtime
#endif  // RUNTIME_REGION_COPY_H_
