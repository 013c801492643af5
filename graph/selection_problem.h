// SelectionProblem: a Program turned into a CostGraph (cost_graph.h) whose
// objective is the program's time under program_costs.h's model.
//
// Nodes: op i is node i (program order); free tensor j (the j-th of
// Program::FreeTensors()) is node num_ops + j.
// Candidates:
//   op      the op's own N-D list after the shared stages under the
//           `planned` policy's rules: ExpandCandidates (deduplicated, the
//           N-D hook run) then FilterByShape (inputs and outputs must fit),
//           in that list's order; then any signature of `required` (e.g.
//           the eager greedy choice) not already there, appended.
//   free    every layout with B or S(d) on each mesh axis (no P: a
//           parameter holds values, not addends) that fits the shape
//           (IsSplittable), in row-major order over the mesh axes with the
//           first axis slowest and B < S(0) < S(1) ..., so all-B is first.
// Costs:
//   unary   an op's compute time (compute_model.h), plus the boxing of
//           every fixed tensor it reads, plus the boxing of program outputs
//           it defines; a free tensor's boxing to its output target if it
//           is a program output;
//   edges   producer op -> reading op, and free tensor -> reading op: the
//           boxing time of every read between them (several reads of one
//           pair add into one edge).
// Memory (peak bytes per rank, program_costs.h's model) is a second cost
// graph of the same shape, `memory`: what a memory cap prices.
// Boxing between two distinct layouts of one tensor is priced once per
// pair and shared by every candidate pair that needs it.
//
//   BoxingPrices prices(engine, program.placement());
//   absl::StatusOr<SelectionProblem> p = BuildSelectionProblem(program, prices, {});
//   p->graph.Objective(choice) + p->constant_time_s
//       == EvaluateAssignment(program, p->ToAssignment(choice), prices)->total_time_s
#ifndef GRAPH_SELECTION_PROBLEM_H_
#define GRAPH_SELECTION_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/boxing_prices.h"
#include "graph/cost_graph.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"

namespace oneflow_sbp::graph {

struct SelectionProblem {
  int num_ops = 0;
  std::vector<std::vector<NdSbpSignature>> op_candidates;
  // Per op: how many of its candidates the shared stages listed (the rest
  // were appended from `required`).
  std::vector<int> stage_candidates;
  // Program::FreeTensors() and each one's layouts.
  std::vector<int> free_tensors;
  std::vector<std::vector<NdSbp>> free_layouts;
  CostGraph graph;
  // Time no choice changes (boxing of a fixed tensor that is a program
  // output).
  double constant_time_s = 0;
  // Memory per rank as a cost graph over the same nodes and edges as
  // `graph` (same order, so CostGraph::AddScaled adds it in), in bytes:
  //   unary  the tensors the node decides (an op's outputs, a free tensor
  //          itself), plus the copies it makes of fixed tensors it reads
  //          and of program outputs it defines (program_costs.h: CopyBytes);
  //   edges  the copies the reads between the two nodes make.
  CostGraph memory;
  // Local bytes per rank of the fixed tensors, and of the copies no choice
  // changes (a fixed program output boxed to its target).
  int64_t fixed_memory_bytes = 0;

  // The peak memory per rank of `choice`:
  // EvaluateAssignment(...)->peak_memory_bytes.
  int64_t PeakBytes(absl::Span<const int> choice) const;

  Assignment ToAssignment(absl::Span<const int> choice) const;
  // The node choice of `a`; kNotFound naming the op or tensor whose
  // signature or layout is not a candidate.
  absl::StatusOr<std::vector<int>> ToChoice(const Program& program, const Assignment& a) const;
};

// `required`: empty, or one signature per op that must be a candidate
// (appended when the stages did not produce it). Boxing prices are planned
// on up to `threads` threads (the result does not depend on it). Errors:
// those of the shared stages (named by op label) and of the planner.
absl::StatusOr<SelectionProblem> BuildSelectionProblem(const Program& program,
                                                       BoxingPrices& prices,
                                                       absl::Span<const NdSbpSignature> required,
                                                       int threads = 1);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_SELECTION_PROBLEM_H_
