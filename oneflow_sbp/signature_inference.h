// SBP signature inference: OneFlow's algorithm for choosing the signature
// of one op call on global tensors (SPEC.md §2 for 1-D placements, §3 for
// N-D ones), implemented exactly under the `oneflow` cost policy so that
// choices match OneFlow's.
//
// Example: see infer_types.h.
//
// Pipeline: validate the request; run the op's shape function; list the
// 1-D candidates of the rule (per distinct mesh extent on N-D meshes) and
// append the all-B signature; expand to N-D by row-major direct product;
// let the op's hook edit the list; drop candidates whose input splits do not
// fit the shapes; apply constraints; then choose (1-D: rank by order value,
// copy cost, emission order; N-D: first all-matching candidate, else least
// eager copy cost).
//
// Errors (never aborts):
//   kInvalidArgument  bad request: wrong number of inputs, an input nd_sbp
//                     of the wrong length, unset, or splitting a dim the
//                     tensor lacks; a bad constraint; shape-function errors;
//                     constraints no candidate satisfies.
//   kInternal         a rule bug: a candidate leaves a blob unset, splits a
//                     dim the input lacks, or the rule misuses the API.
//   kResourceExhausted the N-D product would exceed kMaxNdCandidates.
// Every message names the op, and the blob where one is at fault.
//
// Deterministic: no hash-order iteration anywhere; ties resolve by the
// documented orders in the implementation.
#ifndef ONEFLOW_SBP_SIGNATURE_INFERENCE_H_
#define ONEFLOW_SBP_SIGNATURE_INFERENCE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneflow_sbp/candidate_list.h"
#include "oneflow_sbp/infer_types.h"
#include "oneflow_sbp/op_call.h"
#include "oneflow_sbp/placement.h"
#include "oneflow_sbp/sbp_signature.h"
#include "oneflow_sbp/tensor_desc.h"

namespace oneflow_sbp {

// Upper bound on the N-D direct product, to keep a pathological rule on a
// deep mesh from exhausting memory.
inline constexpr int64_t kMaxNdCandidates = int64_t{1} << 20;

absl::StatusOr<InferResult> InferSignature(const InferRequest& request);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_SIGNATURE_INFERENCE_H_
