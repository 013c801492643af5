// What an op's N-D candidate hook sees (SPEC.md §3 step 3): the op call,
// logical descs, the hierarchy, and the direct-product candidate list,
// which it may edit (only reshape-class ops do, appending their N-D
// enumeration and removing unsplittable outputs).
#ifndef ONEFLOW_SBP_RULE_API_ND_CANDIDATE_CONTEXT_H_
#define ONEFLOW_SBP_RULE_API_ND_CANDIDATE_CONTEXT_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp {

class NdCandidateContext {
 public:
  NdCandidateContext(const OpCall& call, absl::Span<const TensorDesc> input_descs,
                     absl::Span<const TensorDesc> output_descs,
                     absl::Span<const int64_t> hierarchy,
                     std::vector<NdSbpSignature>* candidates)
      : call_(call),
        input_descs_(input_descs),
        output_descs_(output_descs),
        hierarchy_(hierarchy),
        candidates_(candidates) {}

  const OpCall& op() const { return call_; }
  absl::Span<const TensorDesc> input_descs() const { return input_descs_; }
  absl::Span<const TensorDesc> output_descs() const { return output_descs_; }
  absl::Span<const int64_t> hierarchy() const { return hierarchy_; }
  std::vector<NdSbpSignature>& candidates() { return *candidates_; }
  // The attribute, or T{} with a bug recorded in status() (kInternal) if
  // the op does not declare it or it has another type.
  template <typename T>
  T Attr(absl::string_view name) {
    return AttrOrRecordBug<T>(call_.attrs(), name, "", &status_);
  }
  const absl::Status& status() const { return status_; }

 private:
  const OpCall& call_;
  absl::Span<const TensorDesc> input_descs_;
  absl::Span<const TensorDesc> output_descs_;
  absl::Span<const int64_t> hierarchy_;
  std::vector<NdSbpSignature>* candidates_;
  absl::Status status_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_RULE_API_ND_CANDIDATE_CONTEXT_H_
