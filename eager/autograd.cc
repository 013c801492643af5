#include "eager/autograd.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "eager/apply.h"
#include "eager/tensor_layout.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::eager {
namespace {

struct BackwardRegistry {
  absl::Mutex mu;
  std::map<std::string, BackwardFn, std::less<>> rules ABSL_GUARDED_BY(mu);
};

BackwardRegistry& Rules() {
  static BackwardRegistry* r = new BackwardRegistry;
  return *r;
}

// Gradients collected so far, by tensor identity; summed on arrival.
class GradMap {
 public:
  explicit GradMap(EagerContext& ctx) : ctx_(ctx) {}

  absl::Status Add(const GlobalTensor& t, GlobalTensor g) {
    auto [it, fresh] = grads_.try_emplace(t.id(), g);
    if (fresh) return absl::OkStatus();
    OFS_ASSIGN_OR_RETURN(GlobalTensor sum, Apply1(ctx_, "add_n", {it->second, g}));
    it->second = std::move(sum);
    return absl::OkStatus();
  }
  GlobalTensor Get(const GlobalTensor& t) const { return Get(t.id()); }
  GlobalTensor Get(const void* id) const {
    auto it = grads_.find(id);
    return it == grads_.end() ? GlobalTensor() : it->second;
  }

 private:
  EagerContext& ctx_;
  absl::flat_hash_map<const void*, GlobalTensor> grads_;
};

// Every node reachable from `root`, latest first (reverse tape order).
std::vector<std::shared_ptr<TapeNode>> ReachableNodes(const GlobalTensor& root) {
  std::vector<std::shared_ptr<TapeNode>> nodes;
  absl::flat_hash_set<const TapeNode*> seen;
  std::vector<std::shared_ptr<TapeNode>> stack;
  if (root.autograd().grad_fn) stack.push_back(root.autograd().grad_fn);
  while (!stack.empty()) {
    std::shared_ptr<TapeNode> n = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(n.get()).second) continue;
    for (const GlobalTensor& in : n->inputs) {
      if (in.autograd().grad_fn) stack.push_back(in.autograd().grad_fn);
    }
    nodes.push_back(std::move(n));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a->sequence > b->sequence; });
  return nodes;
}

// Restores grad mode however Backward returns.
class BackwardMode {
 public:
  explicit BackwardMode(EagerContext& ctx)
      : ctx_(ctx), grad_(ctx.grad_enabled()), backward_(ctx.in_backward()) {
    ctx_.set_grad_enabled(false);
    ctx_.set_in_backward(true);
  }
  ~BackwardMode() {
    ctx_.set_grad_enabled(grad_);
    ctx_.set_in_backward(backward_);
  }

 private:
  EagerContext& ctx_;
  bool grad_;
  bool backward_;
};

