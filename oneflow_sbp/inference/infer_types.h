// Request and result of SBP signature inference for one op call.
//
// Example:
//   InferRequest req;
//   req.op = matmul_call;                         // OpCall with its attrs
//   req.placement = *Placement::Parse("cpu:0-3 [2,2]");
//   req.inputs = {{*TensorDesc::Parse("f32[64,32]"), *NdSbp::Parse("(S(0),B)")},
//                 {*TensorDesc::Parse("f32[32,48]"), *NdSbp::Parse("(B,S(1))")}};
//   absl::StatusOr<InferResult> r = InferSignature(req);
//   SignatureToString(*req.op, r->signature);
//   // "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))"
#ifndef ONEFLOW_SBP_INFERENCE_INFER_TYPES_H_
#define ONEFLOW_SBP_INFERENCE_INFER_TYPES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "oneflow_sbp/inference/copy_cost.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/inference/policy_name.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp {

// One input as its producer made it: logical desc and current NdSbp.
// Immutable, with its hash computed once at construction: an eager
// interpreter builds one per tensor and reuses it for every op call, so the
// cache key of a call combines precomputed hashes (OneFlow interns global
// tensor metas for the same reason).
class InferInput {
 public:
  InferInput() : InferInput(TensorDesc(), NdSbp()) {}
  InferInput(TensorDesc desc, NdSbp nd_sbp);

  const TensorDesc& desc() const { return desc_; }
  const NdSbp& nd_sbp() const { return nd_sbp_; }
  size_t hash() const { return hash_; }

  friend bool operator==(const InferInput& a, const InferInput& b) {
    return a.hash_ == b.hash_ && a.nd_sbp_ == b.nd_sbp_ && a.desc_ == b.desc_;
  }
  friend bool operator!=(const InferInput& a, const InferInput& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const InferInput& in) {
    return H::combine(std::move(h), in.hash_);
  }

 private:
  TensorDesc desc_;
  NdSbp nd_sbp_;
  size_t hash_;
};

// Options that change costs; part of every inference cache key.
struct CostOptions {
  // A cost policy the Engine knows: "oneflow" (default), "planned", or one
  // an application registered. InferSignature itself takes the policy
  // object; the name is what requests, protos and the CLI carry.
  PolicyName policy;
  // For consumers that want P (OneFlow's penalty policy; see copy_cost.h).
  PartialPenalty partial_penalty = PartialPenalty::kProportional;

  friend bool operator==(const CostOptions& a, const CostOptions& b) {
    return a.policy == b.policy && a.partial_penalty == b.partial_penalty;
  }
  friend bool operator!=(const CostOptions& a, const CostOptions& b) { return !(a == b); }
};

struct InferRequest {
  std::shared_ptr<const OpCall> op;
  // Placement of the op and of every input (eager requires one placement).
  Placement placement;
  // In blob order: op->num_inputs() entries.
  std::vector<InferInput> inputs;
  // Empty, or one entry per blob (inputs then outputs): a required NdSbp
  // (in-place ops, user constraints). Entries may contain unset SBPs,
  // which constrain nothing on that mesh axis.
  std::vector<std::optional<NdSbp>> constraints;
  CostOptions cost;
  // Fill InferResult::candidates.
  bool explain = false;
};

enum class CandidateStatus : uint8_t {
  kChosen,
  kRanked,                // survived the filters, lost the ranking
  kFilteredByShape,       // an input split is smaller than its parts
  kFilteredByConstraint,  // disagrees with a constraint
};

// "chosen", "ranked", "filtered_by_shape", "filtered_by_constraint".
absl::string_view CandidateStatusName(CandidateStatus status);

struct CandidateRecord {
  NdSbpSignature signature;
  // Position in emission order (1-D) or row-major product order (N-D),
  // counting the appended all-B candidates.
  int emission_index = 0;
  // 1-D: OneFlow's order value. N-D: 0 (OneFlow has none there).
  int64_t order_value = 0;
  // Sum over inputs; unsupported where an input may not be boxed (or be
  // turned into P under PartialPenalty::kForbidden). Filtered candidates
  // have cost 0 (not evaluated).
  CopyCost copy_cost;
  // Inputs whose NdSbp differs from the producer's.
  int mismatched_inputs = 0;
  CandidateStatus status = CandidateStatus::kRanked;
  // 1-based rank among survivors (1 = chosen); 0 if filtered.
  int rank = 0;
  // N-D: position in the list after OneFlow's swap-with-last filtering,
  // the order in which selection scans (-1 if filtered; 1-D: -1).
  int final_position = -1;
  // Why it was filtered or lost, in words.
  std::string note;
};

struct InferResult {
  // One NdSbp per blob, inputs then outputs.
  NdSbpSignature signature;
  std::vector<TensorDesc> output_descs;
  // The op has no SBP rule and only the all-B signature was considered.
  bool used_broadcast_fallback = false;
  // Candidates after expansion (before filtering), counting all-B.
  int num_candidates = 0;
  // With InferRequest::explain: every candidate, in emission/product order.
  std::vector<CandidateRecord> candidates;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_INFER_TYPES_H_
