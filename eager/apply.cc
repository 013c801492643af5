#include "eager/apply.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "eager/autograd.h"
#include "eager/tensor_layout.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::eager {
namespace {

absl::Status Annotated(const OpCall& call, const absl::Status& s) {
  if (s.ok() || absl::StartsWith(s.message(), call.type_name())) return s;
  return absl::Status(s.code(), absl::StrCat(call.type_name(), ": ", s.message()));
}

absl::Status CheckInputs(const OpCall& call, absl::Span<const GlobalTensor> inputs) {
  if (static_cast<int>(inputs.size()) != call.num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat(call.type_name(), " takes ",
                                                   call.num_inputs(), " inputs; got ",
                                                   inputs.size()));
  }
  if (inputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.type_name(), ": eager ops need at least one input (a placement)"));
  }
  for (size_t b = 0; b < inputs.size(); ++b) {
    if (!inputs[b].defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat(call.type_name(), ": input ", call.bn(static_cast<int>(b)), " is undefined"));
    }
    if (!(inputs[b].placement() == inputs[0].placement())) {
      return absl::InvalidArgumentError(absl::StrCat(
          call.type_name(), ": Expected all tensors to be on the same placement, but ",
          call.bn(0), " is on ", inputs[0].placement().ToString(), " and ",
          call.bn(static_cast<int>(b)), " on ", inputs[b].placement().ToString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<InferRequest> MakeRequest(EagerContext& ctx,
                                         const std::shared_ptr<const OpCall>& call,
                                         absl::Span<const GlobalTensor> inputs,
                                         const NdSbpSignature* required) {
  InferRequest req;
  req.op = call;
  req.placement = inputs[0].placement();
  req.inputs.reserve(inputs.size());
  for (const GlobalTensor& t : inputs) req.inputs.push_back(t.meta());
  // Mutable inputs keep their layout, as OneFlow pins tensors updated in
  // place: they become constraints.
  for (int b = 0; b < call->num_inputs(); ++b) {
    if (!call->is_mutable_input(b)) continue;
    if (req.constraints.empty()) req.constraints.resize(call->num_blobs());
    req.constraints[b] = inputs[b].nd_sbp();
  }
  req.cost.policy = ctx.options().cost_policy;
  if (required != nullptr) {
    // A required signature comes from the graph planner, which chooses
    // among every candidate the engine knows (the `planned` list: OneFlow's,
    // ours and the extended partials). Look it up in that list whatever the
    // context's policy: `oneflow` lists OneFlow's candidates alone.
    req.cost.policy = PolicyName::Planned();
    // Outputs too where the policy's constraint filter checks them (OneFlow's
    // 1-D rules, planned). OneFlow's N-D rules constrain inputs only and the
    // engine refuses an output constraint there, so pin the inputs alone;
    // ApplyInternal checks the outputs the inference picked against
    // `required` afterwards.
    OFS_ASSIGN_OR_RETURN(const engine::Engine::PolicyPtr policy,
                         ctx.engine().SelectionPolicyFor(req.cost.policy, req.placement));
    const int pinned = policy->rules().filters.constraints_check_outputs ? call->num_blobs()
                                                                         : call->num_inputs();
    req.constraints.assign(required->begin(), required->begin() + pinned);
    req.constraints.resize(call->num_blobs());
  }
  return req;
}

// This rank's layouts of every blob and the kernel, computed once per
// inference result (a cache hit returns the same result object).
absl::StatusOr<const EagerContext::PreparedKernel*> Prepare(
    EagerContext& ctx, const std::shared_ptr<const OpCall>& call,
    const std::shared_ptr<const InferResult>& result, int64_t parallel_id,
    const std::vector<GlobalTensor>& boxed) {
  auto& prepared = ctx.prepared_kernels();
  auto it = prepared.find(result.get());
  if (it != prepared.end()) return &it->second;
  std::vector<TensorDesc> descs;
  descs.reserve(call->num_blobs());
  for (const GlobalTensor& t : boxed) descs.push_back(t.desc());
  for (const TensorDesc& d : result->output_descs) descs.push_back(d);
  OFS_ASSIGN_OR_RETURN(std::vector<kernels::BlobLayout> layouts, kernels::MakeBlobLayouts( *call,
      boxed[0].placement(), parallel_id, descs, result->signature));
  OFS_ASSIGN_OR_RETURN(kernels::KernelFn fn, ctx.kernels().Find(call->type_name(),
      boxed[0].placement().device_type()));
  if (prepared.size() >= EagerContext::kMaxPreparedKernels) prepared.clear();
  auto [pos, fresh] = prepared.try_emplace(
      result.get(), EagerContext::PreparedKernel{result, std::move(layouts), std::move(fn)});
  return &pos->second;
}

// The kernel on this rank's shards; returns the local outputs.
absl::StatusOr<std::vector<LocalTensor>> Compute(EagerContext& ctx,
                                                 const std::shared_ptr<const OpCall>& call,
                                                 const std::shared_ptr<const InferResult>& result,
                                                 int64_t parallel_id,
                                                 const std::vector<GlobalTensor>& boxed) {
  OFS_ASSIGN_OR_RETURN(const EagerContext::PreparedKernel* prep, Prepare(ctx, call, result,
      parallel_id, boxed));
  const absl::Span<const kernels::BlobLayout> outs =
      absl::MakeConstSpan(prep->layouts).subspan(call->num_inputs());
  // Outputs live where the placement's kernels run: a cuda kernel writing
  // into host memory is an illegal access (the first GPU run of the demo).
  OFS_ASSIGN_OR_RETURN(std::vector<LocalTensor> outputs, kernels::AllocateLocalOutputs(outs,
      boxed[0].placement().device_type()));
  std::vector<LocalTensor> inputs;
  inputs.reserve(boxed.size());
  for (const GlobalTensor& t : boxed) inputs.push_back(t.local());
  OFS_ASSIGN_OR_RETURN(kernels::KernelContext kctx, kernels::KernelContext::MakeWithLayouts( call,
      boxed[0].placement(), parallel_id, prep->layouts, std::move(inputs), outputs));
  // Kernels of layouts that need collectives (vocabulary-parallel
  // cross-entropy) reach the other ranks through the world.
  absl::Status s = kctx.SetWorld(&ctx.world());
  if (s.ok()) s = prep->fn(kctx);
  if (s.ok()) s = kctx.status();
  OFS_RETURN_IF_ERROR(s);
  return outputs;
}

// A plan's `required` signature must fit the call, and it must keep every
// mutable input where it is.
absl::Status CheckRequired(const OpCall& call, absl::Span<const GlobalTensor> inputs,
                           const NdSbpSignature& required) {
  if (static_cast<int>(required.size()) != call.num_blobs()) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.type_name(), ": the required signature has ", required.size(),
                     " blobs; the op call has ", call.num_blobs()));
  }
  // Mutable inputs cannot move: a plan that moves one is not runnable.
  for (int b = 0; b < call.num_inputs(); ++b) {
    if (call.is_mutable_input(b) && !(inputs[b].nd_sbp() == required[b])) {
      return absl::FailedPreconditionError(absl::StrCat(
          call.type_name(), ": the required signature wants mutable input ", call.bn(b),
          " as ", required[b].ToString(), " but it is ", inputs[b].nd_sbp().ToString()));
    }
  }
  return absl::OkStatus();
}

