// The `oneflow` cost policy: OneFlow's selection, reproduced exactly so a
// user coming from OneFlow gets the same signature (SPEC.md §2 for 1-D
// placements, §3 for N-D ones), quirks included (SPEC.md §9, "oneflow
// policy" column).
//
//   OneFlow1DSelection: stages keep order; constraints apply to inputs and
//     outputs. Rank by order value (-10 per input kept as produced; 0 for
//     every candidate when there are constraints; -1 per S(0) output for
//     ops without inputs), then OneFlow's crude 1-D copy cost, then
//     emission order (a stable sort: OneFlow's std::sort is stable up to 16
//     elements, which is where it matters in practice).
//   OneFlowNdSelection: the product is filtered by swap-with-last removal,
//     inputs only; output constraints are ignored. The FIRST candidate
//     whose inputs all match their producers wins at once; otherwise the
//     least eager N-D copy cost wins, and of equal costs the LATEST in the
//     final (reordered) list: OneFlow 0.9.0 keeps a candidate whose cost is
//     <= the running best, with no tolerance (checked against the released
//     engine, tests/testdata/oneflow_oracle_golden.txt). The source our
//     SPEC.md was written from kept the earliest within 1e-7 instead.
#ifndef ONEFLOW_SBP_INFERENCE_ONEFLOW_SELECTION_H_
#define ONEFLOW_SBP_INFERENCE_ONEFLOW_SELECTION_H_

#include <memory>
#include <string>

#include "oneflow_sbp/inference/selection_policy.h"

namespace oneflow_sbp {

class OneFlow1DSelection : public SelectionPolicy {
 public:
  OneFlow1DSelection() : SelectionPolicy("oneflow/1d") {}
  const StageRules& rules() const override;
  absl::Status EmptyAfterFiltering(const SelectionInput& in) const override;
  absl::StatusOr<int> Choose(const SelectionInput& in, ExplainRecorder& explain) const override;
};

class OneFlowNdSelection : public SelectionPolicy {
 public:
  OneFlowNdSelection() : SelectionPolicy("oneflow/nd") {}
  const StageRules& rules() const override;
  absl::Status EmptyAfterFiltering(const SelectionInput& in) const override;
  absl::StatusOr<int> Choose(const SelectionInput& in, ExplainRecorder& explain) const override;
};

// Shared instances (the policies are stateless).
const std::shared_ptr<const OneFlow1DSelection>& OneFlow1D();
const std::shared_ptr<const OneFlowNdSelection>& OneFlowNd();
// OneFlow1D() on 1-axis placements, else OneFlowNd().
std::shared_ptr<const SelectionPolicy> OneFlowSelectionFor(const Placement& placement);

// The "Empty sbp signature after filtering" error (OneFlow's N-D wording),
// shared by every policy that has no wording of its own.
absl::Status EmptySignatureListError(const SelectionInput& in);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_ONEFLOW_SELECTION_H_
