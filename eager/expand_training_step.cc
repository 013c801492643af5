#include "eager/expand_training_step.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "eager/apply.h"
#include "eager/autograd.h"
#include "eager/eager_context.h"
#include "eager/program_recorder.h"
#include "oneflow_sbp/values/status_macros.h"
#include "comm/inprocess_world.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::eager {
namespace {

using graph::StepTensorKind;

// The tensors a step trains: free ones and marked parameters, in order.
std::vector<int> Trainable(const graph::Program& p) {
  std::vector<int> ids;
  for (size_t id = 0; id < p.tensors().size(); ++id) {
    const graph::ProgramTensor& t = p.tensors()[id];
    if (t.role == graph::TensorRole::kFree || t.parameter) ids.push_back(static_cast<int>(id));
  }
  return ids;
}

NdSbp AllBroadcast(int axes) {
  NdSbp nd;
  for (int i = 0; i < axes; ++i) nd.push_back(SbpParallel::Broadcast());
  return nd;
}

// The placement with every rank moved up by one: rank 0, which runs the
// expansion, is outside it, so Apply only infers and boxing moves nothing.
absl::StatusOr<Placement> ShadowPlacement(const Placement& p) {
  std::vector<int64_t> ranks(p.ranks().begin(), p.ranks().end());
  for (int64_t& r : ranks) ++r;
  return Placement::Make(p.device_type(), ranks, p.hierarchy());
}

// What the shape-only run leaves behind for building the step program.
struct Recording {
  // Recorded name -> forward name, for the forward program's tensors.
  absl::flat_hash_map<std::string, std::string> forward_names;
  std::string loss;
  int forward_ops = 0;
  int backward_ops = 0;
  // Per forward free tensor: its gradient's recorded name ("" if none) and
  // its state tensors' names.
  std::vector<std::string> gradients;
  std::vector<std::vector<std::string>> states;
};

absl::Status RecordStep(EagerContext& ctx, const graph::Program& forward, const Placement& shadow,
                        const TrainingStepOptions& options, ProgramRecorder& rec,
                        Recording& out) {
  const int axes = shadow.num_axes();
  std::vector<GlobalTensor> values(forward.tensors().size());
  for (size_t id = 0; id < forward.tensors().size(); ++id) {
    const graph::ProgramTensor& t = forward.tensors()[id];
    if (t.role == graph::TensorRole::kActivation) continue;
    const bool free = t.role == graph::TensorRole::kFree;
    values[id] = GlobalTensor(t.desc, shadow, free ? AllBroadcast(axes) : t.nd_sbp, LocalTensor());
    values[id].set_requires_grad(free || t.parameter);
    rec.Name(values[id], t.name);
  }
  for (const graph::ProgramOp& op : forward.ops()) {
    std::vector<GlobalTensor> inputs;
    for (int id : op.inputs) inputs.push_back(values[id]);
    absl::StatusOr<std::vector<GlobalTensor>> outs = Apply(ctx, op.call, inputs);
    if (!outs.ok()) {
      return absl::Status(outs.status().code(),
                          absl::StrCat(op.label, ": ", outs.status().message()));
    }
    for (size_t o = 0; o < op.outputs.size(); ++o) values[op.outputs[o]] = (*outs)[o];
  }
  for (size_t id = 0; id < values.size(); ++id) {
    if (!values[id].defined()) continue;
    const std::string* name = rec.FindName(values[id]);
    if (name != nullptr) out.forward_names[*name] = forward.tensors()[id].name;
  }
  const graph::ProgramTensor& loss_tensor = forward.tensors()[forward.outputs()[0].tensor];
  const GlobalTensor loss = values[forward.outputs()[0].tensor];
  if (!loss.requires_grad()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training: the loss ", QuotedInput(loss_tensor.name),
        " depends on no parameter (free tensor or marked \"parameter\")"));
  }
  out.loss = loss_tensor.name;
  // The seed and the updates are not differentiated.
  ctx.set_grad_enabled(false);
  OFS_ASSIGN_OR_RETURN(GlobalTensor seed,
                       Apply1(ctx, "fill", {loss}, Attrs({{"value", AttrValue(1.0)}})));
  ctx.set_grad_enabled(true);
  out.forward_ops = static_cast<int>(rec.ops().size());
  OFS_RETURN_IF_ERROR(Backward(ctx, loss, seed));
  out.backward_ops = static_cast<int>(rec.ops().size()) - out.forward_ops;

  ctx.set_grad_enabled(false);
  const std::vector<int> free = Trainable(forward);
  out.gradients.assign(free.size(), "");
  out.states.assign(free.size(), {});
  for (size_t k = 0; k < free.size(); ++k) {
    const GlobalTensor& w = values[free[k]];
    const GlobalTensor g = w.grad();
    if (!g.defined()) continue;
    const std::string* g_name = rec.FindName(g);
    if (g_name == nullptr) {
      return absl::InternalError(absl::StrCat("training: the gradient of '",
                                              forward.tensors()[free[k]].name,
                                              "' was made by no recorded op"));
    }
    out.gradients[k] = *g_name;
    const std::string& name = forward.tensors()[free[k]].name;
    std::vector<GlobalTensor> inputs = {w, g};
    if (options.optimizer == Optimizer::kAdam) {
      for (const char* suffix : {".adam_m", ".adam_v"}) {
        GlobalTensor s(w.desc(), shadow, w.nd_sbp(), LocalTensor());
        rec.Name(s, absl::StrCat(name, suffix));
        out.states[k].push_back(absl::StrCat(name, suffix));
        inputs.push_back(s);
      }
    }
    const char* op = options.optimizer == Optimizer::kAdam ? "adam_update" : "sgd_update";
    absl::StatusOr<std::vector<GlobalTensor>> done =
        Apply(ctx, op, inputs, Attrs({{"learning_rate", AttrValue(options.learning_rate)}}));
    if (!done.ok()) {
      return absl::Status(done.status().code(),
                          absl::StrCat("update of ", QuotedInput(name), ": ", done.status().message()));
    }
  }
  return absl::OkStatus();
}

