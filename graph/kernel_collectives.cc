#include "graph/kernel_collectives.h"

#include <cstdint>
#include <string>
#include <utility>

#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/shape.h"
#include "ops/op_record.h"

namespace oneflow_sbp::graph {
namespace {

// sparse_softmax_cross_entropy[_ms]: prediction [..., D] (blob 0). With
// the class dim split, the kernel all-reduces one f64 per row (its local
// rows) over the ranks that split the classes, twice (kMax, then kSum):
// the boxing f64[rows] (P on those axes, the rows' own splits elsewhere)
// -> (B on those axes) moves the same bytes.
std::vector<BoxingPrices::Request> SparseCrossEntropy(absl::Span<const TensorDesc> descs,
                                                      const NdSbpSignature& sig) {
  std::vector<BoxingPrices::Request> out;
  if (descs.empty() || sig.empty()) return out;
  const Shape& shape = descs[0].shape;
  const int class_dim = shape.rank() - 1;
  if (class_dim < 0) return out;
  const NdSbp& pred = sig[0];
  NdSbp from;
  NdSbp to;
  bool split = false;
  for (int a = 0; a < pred.size(); ++a) {
    const SbpParallel s = pred[a];
    if (s.is_split() && s.split_axis() == class_dim) {
      split = true;
      from.push_back(SbpParallel::PartialSum());
      to.push_back(SbpParallel::Broadcast());
    } else if (s.is_split()) {
      // A row dim split: each rank reduces only its own rows.
      from.push_back(s);
      to.push_back(s);
    } else {
      // B (or P, which the rules do not offer for the prediction): every
      // rank of this axis holds all rows and reduces them in its own group.
      from.push_back(SbpParallel::Broadcast());
      to.push_back(SbpParallel::Broadcast());
    }
  }
  if (!split) return out;
  TensorDesc rows;
  rows.dtype = DataType::kFloat64;
  absl::StatusOr<Shape> row_shape = Shape::Make(shape.dims().subspan(0, class_dim));
  if (!row_shape.ok()) return out;  // a prefix of a valid shape is valid
  rows.shape = *std::move(row_shape);
  out.push_back({rows, from, to});  // row maxima
  out.push_back({rows, from, to});  // row sums of exp(x - max)
  return out;
}

}  // namespace

std::vector<BoxingPrices::Request> KernelCollectives(const OpCall& call,
                                                     absl::Span<const TensorDesc> descs,
                                                     const NdSbpSignature& sig) {
  // The record says which kernels call collectives (kernel_collectives in
  // ops/records/*.toml); each kind is priced by its function here.
  const ops::OpRecord* record = ops::FindOpRecord(call.type_name());
  if (record == nullptr) return {};
  switch (record->kernel_collectives) {
    case ops::KernelCollectives::kNone:
      return {};
    case ops::KernelCollectives::kClassSplitAllReduce:
      return SparseCrossEntropy(descs, sig);
  }
  return {};
}

}  // namespace oneflow_sbp::graph
