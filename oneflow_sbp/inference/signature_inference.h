// SBP signature inference for one op call on global tensors: the shared
// stages (candidate_stages.h) configured and finished by a SelectionPolicy
// (selection_policy.h). Under the `oneflow` policy (oneflow_selection.h)
// choices are OneFlow's exactly (SPEC.md §2, §3).
//
//   absl::StatusOr<InferResult> r = InferSignature(request, OneFlowSelectionFor(request.placement));
//
// Most callers go through Engine::Infer (engine.h), which resolves the
// policy the request names and caches results.
//
// Errors (never aborts):
//   kInvalidArgument   bad request: wrong number of inputs, an input nd_sbp
//                      of the wrong length, unset, or splitting a dim the
//                      tensor lacks; a bad constraint; shape-function
//                      errors; constraints no candidate satisfies; no
//                      candidate the policy accepts.
//   kInternal          a rule bug: a candidate leaves a blob unset, splits
//                      a dim the blob lacks, or the rule, shape function or
//                      hook misuses the API (an undeclared blob or
//                      attribute, or an attribute read with another type).
//   kResourceExhausted the N-D product would exceed kMaxNdCandidates.
// Every message names the op, and the blob where one is at fault.
//
// Deterministic: no hash-order iteration anywhere; ties resolve by the
// documented order of each policy.
#ifndef ONEFLOW_SBP_INFERENCE_SIGNATURE_INFERENCE_H_
#define ONEFLOW_SBP_INFERENCE_SIGNATURE_INFERENCE_H_

#include "absl/status/statusor.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/inference/selection_policy.h"

namespace oneflow_sbp {

absl::StatusOr<InferResult> InferSignature(const InferRequest& request,
                                           const SelectionPolicy& policy);

// The `oneflow` policy for the request's placement. A request naming any
// other policy is kFailedPrecondition: only an Engine knows it.
absl::StatusOr<InferResult> InferSignature(const InferRequest& request);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_SIGNATURE_INFERENCE_H_
