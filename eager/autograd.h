// Autograd for eager global tensors: a tape of op calls and reverse-mode
// differentiation through Apply itself.
//
// Every Apply whose inputs require grad (in grad mode) records a TapeNode:
// the op call, its inputs, and detached copies of its outputs (the values
// backward rules may need, without a reference cycle). Backward(loss)
// walks the nodes reachable from `loss` in reverse tape order and runs each
// op's registered backward rule, which is itself a composition of catalog
// ops run through Apply: every gradient gets its own inferred signature and
// boxing, exactly as forward ops do. Gradients meeting at a tensor are
// summed with add_n. A leaf that requires grad receives its gradient
// redistributed to the leaf's own layout (a P gradient of a B parameter is
// all-reduced; of an S parameter, reduce-scattered).
//
//   GlobalTensor w = ...; w.set_requires_grad(true);
//   GlobalTensor loss = ...;                 // ops on w through Apply
//   absl::Status s = Backward(ctx, loss);    // w.grad() now holds dloss/dw
//
// Backward rules: RegisterBackward(op, fn); built-in rules cover the ops a
// transformer block uses (backward_rules.cc). An op without a rule that
// gradients must pass through is kUnimplemented naming the op.
#ifndef EAGER_AUTOGRAD_H_
#define EAGER_AUTOGRAD_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"
#include "oneflow_sbp/rule_api/op_call.h"

namespace oneflow_sbp::eager {

struct TapeNode {
  uint64_t sequence = 0;
  std::shared_ptr<const OpCall> call;
  std::vector<GlobalTensor> inputs;
  // Detached (no autograd state) handles of the outputs' values, for rules
  // that need them (softmax, relu, ...).
  std::vector<GlobalTensor> outputs;
  // The outputs themselves, observed: gradients are keyed by tensor
  // identity, and a node must not keep its outputs alive (they own it).
  std::vector<std::weak_ptr<const void>> output_ids;
};

struct AutogradMeta {
  bool requires_grad = false;
  // Non-leaves: the node that produced the tensor and which output it is.
  std::shared_ptr<TapeNode> grad_fn;
  int output_index = 0;
  // Leaves after Backward: the accumulated gradient in the leaf's layout.
  GlobalTensor grad;
};

// What a backward rule sees.
class BackwardContext {
 public:
  BackwardContext(EagerContext& ctx, const TapeNode& node,
                  std::vector<GlobalTensor> output_grads, std::vector<bool> needs)
      : ctx_(ctx), node_(node), output_grads_(std::move(output_grads)), needs_(std::move(needs)) {}

  EagerContext& ctx() { return ctx_; }
  const OpCall& op() const { return *node_.call; }
  const GlobalTensor& input(int i) const { return node_.inputs[i]; }
  const GlobalTensor& output(int i) const { return node_.outputs[i]; }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  // Undefined where no gradient flows into the output.
  const GlobalTensor& output_grad(int i) const { return output_grads_[i]; }
  // True if input i needs a gradient (it or something before it requires grad).
  bool needs_input_grad(int i) const { return needs_[i]; }
  template <typename T>
  T Attr(absl::string_view name) const {
    absl::StatusOr<T> v = node_.call->attrs().Get<T>(name);
    return v.ok() ? *v : T{};
  }

 private:
  EagerContext& ctx_;
  const TapeNode& node_;
  std::vector<GlobalTensor> output_grads_;
  std::vector<bool> needs_;
};

// Returns one gradient per input (undefined where none is needed or none
// flows), each a GlobalTensor of the input's logical desc in any layout.
using BackwardFn = std::function<absl::StatusOr<std::vector<GlobalTensor>>(BackwardContext&)>;

// kAlreadyExists if the op has a rule.
absl::Status RegisterBackward(const std::string& op, BackwardFn fn);
// nullptr if none.
const BackwardFn* FindBackward(absl::string_view op);
// Ops with a backward rule, sorted.
std::vector<std::string> OpsWithBackward();

// Records a node for outputs produced by `call` from `inputs` (Apply calls
// this when ctx.grad_enabled() and an input requires grad).
void RecordTape(EagerContext& ctx, std::shared_ptr<const OpCall> call,
                const std::vector<GlobalTensor>& inputs, std::vector<GlobalTensor>& outputs);

// d(loss)/d(leaf) for every leaf reachable from `loss` that requires grad,
// stored in leaf.grad() in the leaf's layout. `loss` must have one element
// unless `loss_grad` is given (a tensor of loss's desc). Runs with grad
// mode off. Errors name the op whose rule failed.
absl::Status Backward(EagerContext& ctx, const GlobalTensor& loss,
                      const GlobalTensor& loss_grad = GlobalTensor());

}  // namespace oneflow_sbp::eager

#endif  // EAGER_AUTOGRAD_H_