absl::Status RunNode(EagerContext& ctx, const TapeNode& node, GradMap& grads) {
  std::vector<GlobalTensor> out_grads;
  bool any = false;
  for (size_t i = 0; i < node.output_ids.size(); ++i) {
    // A dropped output received no gradient (nothing consumed it); a live
    // one is identified by its address while the lock holds it.
    const std::shared_ptr<const void> out = node.output_ids[i].lock();
    out_grads.push_back(out ? grads.Get(out.get()) : GlobalTensor());
    any = any || out_grads.back().defined();
  }
  if (!any) return absl::OkStatus();
  std::vector<bool> needs;
  for (const GlobalTensor& in : node.inputs) needs.push_back(in.requires_grad());
  const BackwardFn* fn = FindBackward(node.call->type_name());
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "backward: no gradient rule for op ", QuotedInput(node.call->type_name()),
        " (RegisterBackward adds one); a gradient must flow through it"));
  }
  BackwardContext bctx(ctx, node, std::move(out_grads), std::move(needs));
  absl::StatusOr<std::vector<GlobalTensor>> in_grads = (*fn)(bctx);
  if (!in_grads.ok()) {
    return absl::Status(in_grads.status().code(),
                        absl::StrCat("backward of ", node.call->type_name(), ": ",
                                     in_grads.status().message()));
  }
  for (size_t i = 0; i < node.inputs.size() && i < in_grads->size(); ++i) {
    if (!(*in_grads)[i].defined() || !node.inputs[i].requires_grad()) continue;
    absl::Status s = grads.Add(node.inputs[i], (*in_grads)[i]);
    OFS_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterBackward(const std::string& op, BackwardFn fn) {
  BackwardRegistry& r = Rules();
  absl::MutexLock lock(&r.mu);
  if (!r.rules.emplace(op, std::move(fn)).second) {
    return absl::AlreadyExistsError(absl::StrCat("op ", QuotedInput(op), " already has a backward rule"));
  }
  return absl::OkStatus();
}

const BackwardFn* FindBackward(absl::string_view op) {
  BackwardRegistry& r = Rules();
  absl::MutexLock lock(&r.mu);
  auto it = r.rules.find(op);
  return it == r.rules.end() ? nullptr : &it->second;
}

std::vector<std::string> OpsWithBackward() {
  BackwardRegistry& r = Rules();
  absl::MutexLock lock(&r.mu);
  std::vector<std::string> names;
  for (const auto& [name, fn] : r.rules) names.push_back(name);
  return names;
}

void RecordTape(EagerContext& ctx, std::shared_ptr<const OpCall> call,
                const std::vector<GlobalTensor>& inputs, std::vector<GlobalTensor>& outputs) {
  auto node = std::make_shared<TapeNode>();
  node->sequence = ctx.NextTapeSequence();
  node->call = std::move(call);
  node->inputs = inputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    AutogradMeta& meta = outputs[i].autograd();
    meta.requires_grad = true;
    meta.grad_fn = node;
    meta.output_index = static_cast<int>(i);
  }
  for (const GlobalTensor& o : outputs) {
    node->outputs.push_back(Detach(o));
    node->output_ids.push_back(o.weak_id());
  }
}

absl::Status Backward(EagerContext& ctx, const GlobalTensor& loss, const GlobalTensor& loss_grad) {
  if (!loss.defined() || !loss.requires_grad()) {
    return absl::InvalidArgumentError(
        "backward: the loss does not require grad (no input of its ops requires grad)");
  }
  BackwardMode mode(ctx);
  GlobalTensor seed = loss_grad;
  if (!seed.defined()) {
    if (loss.shape().elem_cnt() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "backward: the loss ", loss.ToString(), " has ", loss.shape().elem_cnt(),
          " elements; give its gradient explicitly"));
    }
    OFS_ASSIGN_OR_RETURN(GlobalTensor ones, Apply1(ctx, "fill", {Detach(loss)}, Attrs({{"value",
        AttrValue(1.0)}})));
    seed = std::move(ones);
  }
  GradMap grads(ctx);
  absl::Status s = grads.Add(loss, seed);
  OFS_RETURN_IF_ERROR(s);
  std::vector<GlobalTensor> leaves;
  absl::flat_hash_set<const void*> leaf_ids;
  for (const std::shared_ptr<TapeNode>& node : ReachableNodes(loss)) {
    s = RunNode(ctx, *node, grads);
    OFS_RETURN_IF_ERROR(s);
    for (const GlobalTensor& in : node->inputs) {
      if (in.requires_grad() && !in.autograd().grad_fn && leaf_ids.insert(in.id()).second) {
        leaves.push_back(in);
      }
    }
  }
  // Leaves get their gradient in their own layout.
  for (const GlobalTensor& leaf : leaves) {
    GlobalTensor g = grads.Get(leaf);
    if (!g.defined()) continue;
    OFS_ASSIGN_OR_RETURN(GlobalTensor placed, Redistribute(ctx, g, leaf.placement(),
        leaf.nd_sbp()));
    AutogradMeta& meta = leaf.autograd();
    if (meta.grad.defined()) {
      OFS_ASSIGN_OR_RETURN(GlobalTensor sum, Apply1(ctx, "add_n", {meta.grad, placed}));
      meta.grad = std::move(sum);
    } else {
      meta.grad = Detach(placed);
    }
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::eager
