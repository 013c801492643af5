#include "oneflow_sbp/op_registry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/check.h"

namespace oneflow_sbp {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* const registry = new OpRegistry();
  return *registry;
}

absl::Status OpRegistry::Register(OpDef def) {
  absl::MutexLock lock(&mu_);
  const std::string name = def.type_name();
  if (ops_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("op '", name, "' is already registered"));
  }
  ops_.emplace(name, std::make_shared<const OpDef>(std::move(def)));
  return absl::OkStatus();
}

absl::Status OpRegistry::Register(const OpDefBuilder& builder) {
  absl::StatusOr<OpDef> def = builder.Build();
  if (!def.ok()) return def.status();
  return Register(*std::move(def));
}

std::shared_ptr<const OpDef> OpRegistry::Find(absl::string_view type_name) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(type_name);
  return it == ops_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<const OpDef>> OpRegistry::Get(
    absl::string_view type_name) const {
  std::shared_ptr<const OpDef> def = Find(type_name);
  if (def != nullptr) return def;
  // Suggest names sharing a prefix or containing the query.
  std::vector<std::string> close;
  for (const std::string& name : OpNames()) {
    if (type_name.size() >= 3 &&
        (absl::StrContains(name, type_name) ||
         absl::StartsWith(name, type_name.substr(0, 3)))) {
      close.push_back(name);
    }
  }
  if (close.size() > 6) close.resize(6);
  return absl::NotFoundError(absl::StrCat(
      "unknown op '", type_name, "'",
      close.empty() ? "" : absl::StrCat(" (did you mean ", absl::StrJoin(close, ", "), "?)"),
      "; `sbp ops` lists the registered ops"));
}

std::vector<std::string> OpRegistry::OpNames() const {
  std::vector<std::string> names;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, def] : ops_) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace internal {

StaticOpRegistration::StaticOpRegistration(const OpDefBuilder& builder) {
  const absl::Status s = OpRegistry::Global().Register(builder);
  OFS_CHECK(s.ok()) << s.message();
}

}  // namespace internal
}  // namespace oneflow_sbp
