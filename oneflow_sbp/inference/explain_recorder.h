// ExplainRecorder: the one place every selection stage writes what it did
// to each candidate (filtered and why, cost, rank, final position), so an
// explanation (`sbp infer --explain`, InferResult::candidates) is assembled
// the same way for every policy.
//
// Disabled (the common case) it records nothing and never builds a note:
// notes are passed as callables that run only when enabled.
//
//   ExplainRecorder explain(request.explain, list);
//   explain.Filter(id, CandidateStatus::kFilteredByShape, [&] { return "..."; });
//   explain.Rank(id, rank, CandidateStatus::kChosen, "least cost");
//   result.candidates = explain.Take();
#ifndef ONEFLOW_SBP_INFERENCE_EXPLAIN_RECORDER_H_
#define ONEFLOW_SBP_INFERENCE_EXPLAIN_RECORDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"

namespace oneflow_sbp {

// An explanation lists every candidate; beyond this many (a JSON record is
// ~350 bytes, so ~6 MB) InferSignature refuses to explain with
// kResourceExhausted instead of writing hundreds of megabytes (the N-D
// product may reach kMaxNdCandidates, 2^20).
inline constexpr int64_t kMaxExplainCandidates = int64_t{1} << 14;

// kResourceExhausted naming the op if `request` asks for an explanation of
// more than kMaxExplainCandidates candidates; OK otherwise.
absl::Status CheckExplainable(const InferRequest& request, int64_t num_candidates);

class ExplainRecorder {
 public:
  // One record per candidate of `list`, indexed by its emission id (its
  // position in `list`, the order the candidate source produced).
  ExplainRecorder(bool enabled, const std::vector<NdSbpSignature>& list);

  bool enabled() const { return enabled_; }

  // A filter dropped candidate `id`.
  template <typename Note>
  void Filter(int id, CandidateStatus status, Note&& note) {
    if (!enabled_) return;
    records_[id].status = status;
    records_[id].note = note();
  }
  // A surviving candidate's place in the ranking (1 = chosen).
  void Rank(int id, int rank, CandidateStatus status, std::string note) {
    if (!enabled_) return;
    records_[id].rank = rank;
    records_[id].status = status;
    records_[id].note = std::move(note);
  }
  // Direct access for the ranking fields a policy fills (cost, order value,
  // mismatches, final position). Requires enabled().
  CandidateRecord& record(int id) { return records_[id]; }

  std::vector<CandidateRecord> Take() { return std::move(records_); }

 private:
  bool enabled_;
  std::vector<CandidateRecord> records_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_EXPLAIN_RECORDER_H_
