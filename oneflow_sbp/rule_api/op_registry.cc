#include "oneflow_sbp/rule_api/op_registry.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/status_macros.h"

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
                                                 QuotedInput(it->second.canonical)));
  }
  ops_.emplace(name, std::make_shared<const OpDef>(std::move(def)));
  return absl::OkStatus();
}

absl::Status OpRegistry::Register(const OpDefBuilder& builder) {
  OFS_ASSIGN_OR_RETURN(OpDef def, builder.Build());
  return Register(std::move(def));
}

std::shared_ptr<const OpDef> OpRegistry::Find(absl::string_view type_name) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(type_name);
  if (it != ops_.end()) return it->second;
  auto alias = aliases_.find(type_name);
  if (alias == aliases_.end()) return nullptr;
  it = ops_.find(alias->second.canonical);  // always there: aliases point at ops
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

absl::Status OpRegistry::RegisterAlias(absl::string_view alias, absl::string_view canonical,
                                       std::vector<AliasAttr> renamed) {
  const std::string what = absl::StrCat("alias ", QuotedInput(alias), " of op ", QuotedInput(canonical));
  if (alias.empty() || alias == canonical) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": an alias must be a non-empty name other than the op's own"));
  }
  absl::MutexLock lock(&mu_);
  if (ops_.contains(alias)) {
    return absl::AlreadyExistsError(
        absl::StrCat(what, ": ", QuotedInput(alias), " is already a registered op"));
  }
  if (auto it = aliases_.find(alias); it != aliases_.end()) {
    return absl::AlreadyExistsError(absl::StrCat(what, ": ", QuotedInput(alias),
                                                 " is already an alias of ",
                                                 QuotedInput(it->second.canonical)));
  }
  if (auto it = aliases_.find(canonical); it != aliases_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", QuotedInput(canonical), " is itself an alias of ",
        QuotedInput(it->second.canonical), "; name the op ", QuotedInput(it->second.canonical)));
  }
  auto op = ops_.find(canonical);
  if (op == ops_.end()) {
    return absl::NotFoundError(
        absl::StrCat(what, ": no op ", QuotedInput(canonical), " is registered"));
  }
  const OpDef& def = *op->second;
  for (size_t i = 0; i < renamed.size(); ++i) {
    const AliasAttr& r = renamed[i];
    const std::string rename =
        absl::StrCat(what, ": attribute ", QuotedInput(r.name), " for ", QuotedInput(r.op_name));
    const AttrDef* decl = def.FindAttr(r.op_name);
    if (decl == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(rename, ": ", QuotedInput(canonical), " has no attribute ",
                       QuotedInput(r.op_name)));
    }
    if (r.name.empty() || r.name == r.op_name) {
      return absl::InvalidArgumentError(
          absl::StrCat(rename, ": a renamed attribute needs a name other than the op's"));
    }
    if (r.non_empty && decl->type != AttrType::kInts) {
      return absl::InvalidArgumentError(absl::StrCat(
          rename, ": non_empty needs a list attribute; ", QuotedInput(r.op_name), " is ",
          AttrTypeName(decl->type)));
    }
    for (size_t j = 0; j < i; ++j) {
      if (renamed[j].op_name == r.op_name || renamed[j].name == r.name) {
        return absl::InvalidArgumentError(
            absl::StrCat(rename, ": renamed twice (also ", QuotedInput(renamed[j].name),
                         " for ", QuotedInput(renamed[j].op_name), ")"));
      }
    }
    // A name the op keeps for another attribute would mean two things.
    if (def.FindAttr(r.name) != nullptr &&
        std::none_of(renamed.begin(), renamed.end(),
                     [&](const AliasAttr& o) { return o.op_name == r.name; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          rename, ": ", QuotedInput(canonical), " already has an attribute ", QuotedInput(r.name)));
    }
  }
  aliases_.emplace(std::string(alias), AliasEntry{std::string(canonical), std::move(renamed)});
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> OpRegistry::Aliases() const {
  std::vector<std::pair<std::string, std::string>> out;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [alias, entry] : aliases_) out.emplace_back(alias, entry.canonical);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> OpRegistry::AliasesOf(absl::string_view canonical) const {
  std::vector<std::string> out;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [alias, entry] : aliases_) {
      if (entry.canonical == canonical) out.push_back(alias);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<AliasAttr> OpRegistry::RenamedAttrsOf(absl::string_view alias) const {
  absl::MutexLock lock(&mu_);
  auto it = aliases_.find(alias);
  return it == aliases_.end() ? std::vector<AliasAttr>() : it->second.renamed;
}

std::string OpRegistry::OpAttrName(absl::string_view name, absl::string_view attr) const {
  for (const AliasAttr& r : RenamedAttrsOf(name)) {
    if (r.name == attr) return r.op_name;
  }
  return std::string(attr);
}

absl::StatusOr<ResolvedCall> OpRegistry::ResolveCall(absl::string_view name,
                                                     const AttrMap& attrs) const {
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpDef> def, Get(name));
  // An op's own name: OpCall::Make checks the attributes.
  if (def->type_name() == name) return ResolvedCall{std::move(def), attrs};
  const std::vector<AliasAttr> renamed = RenamedAttrsOf(name);
  const OpDef& op = *def;
  const std::string who =
      absl::StrCat(UnquotedInput(name), " (alias of ", op.type_name(), ")");
  // The alias's names: the op's, each renamed one replaced.
  auto alias_name = [&](const std::string& op_name) {
    for (const AliasAttr& r : renamed) {
      if (r.op_name == op_name) return r.name;
    }
    return op_name;
  };
  ResolvedCall out{def, AttrMap()};
  for (const auto& [attr, value] : attrs.entries()) {
    const std::string op_name = OpAttrName(name, attr);
    const AttrDef* decl = op.FindAttr(op_name);
    const bool hidden = op_name == attr && alias_name(attr) != attr;
    if (decl == nullptr || hidden) {
      std::vector<std::string> known;
      for (const AttrDef& a : op.attrs()) known.push_back(alias_name(a.name));
      return absl::InvalidArgumentError(absl::StrCat(
          who, ": unknown attribute ", QuotedInput(attr),
          hidden ? absl::StrCat(" (", op.type_name(), "'s name; ", UnquotedInput(name),
                                " calls it ", QuotedInput(alias_name(attr)), ")")
                 : "",
          known.empty() ? "; the op has no attributes"
                        : absl::StrCat("; known: ", absl::StrJoin(known, ", "))));
    }
    const bool widens = decl->type == AttrType::kFloat && value.type() == AttrType::kInt;
    if (value.type() != decl->type && !widens) {
      return absl::InvalidArgumentError(absl::StrCat(
          who, ": attribute ", QuotedInput(attr), " is ", AttrTypeName(decl->type), ", got ",
          AttrTypeName(value.type()), " ", QuotedInput(value.ToString())));
    }
    for (const AliasAttr& r : renamed) {
      if (r.name == attr && r.non_empty && value.type() == AttrType::kInts &&
          value.ints().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            who, ": attribute ", QuotedInput(attr), " is empty; list the axes (", UnquotedInput(name),
            " with no ", attr, " reduces every axis, ", op.type_name(), " with ", r.op_name,
            "=[] none)"));
      }
    }
    out.attrs.Set(op_name, value);
  }
  for (const AttrDef& a : op.attrs()) {
    if (!a.default_value && out.attrs.Find(a.name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          who, ": required attribute ", QuotedInput(alias_name(a.name)), " (",
          AttrTypeName(a.type), "; ", op.type_name(), "'s ", QuotedInput(a.name), ") is missing"));
    }
  }
  return out;
}

namespace internal {

StaticOpRegistration::StaticOpRegistration(const OpDefBuilder& builder) {
  const absl::Status s = OpRegistry::Global().Register(builder);
  OFS_CHECK(s.ok()) << s.message();
}

}  // namespace internal
}  // namespace oneflow_sbp
