// The stages every selection policy shares (SPEC.md §2 steps 1-3, §3 steps
// 1-6): validate the request and run the shape function; list the
// candidates (the rule's 1-D list per mesh extent, all-B appended, their
// row-major direct product, the op's N-D hook); drop candidates whose
// splits do not fit the shapes; drop candidates that disagree with
// constraints. Each policy configures them through StageRules
// (selection_policy.h) and then ranks what survives.
//
//   PreparedRequest p = *PrepareRequest(request);
//   std::vector<NdSbpSignature> all = *ExpandCandidates(request, p, rules.source);
//   std::vector<int> survivors = AllIds(all);
//   FilterByShape(request, p, all, rules.filters, &survivors, explain);
//   FilterByConstraints(request, p, all, rules.filters, &survivors, explain);
//
// Candidates keep an id (their position in `all`, the emission order);
// filters narrow a vector of ids, so signatures are never copied.
#ifndef ONEFLOW_SBP_INFERENCE_CANDIDATE_STAGES_H_
#define ONEFLOW_SBP_INFERENCE_CANDIDATE_STAGES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/inference/explain_recorder.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"

namespace oneflow_sbp {

// Upper bound on the N-D direct product, to keep a pathological rule on a
// deep mesh from exhausting memory.
inline constexpr int64_t kMaxNdCandidates = int64_t{1} << 20;

// Everything the stages derive from a validated request.
struct PreparedRequest {
  const OpCall* call = nullptr;
  std::vector<TensorDesc> input_descs;
  std::vector<TensorDesc> output_descs;
  // Per blob; empty if the request has none.
  std::vector<std::optional<NdSbp>> constraints;
  bool has_constraints = false;

  // Inputs then outputs.
  const TensorDesc& blob_desc(int blob) const;
};

// Validates the request (see signature_inference.h for the errors) and
// runs the op's shape function.
absl::StatusOr<PreparedRequest> PrepareRequest(const InferRequest& request);

// Where candidates come from.
struct CandidateSource {
  // Drop repeated candidates (first kept) in every per-extent list and in
  // the product. OneFlow keeps them, which shifts its removal order.
  bool deduplicate = false;
  // Let the op's N-D hook edit the product. OneFlow runs it on N-D meshes
  // only (only reshape-class ops have one).
  bool run_nd_hook = true;
  // Which of each op's candidates to list: OneFlow's alone, the rule's
  // whole list, or that and the extended ones (P(max)/P(min)).
  CandidateSet set = CandidateSet::kRule;
};

// Per-extent lists (the rule's list with all-B appended; computed once per
// distinct extent), their row-major direct product with the last mesh axis
// fastest, then the hook. 1-D placements give 1-entry NdSbps.
// kResourceExhausted if the product exceeds kMaxNdCandidates.
absl::StatusOr<std::vector<NdSbpSignature>> ExpandCandidates(const InferRequest& request,
                                                             const PreparedRequest& p,
                                                             const CandidateSource& source);

// How filters remove candidates.
enum class Removal : uint8_t {
  // Survivors keep their order.
  kKeepOrder,
  // OneFlow's N-D filters: scan from the back; a failing candidate is
  // overwritten by the current last one (already checked) and the last is
  // popped. Survivors are then NOT in product order, and every "first
  // match" downstream depends on it (SPEC.md §3).
  kSwapWithLast,
};

struct FilterRules {
  Removal removal = Removal::kKeepOrder;
  // Also drop candidates whose OUTPUT splits do not fit (OneFlow checks
  // inputs only).
  bool shape_checks_outputs = false;
  // Constraints on outputs apply too (OneFlow: 1-D yes, N-D no).
  bool constraints_check_outputs = true;
  // Explain notes for shape failures: OneFlow's 1-D form names the dim
  // ("in_0 S(0): dim 0 has 1 < 2 parts"); otherwise the layout.
  bool per_dim_shape_notes = false;
};

// 0, 1, ..., all.size() - 1.
std::vector<int> AllIds(const std::vector<NdSbpSignature>& all);

// SPEC.md §3 step 4 (and §2 step 2, the same test on a 1-axis mesh).
void FilterByShape(const InferRequest& request, const PreparedRequest& p,
                   const std::vector<NdSbpSignature>& all, const FilterRules& rules,
                   std::vector<int>* survivors, ExplainRecorder& explain);

// SPEC.md §2 step 3, §3 step 5: a constrained blob must have the required
// SBP on every mesh axis the constraint sets.
void FilterByConstraints(const PreparedRequest& p, const std::vector<NdSbpSignature>& all,
                         const FilterRules& rules, std::vector<int>* survivors,
                         ExplainRecorder& explain);

// True if every set entry of `constraint` equals `value`'s.
bool MatchesConstraint(const NdSbp& value, const NdSbp& constraint);
// "a_0:(S(0),B) out_0:P", for error messages.
std::string ConstraintsToString(const PreparedRequest& p);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_CANDIDATE_STAGES_H_
