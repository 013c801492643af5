#include "graph/greedy.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::graph {

InferRequest EagerInferRequest(std::shared_ptr<const OpCall> call, const Placement& placement,
                               std::vector<InferInput> inputs, PolicyName policy) {
  InferRequest req;
  req.placement = placement;
  req.cost.policy = policy;
  for (int b = 0; b < call->num_inputs() && b < static_cast<int>(inputs.size()); ++b) {
    if (!call->is_mutable_input(b)) continue;
    if (req.constraints.empty()) req.constraints.resize(call->num_blobs());
    req.constraints[b] = inputs[b].nd_sbp();
  }
  req.inputs = std::move(inputs);
  req.op = std::move(call);
  return req;
}

absl::StatusOr<Assignment> GreedyAssignment(const Program& program, engine::Engine& engine,
                                            PolicyName policy) {
  const NdSbp all_b = NdSbp::Repeat(SbpParallel::Broadcast(), program.placement().num_axes());
  Assignment a;
  std::vector<NdSbp> layouts(program.tensors().size());
  for (size_t t = 0; t < program.tensors().size(); ++t) {
    const ProgramTensor& tensor = program.tensors()[t];
    if (tensor.role == TensorRole::kFixed) layouts[t] = tensor.nd_sbp;
    if (tensor.role == TensorRole::kFree) {
      layouts[t] = all_b;
      a.free_layouts.push_back(all_b);
    }
  }
  for (const ProgramOp& op : program.ops()) {
    std::vector<InferInput> inputs;
    for (int t : op.inputs) inputs.emplace_back(program.tensors()[t].desc, layouts[t]);
    const InferRequest req =
        EagerInferRequest(op.call, program.placement(), std::move(inputs), policy);
    absl::StatusOr<std::shared_ptr<const InferResult>> r = engine.Infer(req);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat(op.label, ": ", r.status().message()));
    }
    const NdSbpSignature& sig = (*r)->signature;
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      layouts[op.outputs[o]] = sig[op.inputs.size() + o];
    }
    a.op_signatures.push_back(sig);
  }
  return a;
}

}  // namespace oneflow_sbp::graph
