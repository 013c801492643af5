#include "graph/training_step_info.h"

#include "graph/compute_model.h"

namespace oneflow_sbp::graph {

absl::string_view StepTensorKindName(StepTensorKind kind) {
  switch (kind) {
    case StepTensorKind::kInput:
      return "input";
    case StepTensorKind::kParameter:
      return "parameter";
    case StepTensorKind::kGradient:
      return "gradient";
    case StepTensorKind::kOptimizerState:
      return "optimizer";
    case StepTensorKind::kActivation:
      return "activation";
  }
  return "activation";
}

int64_t StepMemory::total() const {
  int64_t sum = 0;
  for (int64_t b : bytes) sum += b;
  return sum;
}

int64_t StepMemory::total_copies() const {
  int64_t sum = 0;
  for (int64_t b : copies) sum += b;
  return sum;
}

StepMemory StepMemoryPerRank(const Program& program, const Assignment& a,
                             absl::Span<const StepTensorKind> kinds) {
  StepMemory m;
  const auto hierarchy = program.placement().hierarchy();
  const std::vector<NdSbp> layouts = TensorLayouts(program, a);
  for (size_t t = 0; t < program.tensors().size(); ++t) {
    m.bytes[static_cast<int>(kinds[t])] +=
        LocalBytes(program.tensors()[t].desc, layouts[t], hierarchy);
  }
  // The copies, as EvaluateAssignment counts them: every read, then every
  // program output.
  auto copy = [&](int t, const NdSbp& to) {
    const int64_t bytes = CopyBytes(program.tensors()[t].desc, layouts[t], to, hierarchy);
    m.bytes[static_cast<int>(kinds[t])] += bytes;
    m.copies[static_cast<int>(kinds[t])] += bytes;
  };
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const ProgramOp& op = program.ops()[i];
    for (size_t b = 0; b < op.inputs.size(); ++b) copy(op.inputs[b], a.op_signatures[i][b]);
  }
  for (const ProgramOutput& out : program.outputs()) {
    copy(out.tensor, OutputTarget(out, layouts[out.tensor]));
  }
  return m;
}

namespace {

// The strategy named by which kinds of weight-axis pairs occur.
std::string StrategyName(int tensor_parallel, int gathered) {
  if (tensor_parallel > 0 && gathered > 0) return "Megatron + ZeRO";
  if (tensor_parallel > 0) return "Megatron";
  if (gathered > 0) return "ZeRO";
  return "data parallel";
}

}  // namespace

StrategyReport ClassifyStrategy(const TrainingStepInfo& step, const Assignment& a) {
  std::vector<int> parameters;
  for (const TrainingStepInfo::Parameter& p : step.parameters) parameters.push_back(p.tensor);
  return ClassifyStrategy(step.program, a, parameters, step.num_forward_ops);
}

StrategyReport ClassifyStrategy(const Program& program, const Assignment& a,
                                absl::Span<const int> parameters, int num_forward_ops) {
  const std::vector<NdSbp> layouts = TensorLayouts(program, a);
  const int axes = program.placement().num_axes();
  std::vector<int> axis_tp(axes, 0), axis_gathered(axes, 0);
  StrategyReport r;
  for (int id : parameters) {
    const ProgramTensor& t = program.tensors()[id];
    if (t.desc.shape.rank() < 2) continue;
    // The first forward read decides how the weight is used (later forward
    // reads of a shared weight are rarer and the update's read is always
    // the stored layout).
    const TensorUse* use = nullptr;
    for (const TensorUse& u : t.uses) {
      if (u.op < num_forward_ops) {
        use = &u;
        break;
      }
    }
    if (use == nullptr) continue;
    ++r.weights;
    const NdSbp& stored = layouts[id];
    const NdSbp& used = a.op_signatures[use->op][use->blob];
    for (int axis = 0; axis < axes; ++axis) {
      if (!stored[axis].is_split()) {
        ++r.replicated;
      } else if (used[axis].is_split()) {
        ++r.tensor_parallel;
        ++axis_tp[axis];
      } else {
        ++r.gathered;
        ++axis_gathered[axis];
      }
    }
  }
  r.name = StrategyName(r.tensor_parallel, r.gathered);
  for (int axis = 0; axis < axes; ++axis) {
    r.per_axis.push_back(StrategyName(axis_tp[axis], axis_gathered[axis]));
  }
  return r;
}

}  // namespace oneflow_sbp::graph