// The time since `*mark`, which moves to now: one phase of an op's trace.
absl::Duration Lap(absl::Time* mark) {
  const absl::Time now = absl::Now();
  const absl::Duration elapsed = now - *mark;
  *mark = now;
  return elapsed;
}

// The inference result for `inputs`; with `required`, one that chose it.
absl::StatusOr<std::shared_ptr<const InferResult>> InferFor(
    EagerContext& ctx, const std::shared_ptr<const OpCall>& call,
    absl::Span<const GlobalTensor> inputs, const NdSbpSignature* required) {
  OFS_ASSIGN_OR_RETURN(InferRequest request, MakeRequest(ctx, call, inputs, required));
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const InferResult> result, ctx.engine().Infer(request));
  const NdSbpSignature& sig = result->signature;
  if (required != nullptr && !(sig == *required)) {
    return absl::FailedPreconditionError(absl::StrCat(
        call->type_name(), ": the plan requires ", SignatureToString(*call, *required),
        " but inference with those constraints chose ", SignatureToString(*call, sig)));
  }
  return result;
}

// `inputs` redistributed to the layouts `sig` gives them; `boxing_steps`
// (when not null) collects each step for the trace.
absl::StatusOr<std::vector<GlobalTensor>> BoxInputs(EagerContext& ctx, const OpCall& call,
                                                    absl::Span<const GlobalTensor> inputs,
                                                    const NdSbpSignature& sig,
                                                    std::vector<BoxingEvent>* boxing_steps) {
  const Placement& placement = inputs[0].placement();
  std::vector<GlobalTensor> boxed(inputs.begin(), inputs.end());
  for (int b = 0; b < call.num_inputs(); ++b) {
    if (boxed[b].nd_sbp() == sig[b]) continue;
    absl::StatusOr<GlobalTensor> moved =
        Redistribute(ctx, boxed[b], placement, sig[b], call.bn(b), boxing_steps);
    if (!moved.ok()) return Annotated(call, moved.status());
    boxed[b] = *std::move(moved);
  }
  return boxed;
}

