// The eager greedy choice for a program: what an eager interpreter gets
// op by op, the baseline graph-level selection must never lose to.
//
// Ops in program order, each chosen by Engine::Infer under `policy`
// (default `oneflow`, as `sbp infer` chooses) given its inputs' current
// layouts: fixed tensors as given, free tensors all-B, activations as their
// producers' chosen output layouts.
//
//   absl::StatusOr<Assignment> g = GreedyAssignment(program, engine);
//   g->op_signatures[0];   // the first op's N-D signature
#ifndef GRAPH_GREEDY_H_
#define GRAPH_GREEDY_H_

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/policy_name.h"

namespace oneflow_sbp::graph {

// Errors of Engine::Infer, prefixed with the op's label.
absl::StatusOr<Assignment> GreedyAssignment(const Program& program, Engine& engine,
                                            PolicyName policy = PolicyName::OneFlow());

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_GREEDY_H_
