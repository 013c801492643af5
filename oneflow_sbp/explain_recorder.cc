#include "oneflow_sbp/explain_recorder.h"

namespace oneflow_sbp {

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
