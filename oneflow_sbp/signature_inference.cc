#include "oneflow_sbp/signature_inference.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/candidate_stages.h"
#include "oneflow_sbp/explain_recorder.h"
#include "oneflow_sbp/oneflow_selection.h"

namespace oneflow_sbp {

absl::StatusOr<InferResult> InferSignature(const InferRequest& request,
                                           const SelectionPolicy& policy) {
  absl::StatusOr<PreparedRequest> p = PrepareRequest(request);
  if (!p.ok()) return p.status();
  const StageRules& rules = policy.rules();
  absl::StatusOr<std::vector<NdSbpSignature>> all = ExpandCandidates(request, *p, rules.source);
  if (!all.ok()) return all.status();
  absl::Status explainable = CheckExplainable(request, static_cast<int64_t>(all->size()));
  if (!explainable.ok()) return explainable;

  ExplainRecorder explain(request.explain, *all);
  std::vector<int> survivors = AllIds(*all);
  FilterByShape(request, *p, *all, rules.filters, &survivors, explain);
  FilterByConstraints(*p, *all, rules.filters, &survivors, explain);
  const SelectionInput in{request, *p, *all, survivors};
  if (survivors.empty()) return policy.EmptyAfterFiltering(in);

  absl::StatusOr<int> chosen = policy.Choose(in, explain);
  if (!chosen.ok()) return chosen.status();
  InferResult result;
  result.signature = (*all)[survivors[*chosen]];
  result.output_descs = std::move(p->output_descs);
  result.used_broadcast_fallback = p->call->def().uses_broadcast_fallback();
  result.num_candidates = static_cast<int>(all->size());
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
