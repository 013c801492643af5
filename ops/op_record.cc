#include "ops/op_record.h"

#include <algorithm>

#include "oneflow_sbp/values/check.h"

namespace oneflow_sbp::ops {

bool OpAliasRecord::In(Notation n) const {
  return std::find(notations.begin(), notations.end(), n) != notations.end();
}

const std::vector<OpRecord>& BuiltinOpRecords() {
  static const std::vector<OpRecord>* const records = [] {
    auto* r = new std::vector<OpRecord>(MakeBuiltinOpRecords());
    // The generator sorts them; FindOpRecord relies on it.
    OFS_CHECK(std::is_sorted(r->begin(), r->end(),
                             [](const OpRecord& a, const OpRecord& b) { return a.name < b.name; }));
    return r;
  }();
  return *records;
}

const OpRecord* FindOpRecord(absl::string_view name) {
  const std::vector<OpRecord>& records = BuiltinOpRecords();
  auto it = std::lower_bound(records.begin(), records.end(), name,
                             [](const OpRecord& r, absl::string_view n) { return r.name < n; });
  return it != records.end() && it->name == name ? &*it : nullptr;
}

absl::string_view OpOriginName(OpOrigin origin) {
  return origin == OpOrigin::kOneFlow ? "oneflow" : "ours";
}

absl::string_view BackwardKindName(BackwardKind kind) {
  switch (kind) {
    case BackwardKind::kRule:
      return "rule";
    case BackwardKind::kNotDifferentiable:
      return "not differentiable";
    case BackwardKind::kGradientOp:
      return "gradient op";
    case BackwardKind::kNotWrittenYet:
      return "not written yet";
  }
  return "?";
}

absl::string_view NotationName(Notation notation) {
  switch (notation) {
    case Notation::kOneFlow:
      return "oneflow";
    case Notation::kTorch:
      return "torch";
    case Notation::kPaddle:
      return "paddle";
  }
  return "?";
}

}  // namespace oneflow_sbp::ops
