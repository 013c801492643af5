// What a training-step program is made of, as graph-level planning sees
// it: every tensor of the step (forward, backward, one optimizer update
// per parameter) has a kind, and the memory per rank splits by kind. The
// step itself is derived from a forward program by autograd
// (eager/expand_training_step.h); this header is the part the planner, the text
// report and the tests share without the eager layer.
//
//   TrainingStepInfo info = ...;                       // ExpandTrainingStep
//   StepMemory m = StepMemoryPerRank(info.program, plan.chosen, info.kinds);
//   m.total();                                         // == costs.peak_memory_bytes
//   StrategyReport s = ClassifyStrategy(info, plan.chosen);
//   s.name;                                            // "Megatron + ZeRO"
//
// Memory model (liveness): every tensor of the step is held at once, each
// in the layout it is defined in, and so is every boxed copy the step
// materialises (program_costs.h: per read in another layout, the
// destination layout's bytes): the all-gathered copy of a ZeRO-sharded
// weight its forward reads B, a P gradient reduced into its update's
// layout, an activation resharded for its reader. Forward activations are
// kept for backward anyway; backward intermediates and each gradient as
// its backward op leaves it (a P gradient is full size on every rank
// until it is reduced) are counted too, so this is an upper bound of the
// step's peak, and the same sum EvaluateAssignment calls
// peak_memory_bytes.
#ifndef GRAPH_TRAINING_STEP_INFO_H_
#define GRAPH_TRAINING_STEP_INFO_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/values/nd_sbp.h"

namespace oneflow_sbp::graph {

enum class StepTensorKind : uint8_t {
  kInput,           // a marked input (data, labels, constants)
  kParameter,       // a free tensor or marked parameter of the forward
  kGradient,        // a parameter's gradient, as the update op reads it
  kOptimizerState,  // Adam's m and v, in the parameter's layout
  kActivation,      // every other op output, forward or backward
};

// "input", "parameter", "gradient", "optimizer", "activation".
absl::string_view StepTensorKindName(StepTensorKind kind);

// A forward program expanded to a whole training step.
struct TrainingStepInfo {
  Program program;
  // Per tensor id of `program`.
  std::vector<StepTensorKind> kinds;
  // Ops [0, num_forward_ops) are the forward program's, in its order (the
  // loss seed `fill` is the last of them); then num_backward_ops ops the
  // backward rules ran; then one update op per parameter with a gradient.
  int num_forward_ops = 0;
  int num_backward_ops = 0;
  // Tensor id of the loss.
  int loss = -1;
  struct Parameter {
    int tensor = -1;
    // -1 if no gradient reaches it (then it has no update either).
    int gradient = -1;
    std::vector<int> state;
    int update_op = -1;
  };
  // Per parameter of the forward program (free tensors and marked
  // parameters), in its order.
  std::vector<Parameter> parameters;
};

// Per-rank bytes by kind (the largest rank: LocalBytes, which rounds
// uneven splits up). A boxed copy counts in the kind of the tensor it
// copies (a gathered weight is parameter memory, a reduced gradient
// gradient memory).
struct StepMemory {
  static constexpr int kKinds = 5;
  // Indexed by StepTensorKind: the tensors and their copies.
  std::array<int64_t, kKinds> bytes{};
  // The copies' share of `bytes`, by kind.
  std::array<int64_t, kKinds> copies{};
  int64_t of(StepTensorKind kind) const { return bytes[static_cast<int>(kind)]; }
  int64_t copies_of(StepTensorKind kind) const { return copies[static_cast<int>(kind)]; }
  int64_t total() const;
  int64_t total_copies() const;
};

// Requires `a` to fit `program` (as EvaluateAssignment checks) and one
// kind per tensor of `program`.
StepMemory StepMemoryPerRank(const Program& program, const Assignment& a,
                             absl::Span<const StepTensorKind> kinds);

// Which known strategy a choice of parameter layouts amounts to. Per
// parameter of rank >= 2 (weights; norms' gains and biases do not decide
// a strategy) and mesh axis, with `stored` its layout and `used` the
// layout its first forward reader's signature asks on that axis:
//   replicated      stored B                       (data parallel)
//   tensor-parallel stored S, used S               (Megatron: the matmul
//                                                   runs on the shard)
//   gathered        stored S, used B               (ZeRO/FSDP: sharded at
//                                                   rest, all-gathered
//                                                   before use)
// The name: "data parallel" when every weight is replicated on every axis;
// else "Megatron" and/or "ZeRO" by whether some weight is tensor-parallel
// and/or gathered on some axis ("Megatron + ZeRO" when both). `per_axis`
// names each mesh axis the same way, from the weights on that axis alone.
struct StrategyReport {
  std::string name;
  std::vector<std::string> per_axis;
  int weights = 0;
  // Weight-axis pairs of each kind.
  int replicated = 0;
  int tensor_parallel = 0;
  int gathered = 0;
};
StrategyReport ClassifyStrategy(const TrainingStepInfo& step, const Assignment& a);
// The same for any program (an inference plan too): `parameters` are the
// weights' tensor ids, ops before `num_forward_ops` the forward.
StrategyReport ClassifyStrategy(const Program& program, const Assignment& a,
                                absl::Span<const int> parameters, int num_forward_ops);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_TRAINING_STEP_INFO_H_
