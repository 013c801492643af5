#include "graph/compute_model.h"

#include <vector>

#include "oneflow_sbp/values/check.h"
#include "ops/op_record.h"

namespace oneflow_sbp::graph {

Shape LocalShape(const Shape& shape, const NdSbp& nd_sbp, absl::Span<const int64_t> hierarchy) {
  OFS_CHECK(nd_sbp.size() == static_cast<int>(hierarchy.size()));
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  for (int i = 0; i < nd_sbp.size(); ++i) {
    if (!nd_sbp[i].is_split()) continue;
    const int a = nd_sbp[i].split_axis();
    OFS_CHECK(a < static_cast<int>(dims.size()));
    dims[a] = (dims[a] + hierarchy[i] - 1) / hierarchy[i];
  }
  return *Shape::Make(dims);
}

int64_t LocalBytes(const TensorDesc& desc, const NdSbp& nd_sbp,
                   absl::Span<const int64_t> hierarchy) {
  return LocalShape(desc.shape, nd_sbp, hierarchy).elem_cnt() * ByteSizeOf(desc.dtype);
}

bool IsMatmulClass(absl::string_view op_type) {
  const ops::OpRecord* record = ops::FindOpRecord(op_type);
  return record != nullptr && record->compute == ops::ComputeModel::kMatmul;
}

OpWork EstimateOpWork(const OpCall& call, absl::Span<const TensorDesc> descs,
                      const NdSbpSignature& signature, absl::Span<const int64_t> hierarchy,
                      const boxing::Calibration& calibration) {
  OFS_CHECK(static_cast<int>(descs.size()) == call.num_blobs() &&
            static_cast<int>(signature.size()) == call.num_blobs());
  OpWork work;
  const int a = call.InputBlob("a", 0);
  const int out = call.OutputBlob("out", 0);
  // A registry's own op named like a matmul but with other blobs counts
  // bytes, as any other op.
  if (IsMatmulClass(call.type_name()) && a >= 0 && out >= 0) {
    const Shape a_local = LocalShape(descs[a].shape, signature[a], hierarchy);
    const bool transpose_a = call.attrs().Get<bool>("transpose_a").value_or(false);
    const int k_dim = a_local.rank() - (transpose_a ? 2 : 1);
    const double k = k_dim >= 0 ? static_cast<double>(a_local.dim(k_dim)) : 1.0;
    const double out_elems =
        static_cast<double>(LocalShape(descs[out].shape, signature[out], hierarchy).elem_cnt());
    work.flops = 2.0 * out_elems * k;
    work.time_s = calibration.ComputeTime(work.flops);
    return work;
  }
  for (int b = 0; b < call.num_blobs(); ++b) {
    work.bytes += static_cast<double>(LocalBytes(descs[b], signature[b], hierarchy));
  }
  work.time_s = calibration.MemoryTime(work.bytes);
  return work;
}

}  // namespace oneflow_sbp::graph
