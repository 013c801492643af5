#include "oneflow_sbp/inference/explain_recorder.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp {

absl::Status CheckExplainable(const InferRequest& request, int64_t num_candidates) {
  if (!request.explain || num_candidates <= kMaxExplainCandidates) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      request.op->type_name(), ": explain lists at most ", kMaxExplainCandidates,
      " candidates and this call has ", num_candidates,
      "; infer without explain, or on fewer mesh axes"));
}

ExplainRecorder::ExplainRecorder(bool enabled, const std::vector<NdSbpSignature>& list)
    : enabled_(enabled) {
  if (!enabled_) return;
  records_.resize(list.size());
  for (size_t k = 0; k < list.size(); ++k) {
    records_[k].signature = list[k];
    records_[k].emission_index = static_cast<int>(k);
  }
}

}  // namespace oneflow_sbp
