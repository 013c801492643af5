// Internals shared by the selection policies of signature inference
// (signature_inference.cc for `oneflow`, planned_selection.cc for
// `planned`). Not part of the API.
#ifndef ONEFLOW_SBP_INTERNAL_INFERENCE_COMMON_H_
#define ONEFLOW_SBP_INTERNAL_INFERENCE_COMMON_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/infer_types.h"
#include "oneflow_sbp/sbp_signature.h"

namespace oneflow_sbp::internal {

// Everything inference derives from a validated request.
struct Prepared {
  const OpCall* call;
  std::vector<TensorDesc> input_descs;
  std::vector<TensorDesc> output_descs;
  // Per blob; empty if the request has none.
  std::vector<std::optional<NdSbp>> constraints;
  bool has_constraints = false;
};

// Validates the request (see signature_inference.h) and runs the shape
// function.
absl::StatusOr<Prepared> Prepare(const InferRequest& req);

const TensorDesc& BlobDesc(const Prepared& p, int blob);
SbpSignature AllBroadcast(int num_blobs);
// True if every set entry of `constraint` equals `value`'s.
bool MatchesConstraint(const NdSbp& value, const NdSbp& constraint);
// "a_0:(S(0),B) out_0:P", for error messages.
std::string ConstraintsToString(const Prepared& p);

// The result shell and, with explain, one record per candidate in list order.
InferResult NewResult(const OpCall& call, size_t num_candidates);
std::vector<CandidateRecord> NewRecords(const std::vector<NdSbpSignature>& list, bool explain);

// SPEC.md §3 steps 1-3: per-value lists (with all-B appended), their
// row-major direct product (last mesh axis fastest), then the op's hook.
// `dedup_lists` drops repeated candidates within each list first (the
// improved policies; OneFlow keeps them, which shifts its removal order).
absl::StatusOr<std::vector<NdSbpSignature>> NdCandidates(const InferRequest& req,
                                                         const Prepared& p, bool dedup_lists);

// The `planned` policy's selection (planned_selection.cc).
absl::StatusOr<InferResult> InferPlanned(const InferRequest& req, const Prepared& p);

}  // namespace oneflow_sbp::internal

#endif  // ONEFLOW_SBP_INTERNAL_INFERENCE_COMMON_H_
