// PolicyName: the name of a cost policy ("oneflow", "planned", or one an
// application registers with the Engine), interned so that requests carry
// it as one integer and cache keys compare and hash it for free.
//
// Example:
//   PolicyName p = PolicyName::Of("planned");
//   p == PolicyName::Planned();   // true
//   p.str();                      // "planned"
//
// Interning is process-wide and thread-safe; names are never freed (there
// are only ever a handful). Ids depend on the order names are first seen,
// so they are never printed or used for ordering: only equality and hashing.
#ifndef ONEFLOW_SBP_INFERENCE_POLICY_NAME_H_
#define ONEFLOW_SBP_INFERENCE_POLICY_NAME_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace oneflow_sbp {

class PolicyName {
 public:
  // The default policy: OneFlow's choices.
  PolicyName() : PolicyName(OneFlow()) {}
  static PolicyName Of(absl::string_view name);
  static PolicyName OneFlow();
  static PolicyName Planned();

  const std::string& str() const;
  uint32_t id() const { return id_; }

  friend bool operator==(PolicyName a, PolicyName b) { return a.id_ == b.id_; }
  friend bool operator!=(PolicyName a, PolicyName b) { return a.id_ != b.id_; }
  template <typename H>
  friend H AbslHashValue(H h, PolicyName p) {
    return H::combine(std::move(h), p.id_);
  }

 private:
  explicit PolicyName(uint32_t id) : id_(id) {}
  uint32_t id_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_POLICY_NAME_H_
