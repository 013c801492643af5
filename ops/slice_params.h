// The normalised parameters of slicing, narrowing and transposing, shared
// by the shape functions and SBP rules (concat_slice_ops.cc, shape_ops.cc)
// and by the kernels that execute them (kernels/), so that both read
// the attributes the same way.
//
// Example:
//   ResolveSliceDims({0, -3}, {4, INT64_MAX}, {1, 2}, *TensorDesc::Parse("f32[4,6]"), "x_0");
//   // {{0,4,1}, {3,6,2}}: dim 1 keeps elements 3 and 5
//   ResolveNarrowRange(/*dim=*/-1, /*start=*/-2, /*length=*/2, desc, "in_0");   // {1, 4, 2}
//   ResolvePermutation({2, 0, -2}, 3);   // {2, 0, 1}
//
// Errors are kInvalidArgument naming the attribute, the blob and the value.
#ifndef OPS_SLICE_PARAMS_H_
#define OPS_SLICE_PARAMS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::ops {

// One dim of a slice: elements start, start + step, ... below stop.
struct SliceDim {
  int64_t start = 0;  // normalised: 0 <= start < stop <= extent
  int64_t stop = 0;
  int64_t step = 1;
  int64_t size() const { return (stop - start + step - 1) / step; }
  bool full(int64_t extent) const { return step == 1 && start == 0 && stop == extent; }
};

// One entry per dim of `full` in each of start/stop/step; step > 0. start
// and stop follow Python: a negative value counts from the end (v + d), and
// both are then clamped to [0, d], so stop = INT64_MAX means "to the end".
// An empty selection is an error (the engine has no zero-size tensors).
// OneFlow's functional layer normalises the same way before creating the
// op, whose attributes must already satisfy 0 <= start <= stop.
absl::StatusOr<std::vector<SliceDim>> ResolveSliceDims(absl::Span<const int64_t> start,
                                                       absl::Span<const int64_t> stop,
                                                       absl::Span<const int64_t> step,
                                                       const TensorDesc& full,
                                                       absl::string_view bn);

// The extents of the sliced tensor.
std::vector<int64_t> SlicedDims(const std::vector<SliceDim>& s);

// narrow(dim, start, length) of a tensor.
struct NarrowRange {
  int dim = 0;
  int64_t start = 0;  // normalised, >= 0
  int64_t length = 0;
};

// dim in [-nd, nd); start in [-d, d), negative counting from the end (as
// torch.narrow); length >= 1 (the engine has no zero-size tensors) and
// start + length <= d. OneFlow's op instead clamps length to d when
// start == 0 and never checks start + length; we report an error.
absl::StatusOr<NarrowRange> ResolveNarrowRange(int64_t dim, int64_t start, int64_t length,
                                               const TensorDesc& full, absl::string_view bn);

// transpose's perm normalised (negatives wrapped) and checked to be a
// permutation of [0, rank).
absl::StatusOr<std::vector<int>> ResolvePermutation(const std::vector<int64_t>& perm, int rank);

}  // namespace oneflow_sbp::ops

#endif  // OPS_SLICE_PARAMS_H_
