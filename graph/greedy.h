// The eager greedy choice for a program: what an eager interpreter gets
// op by op, the baseline graph-level selection must never lose to.
//
// Ops in program order, each chosen by Engine::Infer under `policy`
// (default `oneflow`, as `sbp infer` chooses) given its inputs' current
// layouts: fixed tensors as given, free tensors all-B, activations as their
// producers' chosen output layouts. The request is EagerInferRequest's,
// the one the eager interpreter makes (eager/apply.cc MakeRequest): with
// mutable inputs pinned to their current layout.
//
//   absl::StatusOr<Assignment> g = GreedyAssignment(program, engine);
//   g->op_signatures[0];   // the first op's N-D signature
#ifndef GRAPH_GREEDY_H_
#define GRAPH_GREEDY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/inference/policy_name.h"

namespace oneflow_sbp::graph {

// The inference request eager Apply makes for `call` reading `inputs` on
// `placement` under `policy`, without a plan: every mutable input is a
// constraint at its current layout (OneFlow pins tensors updated in place).
// Keep in step with eager/apply.cc MakeRequest; eager::RunProgram uses it
// to learn the signature eager inference chose.
InferRequest EagerInferRequest(std::shared_ptr<const OpCall> call, const Placement& placement,
                               std::vector<InferInput> inputs, PolicyName policy);

// Errors of Engine::Infer, prefixed with the op's label.
absl::StatusOr<Assignment> GreedyAssignment(const Program& program, engine::Engine& engine,
                                            PolicyName policy = PolicyName::OneFlow());

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_GREEDY_H_
