// A choice for a whole program (every op's N-D signature and every free
// tensor's layout) and what it costs: the reference evaluation the solver's
// cost tables must agree with, and the totals `sbp plan` prints.
//
//   Assignment a;                      // from the solver or the greedy pass
//   BoxingPrices prices(engine, program.placement());
//   absl::StatusOr<ProgramCosts> c = EvaluateAssignment(program, a, prices);
//   c->total_time_s;                   // comm_time_s + compute_time_s
//
// Cost model:
//   communication  every read of a tensor whose layout (fixed: given; free:
//                  chosen; activation: its producer's output layout) differs
//                  from what the reading op's signature asks pays the boxing
//                  plan's time (boxing_prices.h); a mutable input that would
//                  need boxing is infeasible (+infinity). Every program
//                  output pays the boxing to its required layout, or, without
//                  one, to its layout with each P axis made B.
//                  Collectives an op's kernel makes itself under its
//                  signature (kernel_collectives.h: the vocabulary-parallel
//                  cross entropy's row all-reduces) are priced as their
//                  equivalent boxing and counted here too, since the
//                  executor really moves those bytes.
//   compute        per op, EstimateOpWork (compute_model.h).
//   memory         per rank: every tensor's local bytes (fixed, free and
//                  activations) in the layout it is defined in, plus every
//                  boxed copy the choice materialises: per read whose
//                  layout differs from the tensor's (a ZeRO-sharded weight
//                  read B, a P gradient read by its update), and per
//                  program output boxed to its target, the destination
//                  layout's local bytes (CopyBytes). All held at once: no
//                  liveness analysis, and a copy per read even when two
//                  reads ask the same layout, so an upper bound of the
//                  peak, of a forward pass's and of a training step's that
//                  keeps activations for backward. Kernel collectives'
//                  buffers are not counted.
#ifndef GRAPH_PROGRAM_COSTS_H_
#define GRAPH_PROGRAM_COSTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/boxing_prices.h"
#include "graph/compute_model.h"
#include "graph/program.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"

namespace oneflow_sbp::graph {

struct Assignment {
  // Per op: one NdSbp per blob (inputs then outputs).
  std::vector<NdSbpSignature> op_signatures;
  // Per entry of Program::FreeTensors(), in that order.
  std::vector<NdSbp> free_layouts;
};

// Every tensor's layout under `a` (indexed by tensor id). Requires `a` to
// have one signature per op and one layout per free tensor.
std::vector<NdSbp> TensorLayouts(const Program& program, const Assignment& a);

// The layout a program output is boxed to when it ends as `from`.
NdSbp OutputTarget(const ProgramOutput& output, const NdSbp& from);

// The local bytes per rank of the copy that boxing `desc` from `from` to
// `to` materialises: 0 if they are equal, else LocalBytes(desc, to).
int64_t CopyBytes(const TensorDesc& desc, const NdSbp& from, const NdSbp& to,
                  absl::Span<const int64_t> hierarchy);

// The price of one read: 0 if `from` == `to`; +infinity (unsupported) for a
// mutable input blob that would need boxing; else the boxing price.
absl::StatusOr<BoxingPrice> ReadPrice(BoxingPrices& prices, const OpCall& call, int blob,
                                      const TensorDesc& desc, const NdSbp& from, const NdSbp& to);

// One read of a tensor by an op, or one program output.
struct BoxingEdge {
  int tensor = 0;
  // The reading op, or -1 for a program output.
  int consumer = -1;
  // The reading op's input blob (-1 for a program output).
  int blob = -1;
  NdSbp from;
  NdSbp to;
  BoxingPrice price;
};

struct ProgramCosts {
  // Boxing plus kernel collectives.
  double comm_time_s = 0;
  int64_t comm_bytes = 0;
  // The kernel collectives' share of comm_time_s and comm_bytes.
  double kernel_comm_time_s = 0;
  int64_t kernel_comm_bytes = 0;
  double compute_time_s = 0;
  // comm_time_s + compute_time_s; +infinity if any read is unsupported.
  double total_time_s = 0;
  int64_t peak_memory_bytes = 0;
  // The boxed copies' share of peak_memory_bytes.
  int64_t copy_memory_bytes = 0;
  // Per op.
  std::vector<OpWork> op_work;
  // Every read in op order (inputs in blob order), then every output.
  std::vector<BoxingEdge> edges;
};

// kInvalidArgument if `a` does not fit the program (sizes, a layout with
// the wrong number of mesh axes); planner errors pass through.
absl::StatusOr<ProgramCosts> EvaluateAssignment(const Program& program, const Assignment& a,
                                                BoxingPrices& prices);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_PROGRAM_COSTS_H_
