// Typed op attributes: values, declared types, and the sorted attribute map
// an op call carries.
//
// Example:
//   AttrMap attrs;
//   attrs.Set("transpose_b", AttrValue(true));
//   attrs.Set("perm", AttrValue(std::vector<int64_t>{1, 0, 2}));
//   attrs.Get<bool>("transpose_b");                       // true
//   ParseAttrValue(AttrType::kInts, "2,-1");              // {2, -1}
//   attrs.ToString();                                     // "perm=1,0,2 transpose_b=true"
//
// The map is ordered by name, so equal maps compare, hash and print the
// same whatever order attributes were set in.
#ifndef ONEFLOW_SBP_VALUES_ATTR_VALUE_H_
#define ONEFLOW_SBP_VALUES_ATTR_VALUE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp {

enum class AttrType : uint8_t { kInt, kFloat, kBool, kString, kInts };

// "int", "float", "bool", "string", "ints".
absl::string_view AttrTypeName(AttrType type);

class AttrValue {
 public:
  AttrValue() : value_(int64_t{0}) {}
  explicit AttrValue(int64_t v) : value_(v) {}
  explicit AttrValue(int v) : value_(int64_t{v}) {}
  explicit AttrValue(double v) : value_(v) {}
  explicit AttrValue(bool v) : value_(v) {}
  explicit AttrValue(std::string v) : value_(std::move(v)) {}
  explicit AttrValue(const char* v) : value_(std::string(v)) {}
  explicit AttrValue(std::vector<int64_t> v) : value_(std::move(v)) {}

  AttrType type() const { return static_cast<AttrType>(value_.index()); }

  // Require the matching type (internal invariant: the op call checked
  // every attribute against its declaration).
  int64_t i() const;
  double f() const;
  bool b() const;
  const std::string& s() const;
  const std::vector<int64_t>& ints() const;

  // "3", "0.5", "true", "abc", "1,0,2" (an empty list prints as "").
  std::string ToString() const;

  friend bool operator==(const AttrValue& a, const AttrValue& b) {
    return a.value_ == b.value_;
  }
  friend bool operator!=(const AttrValue& a, const AttrValue& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const AttrValue& v) {
    h = H::combine(std::move(h), v.value_.index());
    return std::visit([&h](const auto& x) { return H::combine(std::move(h), x); },
                      v.value_);
  }

 private:
  // Index order matches AttrType.
  std::variant<int64_t, double, bool, std::string, std::vector<int64_t>> value_;
};

// Parses `text` as a value of `type`: ints ("-3"), floats ("0.5", "1e-5"),
// bools ("true"/"false"/"1"/"0"), strings (verbatim), int lists ("1,0,2",
// "[2,-1]", "" for empty). kInvalidArgument names the text and the type.
absl::StatusOr<AttrValue> ParseAttrValue(AttrType type, absl::string_view text);

class AttrMap {
 public:
  // Inserts or replaces.
  void Set(absl::string_view name, AttrValue value);
  // nullptr if absent.
  const AttrValue* Find(absl::string_view name) const;

  // Typed access. kInternal if the attribute is absent (the op does not
  // declare it) or holds another type: a bug in the rule, shape function or
  // kernel that asked, never an abort. Contexts (SbpContext, ShapeContext,
  // ...) wrap this to name the op and rule.
  template <typename T>
  absl::StatusOr<T> Get(absl::string_view name) const;

  absl::Span<const std::pair<std::string, AttrValue>> entries() const {
    return entries_;
  }
  // "name=value" pairs in name order, separated by spaces.
  std::string ToString() const;

  friend bool operator==(const AttrMap& a, const AttrMap& b) {
    return a.entries_ == b.entries_;
  }
  template <typename H>
  friend H AbslHashValue(H h, const AttrMap& m) {
    return H::combine(std::move(h), m.entries_);
  }

 private:
  absl::InlinedVector<std::pair<std::string, AttrValue>, 4> entries_;
};

template <>
absl::StatusOr<int64_t> AttrMap::Get<int64_t>(absl::string_view name) const;
template <>
absl::StatusOr<int> AttrMap::Get<int>(absl::string_view name) const;
template <>
absl::StatusOr<double> AttrMap::Get<double>(absl::string_view name) const;
template <>
absl::StatusOr<bool> AttrMap::Get<bool>(absl::string_view name) const;
template <>
absl::StatusOr<std::string> AttrMap::Get<std::string>(absl::string_view name) const;
template <>
absl::StatusOr<std::vector<int64_t>> AttrMap::Get<std::vector<int64_t>>(absl::string_view name) const;

// What the contexts rules, shape functions and kernels read attributes
// through: the value, or T{} with the misuse recorded in `*bug` as kInternal
// "<who> reads attribute ..." (the first bug wins), so a rule written
// outside the library can never abort its host.
template <typename T>
T AttrOrRecordBug(const AttrMap& attrs, absl::string_view name, absl::string_view who,
                  absl::Status* bug) {
  absl::StatusOr<T> v = attrs.Get<T>(name);
  if (v.ok()) return *std::move(v);
  if (bug->ok()) {
    *bug = absl::InternalError(who.empty() ? std::string(v.status().message())
                                           : absl::StrCat(who, " ", v.status().message()));
  }
  return T{};
}

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_ATTR_VALUE_H_
