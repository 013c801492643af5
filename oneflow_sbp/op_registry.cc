#include "oneflow_sbp/op_registry.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/quoted_input.h"
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
    return absl::AlreadyExistsError(absl::StrCat("op ", QuotedInput(name), " is already registered"));
  }
  // An op may not take a name that already resolves, as an alias, to
  // another op: users typing it would silently change ops.
  if (auto it = aliases_.find(name); it != aliases_.end()) {
    return absl::AlreadyExistsError(absl::StrCat("op ", QuotedInput(name), " is already registered as an alias of ",
                                                 QuotedInput(it->second)));
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
  if (it != ops_.end()) return it->second;
  auto alias = aliases_.find(type_name);
  if (alias == aliases_.end()) return nullptr;
  it = ops_.find(alias->second);  // always there: aliases point at ops
  return it == ops_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<const OpDef>> OpRegistry::Get(
    absl::string_view type_name) const {
  std::shared_ptr<const OpDef> def = Find(type_name);
  if (def != nullptr) return def;
  // Suggest names sharing a prefix or containing the query.
  // Aliases are names users type too, so they are suggested as well.
  std::vector<std::string> known = OpNames();
  for (const auto& [alias, canonical] : Aliases()) known.push_back(alias);
  std::sort(known.begin(), known.end());
  std::vector<std::string> close;
  for (const std::string& name : known) {
    if (type_name.size() >= 3 &&
        (absl::StrContains(name, type_name) ||
         absl::StartsWith(name, type_name.substr(0, 3)))) {
      close.push_back(name);
    }
  }
  if (close.size() > 6) close.resize(6);
  return absl::NotFoundError(absl::StrCat(
      "unknown op ", QuotedInput(type_name),
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

absl::Status OpRegistry::RegisterAlias(absl::string_view alias, absl::string_view canonical) {
  if (alias.empty() || alias == canonical) {
    return absl::InvalidArgumentError(absl::StrCat(
        "alias ", QuotedInput(alias), " of op ", QuotedInput(canonical), ": an alias must be a non-empty name other "
        "than the op's own"));
  }
  absl::MutexLock lock(&mu_);
  if (ops_.contains(alias)) {
    return absl::AlreadyExistsError(absl::StrCat("alias ", QuotedInput(alias), " of op ", QuotedInput(canonical),
                                                 ": ", QuotedInput(alias), " is already a registered op"));
  }
  if (auto it = aliases_.find(alias); it != aliases_.end()) {
    return absl::AlreadyExistsError(absl::StrCat("alias ", QuotedInput(alias), " of op ", QuotedInput(canonical),
                                                 ": ", QuotedInput(alias), " is already an alias of ",
                                                 QuotedInput(it->second)));
  }
  if (auto it = aliases_.find(canonical); it != aliases_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "alias ", QuotedInput(alias), " of op ", QuotedInput(canonical), ": ", QuotedInput(canonical), " is itself an alias of ",
        QuotedInput(it->second), "; name the op ", QuotedInput(it->second)));
  }
  if (!ops_.contains(canonical)) {
    return absl::NotFoundError(absl::StrCat("alias ", QuotedInput(alias), " of op ", QuotedInput(canonical), ": no op ",
                                            QuotedInput(canonical), " is registered"));
  }
  aliases_.emplace(std::string(alias), std::string(canonical));
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> OpRegistry::Aliases() const {
  std::vector<std::pair<std::string, std::string>> out;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [alias, canonical] : aliases_) out.emplace_back(alias, canonical);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> OpRegistry::AliasesOf(absl::string_view canonical) const {
  std::vector<std::string> out;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [alias, name] : aliases_) {
      if (name == canonical) out.push_back(alias);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace internal {

StaticOpRegistration::StaticOpRegistration(const OpDefBuilder& builder) {
  const absl::Status s = OpRegistry::Global().Register(builder);
  OFS_CHECK(s.ok()) << s.message();
}

}  // namespace internal
}  // namespace oneflow_sbp
