// ExpandTrainingStep: a forward program (graph/program.h) with its loss
// turned into the whole training step as one program, so graph-level
// planning prices what a training step really runs:
//   forward   the program's ops, then `fill` (ones like the loss: the
//             gradient seed; a loss with several elements is summed);
//   backward  exactly the ops autograd runs: the forward ops are applied
//             to shape-only global tensors with every parameter (free
//             tensors, and marked ones flagged ProgramTensor::parameter)
//             requiring grad, Backward runs the registered backward rules
//             (eager/backward_rules.h), and the program recorder records
//             every call they make (gradient sums included);
//   update    per parameter that a gradient reaches, one `sgd_update` or
//             `adam_update` reading the parameter (mutable: never boxed,
//             so the parameter's chosen layout is the update's) and its
//             gradient. The gradient reduction is the boxing of that read:
//             the backward op leaves it P where a batch split summed it,
//             and the planner prices P->B (all-reduce) for a replicated
//             parameter, P->S (reduce-scatter) for a sharded one. Adam's
//             m and v are free tensors the update pins to the parameter's
//             layout (marked in it, for a marked parameter).
// A marked parameter keeps its layout (the update pins it); a free one
// stays one free tensor read by its forward ops, by the
// backward ops that need it and by its update, so its layout is one choice
// the solver weighs against all of them.
//
//   absl::StatusOr<graph::TrainingStepInfo> step =
//       ExpandTrainingStep(engine, *forward, {});
//   PlanProgram(step->program, engine, options);
//
// Shape-only: the tensors live on a copy of the placement whose ranks are
// shifted past the one rank that runs the expansion, so no kernel runs and
// no boxing moves data (a rank outside a placement only follows metadata).
//
// The loss is the forward program's single output. Names: forward tensors
// keep theirs; Adam state is "<parameter>.adam_m" / ".adam_v"; every
// tensor the backward defines is "grad:<recorded name>".
//
// Errors: kInvalidArgument if the program has no single output, if the
// loss depends on no parameter, or if a derived name collides with a
// forward one; kUnimplemented naming the op whose backward rule is
// missing; inference errors named by op.
#ifndef EAGER_EXPAND_TRAINING_STEP_H_
#define EAGER_EXPAND_TRAINING_STEP_H_

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "graph/program.h"
#include "graph/training_step_info.h"

namespace oneflow_sbp::eager {

enum class Optimizer : uint8_t { kSgd, kAdam };

struct TrainingStepOptions {
  Optimizer optimizer = Optimizer::kAdam;
  double learning_rate = 1e-3;
};

absl::StatusOr<graph::TrainingStepInfo> ExpandTrainingStep(engine::Engine& engine,
                                                           const graph::Program& forward,
                                                           const TrainingStepOptions& options);

}  // namespace oneflow_sbp::eager

#endif  // EAGER_EXPAND_TRAINING_STEP_H_
