#include "oneflow_sbp/rule_api/op_def.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp {

const AttrDef* OpDef::FindAttr(absl::string_view name) const {
  for (const AttrDef& a : attrs_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

namespace {

// Arg names are short: an inline loop beats a memcmp call, and rules look
// names up for every candidate they build.
bool SameName(const std::string& a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

int OpDef::FindInput(absl::string_view name) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (SameName(inputs_[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

int OpDef::FindOutput(absl::string_view name) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (SameName(outputs_[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

OpDefBuilder::OpDefBuilder(std::string type_name) {
  def_.type_name_ = std::move(type_name);
}

OpDefBuilder& OpDefBuilder::Input(std::string name) {
  def_.inputs_.push_back(ArgDef{std::move(name)});
  return *this;
}
OpDefBuilder& OpDefBuilder::OptionalInput(std::string name) {
  ArgDef arg{std::move(name)};
  arg.optional = true;
  def_.inputs_.push_back(std::move(arg));
  return *this;
}
OpDefBuilder& OpDefBuilder::VariadicInput(std::string name) {
  ArgDef arg{std::move(name)};
  arg.variadic = true;
  def_.inputs_.push_back(std::move(arg));
  return *this;
}
OpDefBuilder& OpDefBuilder::MutableInput(std::string name) {
  ArgDef arg{std::move(name)};
  arg.is_mutable = true;
  def_.inputs_.push_back(std::move(arg));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string name) {
  def_.outputs_.push_back(ArgDef{std::move(name)});
  return *this;
}
OpDefBuilder& OpDefBuilder::VariadicOutput(std::string name) {
  ArgDef arg{std::move(name)};
  arg.variadic = true;
  def_.outputs_.push_back(std::move(arg));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string name, AttrValue default_value) {
  const AttrType type = default_value.type();
  def_.attrs_.push_back(AttrDef{std::move(name), type, std::move(default_value)});
  return *this;
}
OpDefBuilder& OpDefBuilder::RequiredAttr(std::string name, AttrType type) {
  def_.attrs_.push_back(AttrDef{std::move(name), type, std::nullopt});
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string doc) {
  def_.doc_ = std::move(doc);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  def_.shape_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetExtendedSbpFn(GetSbpFn fn) {
  def_.extended_sbp_fn_ = std::move(fn);
  return *this;
}

OpDefBuilder& OpDefBuilder::SetGetSbpFn(GetSbpFn fn) {
  def_.get_sbp_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetNdCandidateHook(NdCandidateHookFn fn) {
  def_.nd_hook_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetOutputArityFn(OutputArityFn fn) {
  def_.output_arity_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::BroadcastOnlyFallback() {
  def_.broadcast_fallback_ = true;
  return *this;
}

namespace {

bool IsIdentifier(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return !absl::ascii_isdigit(name[0]);
}

}  // namespace

absl::StatusOr<OpDef> OpDefBuilder::Build() const {
  const std::string& op = def_.type_name_;
  if (!IsIdentifier(op)) {
    return absl::InvalidArgumentError(
        absl::StrCat("op type name ", QuotedInput(op), " must be an identifier"));
  }
  absl::flat_hash_set<std::string> names;
  for (const auto* args : {&def_.inputs_, &def_.outputs_}) {
    for (const ArgDef& a : *args) {
      if (!IsIdentifier(a.name)) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": arg name ", QuotedInput(a.name), " must be an identifier"));
      }
      if (!names.insert(a.name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": arg ", QuotedInput(a.name), " is declared twice"));
      }
    }
  }
  absl::flat_hash_set<std::string> attr_names;
  for (const AttrDef& a : def_.attrs_) {
    if (!IsIdentifier(a.name) || !attr_names.insert(a.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": attribute ", QuotedInput(a.name), " is malformed or declared twice"));
    }
  }
  if (!def_.shape_fn_) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": no shape function"));
  }
  if (static_cast<bool>(def_.get_sbp_fn_) == def_.broadcast_fallback_) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, def_.broadcast_fallback_
                ? ": declares both a GetSbp rule and the broadcast-only fallback"
                : ": has no GetSbp rule; give one with SetGetSbpFn or opt in to "
                  "BroadcastOnlyFallback() explicitly"));
  }
  for (const ArgDef& a : def_.outputs_) {
    if (a.optional) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": output ", QuotedInput(a.name), " cannot be optional"));
    }
    if (a.variadic && !def_.output_arity_fn_) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": variadic output ", QuotedInput(a.name), " needs SetOutputArityFn"));
    }
  }
  return def_;
}

}  // namespace oneflow_sbp
