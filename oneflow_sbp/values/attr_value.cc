#include "oneflow_sbp/values/attr_value.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

absl::string_view AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kBool: return "bool";
    case AttrType::kString: return "string";
    case AttrType::kInts: return "ints";
  }
  return "?";
}

int64_t AttrValue::i() const {
  OFS_CHECK(type() == AttrType::kInt) << AttrTypeName(type());
  return std::get<int64_t>(value_);
}
double AttrValue::f() const {
  OFS_CHECK(type() == AttrType::kFloat) << AttrTypeName(type());
  return std::get<double>(value_);
}
bool AttrValue::b() const {
  OFS_CHECK(type() == AttrType::kBool) << AttrTypeName(type());
  return std::get<bool>(value_);
}
const std::string& AttrValue::s() const {
  OFS_CHECK(type() == AttrType::kString) << AttrTypeName(type());
  return std::get<std::string>(value_);
}
const std::vector<int64_t>& AttrValue::ints() const {
  OFS_CHECK(type() == AttrType::kInts) << AttrTypeName(type());
  return std::get<std::vector<int64_t>>(value_);
}

std::string AttrValue::ToString() const {
  switch (type()) {
    case AttrType::kInt: return absl::StrCat(i());
    case AttrType::kFloat: return absl::StrCat(f());
    case AttrType::kBool: return b() ? "true" : "false";
    case AttrType::kString: return s();
    case AttrType::kInts: return absl::StrJoin(ints(), ",");
  }
  return "";
}

absl::StatusOr<AttrValue> ParseAttrValue(AttrType type, absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  auto bad = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(
        QuotedInput(text), " is not a valid ", AttrTypeName(type),
        type == AttrType::kInts ? " (write e.g. 1,0,2)" : ""));
  };
  switch (type) {
    case AttrType::kInt: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(t, &v)) return bad();
      return AttrValue(v);
    }
    case AttrType::kFloat: {
      double v = 0;
      if (!absl::SimpleAtod(t, &v)) return bad();
      return AttrValue(v);
    }
    case AttrType::kBool: {
      const std::string lower = absl::AsciiStrToLower(t);
      if (lower == "true" || lower == "1") return AttrValue(true);
      if (lower == "false" || lower == "0") return AttrValue(false);
      return bad();
    }
    case AttrType::kString:
      return AttrValue(std::string(text));
    case AttrType::kInts: {
      absl::string_view body = t;
      if (absl::ConsumePrefix(&body, "[") && !absl::ConsumeSuffix(&body, "]")) {
        return bad();
      }
      body = absl::StripAsciiWhitespace(body);
      std::vector<int64_t> values;
      if (!body.empty()) {
        for (absl::string_view piece : absl::StrSplit(body, ',')) {
          int64_t v = 0;
          if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(piece), &v)) return bad();
          values.push_back(v);
        }
      }
      return AttrValue(std::move(values));
    }
  }
  return bad();
}

void AttrMap::Set(absl::string_view name, AttrValue value) {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const std::pair<std::string, AttrValue>& e, absl::string_view n) {
        return e.first < n;
      });
  if (it != entries_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    entries_.insert(it, {std::string(name), std::move(value)});
  }
}

const AttrValue* AttrMap::Find(absl::string_view name) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const std::pair<std::string, AttrValue>& e, absl::string_view n) {
        return e.first < n;
      });
  if (it == entries_.end() || it->first != name) return nullptr;
  return &it->second;
}

std::string AttrMap::ToString() const {
  return absl::StrJoin(entries_, " ", [](std::string* out, const auto& e) {
    absl::StrAppend(out, e.first, "=", e.second.ToString());
  });
}

namespace {
absl::StatusOr<const AttrValue*> Typed(const AttrMap& m, absl::string_view name, AttrType want) {
  const AttrValue* v = m.Find(name);
  if (v == nullptr) {
    return absl::InternalError(
        absl::StrCat("reads attribute ", QuotedInput(name), ", which the op does not declare"));
  }
  if (v->type() != want) {
    return absl::InternalError(absl::StrCat("reads attribute ", QuotedInput(name), " as ",
                                            AttrTypeName(want), " but it is ",
                                            AttrTypeName(v->type())));
  }
  return v;
}
}  // namespace

template <>
absl::StatusOr<int64_t> AttrMap::Get<int64_t>(absl::string_view name) const {
  OFS_ASSIGN_OR_RETURN(const AttrValue* v, Typed(*this, name, AttrType::kInt));
  return v->i();
}
template <>
absl::StatusOr<int> AttrMap::Get<int>(absl::string_view name) const {
  OFS_ASSIGN_OR_RETURN(int64_t v, Get<int64_t>(name));
  return static_cast<int>(v);
}
template <>
absl::StatusOr<double> AttrMap::Get<double>(absl::string_view name) const {
  OFS_ASSIGN_OR_RETURN(const AttrValue* v, Typed(*this, name, AttrType::kFloat));
  return v->f();
}
template <>
absl::StatusOr<bool> AttrMap::Get<bool>(absl::string_view name) const {
  OFS_ASSIGN_OR_RETURN(const AttrValue* v, Typed(*this, name, AttrType::kBool));
  return v->b();
}
template <>
absl::StatusOr<std::string> AttrMap::Get<std::string>(absl::string_view name) const {
  OFS_ASSIGN_OR_RETURN(const AttrValue* v, Typed(*this, name, AttrType::kString));
  return v->s();
}
template <>
absl::StatusOr<std::vector<int64_t>> AttrMap::Get<std::vector<int64_t>>(
    absl::string_view name) const {
  OFS_ASSIGN_OR_RETURN(const AttrValue* v, Typed(*this, name, AttrType::kInts));
  return v->ints();
}

}  // namespace oneflow_sbp
