// SelectionPolicy: the last stage of signature inference, which ranks the
// candidates that survived the shared stages (candidate_stages.h) and picks
// one, plus the configuration of those stages it wants.
//
// Pipeline (signature_inference.h runs it):
//   PrepareRequest -> ExpandCandidates(rules.source) -> FilterByShape ->
//   FilterByConstraints -> [empty? policy.EmptyAfterFiltering] ->
//   policy.Choose -> InferResult
// Every stage writes to one ExplainRecorder.
//
// Built-in policies: OneFlow1DSelection and OneFlowNdSelection
// (oneflow_selection.h; the `oneflow` cost policy uses the first on 1-D
// placements and the second on N-D ones) and PlannedSelection
// (planned_selection.h). The Engine keeps them in a registry by name, and
// an application can register more.
//
// Contract for Choose: `in.survivors` is non-empty; return the POSITION in
// it of the winner, deterministically (document the tie order); fill the
// ranking fields of the explain records when explain.enabled(). Errors
// name the op.
#ifndef ONEFLOW_SBP_INFERENCE_SELECTION_POLICY_H_
#define ONEFLOW_SBP_INFERENCE_SELECTION_POLICY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/inference/candidate_stages.h"
#include "oneflow_sbp/inference/explain_recorder.h"
#include "oneflow_sbp/inference/infer_types.h"

namespace oneflow_sbp {

// Relative tolerance within which two costs tie: OneFlow's
// kFloatDeviationMinus/Plus are 1 -/+ this, exactly.
inline constexpr double kCostTieTolerance = 1e-7;

// True if `cost` is within the tolerance of `reference` or below it.
inline bool TiesOrBeats(double cost, double reference) {
  return cost <= reference * (1.0 + kCostTieTolerance);
}

// OneFlow's priority of one input for one candidate (SPEC.md §3): the
// numbers are OneFlow's, summed as the candidate's mismatch count.
enum class InputPriority : int {
  kMatches = 0,     // the producer's layout is what the candidate wants
  kNeedsBoxing = 1, // boxing converts it
  kMayNotBox = 2,   // a mutable input that would need real boxing
};

// How a policy wants the shared stages run.
struct StageRules {
  CandidateSource source;
  FilterRules filters;
};

// What Choose sees.
struct SelectionInput {
  const InferRequest& request;
  const PreparedRequest& prepared;
  // Every candidate, by emission id.
  const std::vector<NdSbpSignature>& all;
  // Ids of the survivors, in the order the filters left them.
  const std::vector<int>& survivors;
};

class SelectionPolicy {
 public:
  virtual ~SelectionPolicy() = default;
  SelectionPolicy(const SelectionPolicy&) = delete;
  SelectionPolicy& operator=(const SelectionPolicy&) = delete;

  virtual const StageRules& rules() const = 0;

  // The error when the filters leave nothing.
  virtual absl::Status EmptyAfterFiltering(const SelectionInput& in) const = 0;

  // The winner's position in in.survivors.
  virtual absl::StatusOr<int> Choose(const SelectionInput& in, ExplainRecorder& explain) const = 0;

  // Exact text of everything that changes this policy's choices besides
  // the request (a calibration, with every number in hex-float). Cache
  // keys include it, so two policies with equal fingerprints must choose
  // alike.
  const std::string& fingerprint() const { return fingerprint_; }
  size_t fingerprint_hash() const { return fingerprint_hash_; }

 protected:
  explicit SelectionPolicy(std::string fingerprint);

 private:
  std::string fingerprint_;
  size_t fingerprint_hash_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_SELECTION_POLICY_H_
