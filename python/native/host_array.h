// HostArray: a full logical array in host memory, C-ordered, that rank
// threads read without the GIL to take their own shards. It is how
// `oneflow_sbp.tensor(ndarray, ...)` scatters: each rank copies its slice
// straight from the numpy array's buffer (one copy per shard, none of the
// whole array) instead of copying the array into engine storage first.
//
//   py::object keep;
//   HostArray full = Unwrap(HostArrayOf(array, std::nullopt, &keep));
//   // on each rank thread, GIL released, `keep` alive:
//   LocalTensor shard = *ShardOf(full, shape, placement, nd_sbp, rank);
//
// Lifetime: when the array's own buffer is used, `data` points into a
// Python object (`*keep`), which the caller must keep alive, with the GIL,
// for as long as any rank may read it (Session::KeepWhileInUse covers a
// step that an interrupt leaves running). When a conversion was needed
// (another dtype, bf16), `data` points into `converted`, which the
// HostArray owns, and `*keep` is not needed.
#ifndef PYTHON_NATIVE_HOST_ARRAY_H_
#define PYTHON_NATIVE_HOST_ARRAY_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::python {

struct HostArray {
  DataType dtype = DataType::kFloat32;
  LocalDims dims;
  // Row-major elements of `dtype`; never null (a scalar has one element).
  const void* data = nullptr;
  // Holds the elements when they had to be converted; undefined when
  // `data` is the numpy array's own buffer.
  LocalTensor converted;
};

// `array`'s elements as `dtype` (the array's own when unset). With the
// GIL. No copy when the array is C-contiguous in native byte order and
// already of that dtype: `data` is its buffer and `*keep` the array. A
// non-contiguous array is first made C-ordered by numpy (one copy, kept
// in `*keep`); another dtype is converted into `converted`. kInvalidArgument
// for a numpy dtype the engine lacks.
absl::StatusOr<HostArray> HostArrayOf(const pybind11::array& array,
                                      std::optional<DataType> dtype, pybind11::object* keep);

// This rank's shard of `full` (whose dims must be `shape`'s) laid out as
// `nd_sbp` on `placement`, in fresh storage on the placement's device: its
// slice on S axes; on P axes the rank at coordinate 0 of each P group
// keeps the value and the others hold zeros (as eager::FromFull). An
// undefined tensor for a rank outside the placement. Requires `nd_sbp` to
// be valid for `shape` on the placement (ValidateNdSbp). No GIL needed.
absl::StatusOr<LocalTensor> ShardOf(const HostArray& full, const Shape& shape,
                                    const Placement& placement, const NdSbp& nd_sbp,
                                    int64_t rank);

}  // namespace oneflow_sbp::python

#endif  // PYTHON_NATIVE_HOST_ARRAY_H_
