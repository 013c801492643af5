// Communication an op's kernel does itself, beside the boxing of its
// inputs: a few layouts cannot be computed shard by shard, and their
// kernels call collectives (kernels/kernel_context.h, "Collectives").
// The cost model (program_costs.h, selection_problem.h) prices them, so
// that the bytes `sbp plan --execute` measures on real ranks are the bytes
// the plan predicted (issue 23: the demo's vocabulary-parallel cross
// entropy moved 2,048 B more than predicted on [2,2]).
//
// Each collective is described as the boxing that moves the same bytes in
// the same steps: an all-reduce over some mesh axes of a tensor split like
// the rows of the op is the boxing (P on those axes) -> (B on those axes),
// priced by BoxingPrices like every other move.
//
// Which kernels do this is the op record's kernel_collectives field
// (ops/records/*.toml); the kinds (keep in step with
// kernels/cpu/cross_entropy_kernels.cc):
//   sparse_softmax_cross_entropy[_ms] with prediction's class dim (the
//   last) split on some mesh axes: two all-reduces (row maxima, then row
//   sums of exp) of one f64 per row over the ranks that split the classes.
#ifndef GRAPH_KERNEL_COLLECTIVES_H_
#define GRAPH_KERNEL_COLLECTIVES_H_

#include <vector>

#include "absl/types/span.h"
#include "graph/boxing_prices.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::graph {

// The collectives `call`'s kernel makes under `sig` (descs: every blob,
// inputs then outputs), each as an equivalent boxing; empty for most ops
// and layouts. One entry per collective call (two equal all-reduces are
// two entries).
std::vector<BoxingPrices::Request> KernelCollectives(const OpCall& call,
                                                     absl::Span<const TensorDesc> descs,
                                                     const NdSbpSignature& sig);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_KERNEL_COLLECTIVES_H_