// The step program from the recording: leaves first (parameters and
// state free, other leaves marked), then every recorded op in order.
absl::StatusOr<graph::TrainingStepInfo> BuildStep(const engine::Engine& engine,
                                                  const graph::Program& forward,
                                                  const ProgramRecorder& rec,
                                                  const Recording& r) {
  absl::flat_hash_set<std::string> forward_taken;
  for (const graph::ProgramTensor& t : forward.tensors()) forward_taken.insert(t.name);
  absl::flat_hash_set<std::string> state_names;
  for (const auto& s : r.states) state_names.insert(s.begin(), s.end());
  // A marked parameter's state is marked in its layout too (the update
  // pins all three together; free state would leave the greedy baseline,
  // which keeps free tensors all-B, no signature).
  absl::flat_hash_map<std::string, NdSbp> marked_state;
  const std::vector<int> trained = Trainable(forward);
  for (size_t k = 0; k < trained.size(); ++k) {
    const graph::ProgramTensor& w = forward.tensors()[trained[k]];
    if (w.role != graph::TensorRole::kFixed) continue;
    for (const std::string& n : r.states[k]) marked_state[n] = w.nd_sbp;
  }
  absl::flat_hash_map<std::string, std::string> names;
  for (const ProgramRecorder::Tensor& t : rec.tensors()) {
    auto f = r.forward_names.find(t.name);
    std::string name = f != r.forward_names.end() ? f->second
                       : state_names.contains(t.name) ? t.name
                                                      : absl::StrCat("grad:", t.name);
    if (f == r.forward_names.end() && forward_taken.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "training: the derived tensor name ", QuotedInput(name), " is taken by a forward tensor"));
    }
    names[t.name] = std::move(name);
  }
  graph::ProgramBuilder b(engine.registry(), forward.placement());
  for (const ProgramRecorder::Tensor& t : rec.tensors()) {
    if (t.produced) continue;
    const std::string& name = names[t.name];
    const int fid = forward.FindTensor(name);
    const graph::ProgramTensor* ft = fid >= 0 ? &forward.tensors()[fid] : nullptr;
    auto marked = marked_state.find(t.name);
    if (marked != marked_state.end()) {
      OFS_RETURN_IF_ERROR(b.AddInput(name, t.desc, marked->second));
      continue;
    }
    const bool free = state_names.contains(t.name) ||
                      (ft != nullptr && ft->role == graph::TensorRole::kFree);
    OFS_RETURN_IF_ERROR(free ? b.AddParameter(name, t.desc)
                             : b.AddInput(name, t.desc, ft != nullptr ? ft->nd_sbp : t.nd_sbp,
                                          ft != nullptr && ft->parameter));
  }
  const std::vector<int> free = Trainable(forward);
  absl::flat_hash_map<std::string, std::string> update_labels;
  for (size_t k = 0; k < free.size(); ++k) {
    if (!r.gradients[k].empty()) {
      update_labels[names[r.gradients[k]]] =
          absl::StrCat("update ", forward.tensors()[free[k]].name);
    }
  }
  const int update_begin = r.forward_ops + r.backward_ops;
  for (size_t i = 0; i < rec.ops().size(); ++i) {
    const ProgramRecorder::Op& op = rec.ops()[i];
    std::vector<std::string> inputs, outputs;
    for (const std::string& n : op.inputs) inputs.push_back(names[n]);
    for (const std::string& n : op.outputs) outputs.push_back(names[n]);
    std::string label;
    if (static_cast<int>(i) < static_cast<int>(forward.ops().size())) {
      label = forward.ops()[i].label;
    } else if (static_cast<int>(i) >= update_begin && inputs.size() >= 2) {
      label = update_labels[inputs[1]];
    }
    OFS_RETURN_IF_ERROR(b.AddOp(op.type, inputs, outputs, op.attrs, label));
  }
  const graph::ProgramOutput& loss_out = forward.outputs()[0];
  OFS_RETURN_IF_ERROR(b.MarkOutput(r.loss, loss_out.nd_sbp));
  OFS_ASSIGN_OR_RETURN(graph::Program program, std::move(b).Build());

  graph::TrainingStepInfo info;
  info.num_forward_ops = r.forward_ops;
  info.num_backward_ops = r.backward_ops;
  info.loss = program.FindTensor(r.loss);
  info.kinds.assign(program.tensors().size(), StepTensorKind::kActivation);
  for (size_t id = 0; id < program.tensors().size(); ++id) {
    const graph::ProgramTensor& t = program.tensors()[id];
    if (t.role == graph::TensorRole::kFixed) info.kinds[id] = StepTensorKind::kInput;
    if (t.role == graph::TensorRole::kFree || t.parameter) {
      info.kinds[id] = StepTensorKind::kParameter;
    }
  }
  for (size_t k = 0; k < free.size(); ++k) {
    graph::TrainingStepInfo::Parameter p;
    p.tensor = program.FindTensor(forward.tensors()[free[k]].name);
    if (!r.gradients[k].empty()) {
      p.gradient = program.FindTensor(names.at(r.gradients[k]));
      info.kinds[p.gradient] = StepTensorKind::kGradient;
      // The update is the parameter's mutable reader after the forward
      // and backward ops.
      for (const graph::TensorUse& u : program.tensors()[p.tensor].uses) {
        if (u.op >= update_begin) p.update_op = u.op;
      }
    }
    for (const std::string& s : r.states[k]) {
      p.state.push_back(program.FindTensor(s));
      info.kinds[p.state.back()] = StepTensorKind::kOptimizerState;
    }
    info.parameters.push_back(std::move(p));
  }
  info.program = std::move(program);
  return info;
}

}  // namespace

absl::StatusOr<graph::TrainingStepInfo> ExpandTrainingStep(engine::Engine& engine,
                                                           const graph::Program& forward,
                                                           const TrainingStepOptions& options) {
  if (forward.outputs().size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training: the program needs exactly one output, the loss (its elements are summed); "
        "it has ",
        forward.outputs().size()));
  }
  OFS_ASSIGN_OR_RETURN(Placement shadow, ShadowPlacement(forward.placement()));
  ProgramRecorder rec(shadow);
  rec.set_record_backward(true);
  Recording recording;
  absl::Status run;
  absl::StatusOr<std::vector<absl::Status>> ranks =
      comm::RunRanks(1, [&](comm::Communicator& world) {
        EagerContext ctx(engine, world);
        ctx.set_recorder(&rec);
        run = RecordStep(ctx, forward, shadow, options, rec, recording);
        ctx.set_recorder(nullptr);
        return absl::OkStatus();
      });
  OFS_RETURN_IF_ERROR(ranks.status());
  OFS_RETURN_IF_ERROR(run);
  return BuildStep(engine, forward, rec, recording);
}

}  // namespace oneflow_sbp::eager
