#include "oneflow_sbp/inference/policy_name.h"

#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace oneflow_sbp {
namespace {

struct InternTable {
  absl::Mutex mu;
  // A deque keeps references to earlier names valid as names are added.
  std::deque<std::string> names ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<std::string, uint32_t> ids ABSL_GUARDED_BY(mu);
};

InternTable& Table() {
  static InternTable* table = new InternTable;
  return *table;
}

}  // namespace

PolicyName PolicyName::Of(absl::string_view name) {
  InternTable& t = Table();
  absl::MutexLock lock(&t.mu);
  auto [it, fresh] = t.ids.try_emplace(std::string(name), static_cast<uint32_t>(t.names.size()));
  if (fresh) t.names.emplace_back(name);
  return PolicyName(it->second);
}

PolicyName PolicyName::OneFlow() {
  static const PolicyName p = Of("oneflow");
  return p;
}

PolicyName PolicyName::Planned() {
  static const PolicyName p = Of("planned");
  return p;
}

const std::string& PolicyName::str() const {
  InternTable& t = Table();
  absl::MutexLock lock(&t.mu);
  return t.names[id_];
}

}  // namespace oneflow_sbp
