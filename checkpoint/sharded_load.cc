#include "checkpoint/sharded_load.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::checkpoint {

absl::StatusOr<LocalTensor> ConvertDtype(const LocalTensor& t, DataType dtype) {
  if (t.dtype() == dtype) return t;
  OFS_ASSIGN_OR_RETURN(LocalTensor out, LocalTensor::Empty(dtype, t.dims()));
  for (int64_t i = 0; i < t.elem_cnt(); ++i) out.SetDouble(i, t.GetDouble(i));
  return out;
}

absl::StatusOr<eager::GlobalTensor> LoadGlobal(eager::EagerContext& ctx, SafetensorsFile& file,
                                               absl::string_view name, const Placement& placement,
                                               const NdSbp& nd_sbp, std::optional<DataType> as) {
  const SafetensorsEntry* e = file.Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(QuotedPath(file.path()), ": no tensor ", QuotedInput(name)));
  }
  if (!e->data_type) {
    return absl::UnimplementedError(absl::StrCat(QuotedPath(file.path()), ": tensor ", QuotedInput(name), " is ",
                                                 e->dtype, ", which the engine has no dtype for"));
  }
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Make(e->shape));
  absl::Status s = ValidateNdSbp(nd_sbp, shape, placement.hierarchy());
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(QuotedPath(file.path()), ": tensor ", QuotedInput(name), ": ", s.message()));
  }
  const DataType dtype = as.value_or(*e->data_type);
  const TensorDesc desc{shape, dtype};
  absl::StatusOr<int64_t> id = placement.ParallelIdOf(ctx.rank());
  if (!id.ok()) return eager::GlobalTensor(desc, placement, nd_sbp, LocalTensor());
  const MeshCoord coord = placement.CoordinateOf(*id);
  const TensorSlice slice = SliceAt(shape, nd_sbp, placement.hierarchy(), coord);
  bool reads = true;  // on P axes only coordinate 0 holds the value
  for (int i = 0; i < nd_sbp.size(); ++i) {
    reads = reads && (!nd_sbp[i].is_partial_sum() || coord[i] == 0);
  }
  absl::StatusOr<LocalTensor> local;
  if (reads) {
    local = file.ReadRegion(name, slice);
    if (local.ok() && local->dtype() != dtype) local = ConvertDtype(*local, dtype);
  } else {
    std::vector<int64_t> dims;
    for (int d = 0; d < slice.rank(); ++d) dims.push_back(slice.range(d).size());
    local = LocalTensor::Zeros(dtype, dims);
  }
  OFS_RETURN_IF_ERROR(local.status());
  if (placement.device_type() != DeviceType::kCpu) {
    local = local->CopyTo(placement.device_type());
    OFS_RETURN_IF_ERROR(local.status());
  }
  return eager::GlobalTensor(desc, placement, nd_sbp, *std::move(local));
}

}  // namespace oneflow_sbp::checkpoint