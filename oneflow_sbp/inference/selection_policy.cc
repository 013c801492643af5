#include "oneflow_sbp/inference/selection_policy.h"

#include <utility>

#include "absl/hash/hash.h"

namespace oneflow_sbp {

SelectionPolicy::SelectionPolicy(std::string fingerprint)
    : fingerprint_(std::move(fingerprint)), fingerprint_hash_(absl::HashOf(fingerprint_)) {}

}  // namespace oneflow_sbp
