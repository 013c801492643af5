#include "python/native/host_array.h"

#include <cstring>
#include <utility>
#include <vector>

#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "python/native/conversions.h"

namespace oneflow_sbp::python {
namespace {

// Copies `slice` of the row-major array `src` (dims `dims`, `elem` bytes
// per element) into the dense buffer `dst`. Trailing dims the slice takes
// whole are one contiguous run, so an S(0) shard is a single memcpy.
void CopySlice(const char* src, absl::Span<const int64_t> dims, const TensorSlice& slice,
               int64_t elem, char* dst) {
  const int rank = static_cast<int>(dims.size());
  if (slice.elem_cnt() == 0) return;
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  // Dims [outer, rank) form the run: every dim after `outer` is whole.
  int outer = rank - 1;
  while (outer > 0 && slice.range(outer).begin == 0 && slice.range(outer).end == dims[outer]) {
    --outer;
  }
  LocalDims stride = RowMajorStrides(dims);
  for (int64_t& s : stride) s *= elem;  // bytes
  const int64_t run = slice.range(outer).size() * stride[outer];
  // Odometer over dims [0, outer).
  std::vector<int64_t> index(outer);
  for (int d = 0; d < outer; ++d) index[d] = slice.range(d).begin;
  while (true) {
    int64_t offset = slice.range(outer).begin * stride[outer];
    for (int d = 0; d < outer; ++d) offset += index[d] * stride[d];
    std::memcpy(dst, src + offset, run);
    dst += run;
    int d = outer - 1;
    for (; d >= 0; --d) {
      if (++index[d] < slice.range(d).end) break;
      index[d] = slice.range(d).begin;
    }
    if (d < 0) return;
  }
}

}  // namespace

absl::StatusOr<HostArray> HostArrayOf(const py::array& array, std::optional<DataType> dtype,
                                      py::object* keep) {
  // The dtype is read through Python attributes (see DataTypeOfNumpy).
  py::array a = array;
  if (!a.dtype().attr("isnative").cast<bool>()) {
    a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
  }
  OFS_ASSIGN_OR_RETURN(DataType own, DataTypeOfNumpy(a.dtype()));
  HostArray h;
  h.dtype = dtype.value_or(own);
  h.dims.assign(a.shape(), a.shape() + a.ndim());
  // C-contiguous in the array's own type; no copy for the usual array.
  py::array c = py::array::ensure(a, py::array::c_style);
  if (!c) return absl::InvalidArgumentError("could not read the array as a C-ordered buffer");
  if (h.dtype == own) {
    h.data = c.data();
    *keep = std::move(c);
    return h;
  }
  // Another dtype: element-wise conversion through double.
  py::array d = py::module_::import("numpy").attr("ascontiguousarray")(c, "float64");
  int64_t n = 1;
  for (int64_t x : h.dims) n *= x;
  OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::FromDoubles( h.dtype, h.dims,
      absl::MakeConstSpan(static_cast<const double*>(d.data()), n)));
  h.converted = std::move(t);
  h.data = h.converted.raw_data();
  return h;
}

absl::StatusOr<LocalTensor> ShardOf(const HostArray& full, const Shape& shape,
                                    const Placement& placement, const NdSbp& nd_sbp,
                                    int64_t rank) {
  absl::StatusOr<int64_t> id = placement.ParallelIdOf(rank);
  if (!id.ok()) return LocalTensor();
  const MeshCoord coord = placement.CoordinateOf(*id);
  const TensorSlice slice = SliceAt(shape, nd_sbp, placement.hierarchy(), coord);
  LocalDims dims;
  for (const IndexRange& r : slice.ranges()) dims.push_back(r.size());
  bool keeps = true;  // the P groups' coordinate-0 rank keeps the value
  for (int i = 0; i < nd_sbp.size(); ++i) {
    keeps = keeps && (!nd_sbp[i].is_partial_sum() || coord[i] == 0);
  }
  OFS_ASSIGN_OR_RETURN(LocalTensor local, keeps ? LocalTensor::Empty(full.dtype,
      dims) : LocalTensor::Zeros(full.dtype, dims));
  if (keeps) {
    CopySlice(static_cast<const char*>(full.data), full.dims, slice, ByteSizeOf(full.dtype),
              static_cast<char*>(local.raw_data()));
  }
  if (placement.device_type() != DeviceType::kCpu) return local.CopyTo(placement.device_type());
  return local;
}

}  // namespace oneflow_sbp::python
