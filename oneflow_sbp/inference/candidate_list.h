// Candidate lists of an op call: the validated 1-D list of its rule, and
// the shape test the N-D filter applies (SPEC.md §2 step 1, §3 step 4).
#ifndef ONEFLOW_SBP_INFERENCE_CANDIDATE_LIST_H_
#define ONEFLOW_SBP_INFERENCE_CANDIDATE_LIST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp {

// Which of an op's candidates a list holds.
enum class CandidateSet : uint8_t {
  // OneFlow's own: the rule's list up to SbpContext::OursFollow(), the
  // list OneFlow 0.9.0's GetSbp emits (the `oneflow` policy).
  kOneFlow,
  // The rule's whole list: OneFlow's, then the ones it lacks (the record's
  // `ours`: gather's P -> P and the like). What golden tests pin.
  kRule,
  // kRule, then the op's extended rule (OpDef::extended_sbp_fn:
  // P(max)/P(min) candidates; the `planned` policy).
  kExtended,
};

// The op's 1-D candidate list in emission order, validated (every blob
// set; split axes within the blob's rank), WITHOUT the appended all-B
// signature. Empty for broadcast-fallback ops.
absl::StatusOr<std::vector<SbpSignature>> GetSbpCandidates(
    const OpCall& call, absl::Span<const TensorDesc> input_descs,
    absl::Span<const TensorDesc> output_descs, int64_t hierarchy_value,
    int64_t parallel_num, DeviceType device_type, CandidateSet set = CandidateSet::kRule);

// SPEC.md §3 step 4: walk the mesh axes; S(a) on axis i fails if a >= rank
// or the current extent of dim a is < hierarchy[i], else the extent becomes
// floor(extent / hierarchy[i]).
bool IsSplittable(const Shape& shape, const NdSbp& nd_sbp,
                  absl::Span<const int64_t> hierarchy);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_CANDIDATE_LIST_H_
