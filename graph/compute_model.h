// What an op costs to run on one rank under a signature, and what a
// tensor occupies per rank under a layout: the local-work half of
// graph-level selection's cost (the other half is boxing, boxing_prices.h).
//
// Local shapes are those of the busiest rank. Balanced splits give the
// first parts the extra element on every mesh axis, so rank 0 (coordinate
// 0 on every axis) holds the largest shard of every tensor; its shape is
// the walk of SPEC.md §1.5 taking ceil(extent / parts) on each split.
//
//   LocalShape(Shape{10, 6}, (S(0),S(0)), {2,2});   // [3,6]: 10 -> 5 -> 3
//   LocalBytes(f32[10,6], (S(0),B), {2,2});         // 5*6*4 = 120
//
// Compute time of an op (per rank, the busiest):
//   matmul-class ops (matmul, batch_matmul, broadcast_matmul; blobs a_0 and
//   out_0):
//     2 * elem_cnt(local out) * local k flops at calibration's
//     compute_flops_per_s, where k is the contracted dim of input a (its
//     last dim, or the one before with transpose_a) in a's local shape. A
//     candidate splitting k (output P) does half the flops.
//   every other op: bytes read and written (local inputs + local outputs)
//     at calibration's memory_bytes_per_s.
// So replicating work is never free: an all-B candidate does the whole
// op on every rank.
#ifndef GRAPH_COMPUTE_MODEL_H_
#define GRAPH_COMPUTE_MODEL_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "boxing/calibration.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::graph {

// Requires nd_sbp.size() == hierarchy.size() and split axes < rank.
Shape LocalShape(const Shape& shape, const NdSbp& nd_sbp, absl::Span<const int64_t> hierarchy);
int64_t LocalBytes(const TensorDesc& desc, const NdSbp& nd_sbp,
                   absl::Span<const int64_t> hierarchy);

// Ops whose record prices their kernel by FLOPs (compute = "matmul" in
// ops/records/*.toml: matmul, batch_matmul, broadcast_matmul).
bool IsMatmulClass(absl::string_view op_type);

struct OpWork {
  double flops = 0;  // matmul-class only
  double bytes = 0;  // other ops only
  double time_s = 0;
};

// `signature` has one NdSbp per blob (inputs then outputs) and `descs` the
// logical desc of every blob in the same order.
OpWork EstimateOpWork(const OpCall& call, absl::Span<const TensorDesc> descs,
                      const NdSbpSignature& signature, absl::Span<const int64_t> hierarchy,
                      const boxing::Calibration& calibration);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_COMPUTE_MODEL_H_
