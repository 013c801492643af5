#include "oneflow_sbp/sbp_parallel.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/check.h"

namespace oneflow_sbp {

SbpParallel SbpParallel::Split(int axis) {
  OFS_CHECK(axis >= 0 && axis <= kMaxSplitAxis) << "split axis " << axis;
  return SbpParallel(static_cast<uint8_t>(kFirstSplitCode + axis));
}

absl::StatusOr<SbpParallel> SbpParallel::MakeSplit(int64_t axis) {
  if (axis < 0 || axis > kMaxSplitAxis) {
    return absl::InvalidArgumentError(absl::StrCat(
        "S(", axis, "): split axis must be in [0, ", kMaxSplitAxis, "]"));
  }
  return Split(static_cast<int>(axis));
}

int SbpParallel::split_axis() const {
  OFS_CHECK(is_split()) << ToString() << " is not a split";
  return code_ - kFirstSplitCode;
}

absl::StatusOr<SbpParallel> SbpParallel::Parse(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t == "B") return Broadcast();
  if (t == "P") return PartialSum();
  absl::string_view inner = t;
  if (absl::ConsumePrefix(&inner, "S(") && absl::ConsumeSuffix(&inner, ")")) {
    // Digits only: no sign, no spaces (SPEC.md §1.3).
    bool digits = !inner.empty() && inner.size() <= 9;
    for (char c : inner) digits = digits && absl::ascii_isdigit(c);
    if (!digits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad SBP '", t, "': the split axis must be a non-negative integer, as in S(0)"));
    }
    int64_t axis = 0;
    absl::SimpleAtoi(inner, &axis);
    return MakeSplit(axis);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad SBP '", t, "': expected B, P or S(<axis>)"));
}

std::string SbpParallel::ToString() const {
  switch (code_) {
    case kUnsetCode:
      return "unset";
    case kBroadcastCode:
      return "B";
    case kPartialSumCode:
      return "P";
    default:
      return absl::StrCat("S(", split_axis(), ")");
  }
}

}  // namespace oneflow_sbp