// The global outputs around this rank's `locals` (undefined on ranks
// outside the placement).
std::vector<GlobalTensor> WrapOutputs(const OpCall& call, const InferResult& result,
                                      const Placement& placement,
                                      std::vector<LocalTensor> locals) {
  std::vector<GlobalTensor> outputs;
  outputs.reserve(call.num_outputs());
  for (int i = 0; i < call.num_outputs(); ++i) {
    outputs.emplace_back(result.output_descs[i], placement,
                         result.signature[call.num_inputs() + i], std::move(locals[i]));
  }
  return outputs;
}

// Hands the call to the graph recorder and, where gradients flow, to the
// tape, which links `outputs` to the node it records.
void RecordCall(EagerContext& ctx, const std::shared_ptr<const OpCall>& call,
                absl::Span<const GlobalTensor> inputs, std::vector<GlobalTensor>& outputs) {
  if (ctx.recorder() != nullptr && (!ctx.in_backward() || ctx.recorder()->record_backward())) {
    ctx.recorder()->Record(*call, inputs, outputs);
  }
  if (ctx.grad_enabled()) {
    bool any = false;
    for (const GlobalTensor& t : inputs) any = any || t.requires_grad();
    if (any) {
      RecordTape(ctx, call, std::vector<GlobalTensor>(inputs.begin(), inputs.end()), outputs);
    }
  }
}

absl::StatusOr<std::vector<GlobalTensor>> ApplyInternal(
    EagerContext& ctx, const std::shared_ptr<const OpCall>& call,
    absl::Span<const GlobalTensor> inputs, const NdSbpSignature* required) {
  absl::Status s = CheckInputs(*call, inputs);
  OFS_RETURN_IF_ERROR(s);
  if (required != nullptr) {
    s = CheckRequired(*call, inputs, *required);
    OFS_RETURN_IF_ERROR(s);
  }
  const bool tracing = ctx.options().trace;
  OpEvent event;
  absl::Time mark;
  if (tracing) event.start = mark = absl::Now();

  // infer
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const InferResult> result, InferFor(ctx, call, inputs,
      required));
  const NdSbpSignature& sig = result->signature;
  if (tracing) event.infer = Lap(&mark);

  // box
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> boxed, BoxInputs(ctx, *call, inputs, sig,
      tracing ? &event.boxing_steps : nullptr));
  if (tracing) event.boxing = Lap(&mark);

  // compute
  const Placement& placement = inputs[0].placement();
  std::vector<LocalTensor> locals(call->num_outputs());
  absl::StatusOr<int64_t> parallel_id = placement.ParallelIdOf(ctx.rank());
  if (parallel_id.ok()) {
    absl::StatusOr<std::vector<LocalTensor>> computed =
        Compute(ctx, call, result, *parallel_id, boxed);
    if (!computed.ok()) return Annotated(*call, computed.status());
    locals = *std::move(computed);
  }

  // wrap
  std::vector<GlobalTensor> outputs = WrapOutputs(*call, *result, placement, std::move(locals));
  RecordCall(ctx, call, inputs, outputs);
  if (tracing) {
    event.kernel = Lap(&mark);
    event.total = mark - event.start;
    event.op = call->type_name();
    event.signature = SignatureToString(*call, sig);
    event.backward = ctx.in_backward();
    ctx.trace().Add(std::move(event));
  }
  return outputs;
}

}  // namespace

absl::StatusOr<std::vector<GlobalTensor>> Apply(EagerContext& ctx,
                                                const std::shared_ptr<const OpCall>& call,
                                                absl::Span<const GlobalTensor> inputs) {
  return ApplyInternal(ctx, call, inputs, nullptr);
}

absl::StatusOr<std::vector<GlobalTensor>> ApplyWithSignature(
    EagerContext& ctx, const std::shared_ptr<const OpCall>& call,
    absl::Span<const GlobalTensor> inputs, const NdSbpSignature& required) {
  return ApplyInternal(ctx, call, inputs, &required);
}

absl::StatusOr<std::vector<GlobalTensor>> Apply(EagerContext& ctx, absl::string_view op,
                                                absl::Span<const GlobalTensor> inputs,
                                                const AttrMap& attrs) {
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpCall> call, ctx.Call(op,
      static_cast<int>(inputs.size()), attrs));
  return Apply(ctx, call, inputs);
}

absl::StatusOr<GlobalTensor> Apply1(EagerContext& ctx, absl::string_view op,
                                    absl::Span<const GlobalTensor> inputs, const AttrMap& attrs) {
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> out, Apply(ctx, op, inputs, attrs));
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(op, " has no outputs; use Apply"));
  }
  return std::move(out.front());
}

AttrMap Attrs(std::initializer_list<std::pair<const char*, AttrValue>> attrs) {
  AttrMap m;
  for (const auto& [name, value] : attrs) m.Set(name, value);
  return m;
}

}  // namespace oneflow_sbp::eager
