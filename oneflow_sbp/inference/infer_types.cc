#include "oneflow_sbp/inference/infer_types.h"

#include "absl/hash/hash.h"

namespace oneflow_sbp {

InferInput::InferInput(TensorDesc desc, NdSbp nd_sbp)
    : desc_(std::move(desc)), nd_sbp_(nd_sbp), hash_(absl::HashOf(desc_, nd_sbp_)) {}

absl::string_view CandidateStatusName(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::kChosen: return "chosen";
    case CandidateStatus::kRanked: return "ranked";
    case CandidateStatus::kFilteredByShape: return "filtered_by_shape";
    case CandidateStatus::kFilteredByConstraint: return "filtered_by_constraint";
  }
  return "?";
}

}  // namespace oneflow_sbp
