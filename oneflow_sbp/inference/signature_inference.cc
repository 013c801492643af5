#include "oneflow_sbp/inference/signature_inference.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/inference/candidate_stages.h"
#include "oneflow_sbp/inference/explain_recorder.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

namespace {

// OneFlow's N-D inference filters candidates by the constraints of inputs
// only; an output constraint would be dropped without a word. Refuse it,
// saying why and what does apply it.
absl::Status CheckOutputConstraints(const InferRequest& request, const PreparedRequest& p,
                                    const FilterRules& rules) {
  if (rules.constraints_check_outputs || !p.has_constraints) return absl::OkStatus();
  const OpCall& call = *p.call;
  for (int b = call.num_inputs(); b < call.num_blobs(); ++b) {
    const std::optional<NdSbp>& c = p.constraints[b];
    bool pins = false;
    for (int i = 0; c && i < c->size(); ++i) pins = pins || !(*c)[i].is_unset();
    if (!pins) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        call.type_name(), ": constraint on output ", call.bn(b), " ", c->ToString(),
        " cannot be applied on the ", request.placement.num_axes(), "-D placement ",
        request.placement.ToString(), " under cost policy ", request.cost.policy.str(),
        ": OneFlow's N-D inference constrains inputs only; constrain the inputs, or use "
        "cost policy planned, which applies output constraints"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InferResult> InferSignature(const InferRequest& request,
                                           const SelectionPolicy& policy) {
  OFS_ASSIGN_OR_RETURN(PreparedRequest p, PrepareRequest(request));
  const StageRules& rules = policy.rules();
  absl::Status outputs_ok = CheckOutputConstraints(request, p, rules.filters);
  OFS_RETURN_IF_ERROR(outputs_ok);
  OFS_ASSIGN_OR_RETURN(std::vector<NdSbpSignature> all, ExpandCandidates(request, p, rules.source));
  absl::Status explainable = CheckExplainable(request, static_cast<int64_t>(all.size()));
  OFS_RETURN_IF_ERROR(explainable);

  ExplainRecorder explain(request.explain, all);
  std::vector<int> survivors = AllIds(all);
  FilterByShape(request, p, all, rules.filters, &survivors, explain);
  FilterByConstraints(p, all, rules.filters, &survivors, explain);
  const SelectionInput in{request, p, all, survivors};
  if (survivors.empty()) return policy.EmptyAfterFiltering(in);

  OFS_ASSIGN_OR_RETURN(int chosen, policy.Choose(in, explain));
  InferResult result;
  result.signature = (all)[survivors[chosen]];
  result.output_descs = std::move(p.output_descs);
  result.used_broadcast_fallback = p.call->def().uses_broadcast_fallback();
  result.num_candidates = static_cast<int>(all.size());
  result.candidates = explain.Take();
  return result;
}

absl::StatusOr<InferResult> InferSignature(const InferRequest& request) {
  if (request.cost.policy != PolicyName::OneFlow()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cost policy ", request.cost.policy.str(),
        " needs an Engine, which knows its cost model; InferSignature alone knows only oneflow"));
  }
  return InferSignature(request, *OneFlowSelectionFor(request.placement));
}

}  // namespace oneflow_sbp
