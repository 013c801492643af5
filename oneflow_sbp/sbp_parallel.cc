#include "oneflow_sbp/sbp_parallel.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/check.h"
#include "oneflow_sbp/quoted_input.h"

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

namespace {

// Length of the SBP token that `t` starts with ("B", "P" or "S(<digits>)"),
// or 0. Used only to explain errors: "S(0)S(1)" lacks a comma.
size_t LeadingSbpLength(absl::string_view t) {
  if (absl::StartsWith(t, "B") || absl::StartsWith(t, "P")) return 1;
  if (!absl::StartsWith(t, "S(")) return 0;
  size_t i = 2;
  while (i < t.size() && absl::ascii_isdigit(t[i])) ++i;
  return i > 2 && i < t.size() && t[i] == ')' ? i + 1 : 0;
}

}  // namespace

absl::StatusOr<SbpParallel> SbpParallel::Parse(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t == "B") return Broadcast();
  if (t == "P") return PartialSum();
  // Two SBPs run together: name the missing comma, not the axis.
  const size_t lead = LeadingSbpLength(t);
  if (lead > 0 && lead < t.size() &&
      LeadingSbpLength(absl::StripLeadingAsciiWhitespace(t.substr(lead))) > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad SBP ", QuotedInput(t), ": missing ',' after ", t.substr(0, lead),
        " (one SBP per mesh axis, separated by commas, as in (S(0), B))"));
  }
  absl::string_view inner = t;
  if (absl::ConsumePrefix(&inner, "S(") && absl::ConsumeSuffix(&inner, ")")) {
    // Digits only: no sign, no spaces (SPEC.md §1.3).
    bool digits = !inner.empty();
    for (char c : inner) digits = digits && absl::ascii_isdigit(c);
    if (!digits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad SBP ", QuotedInput(t),
          ": the split axis must be a non-negative integer, as in S(0)"));
    }
    int64_t axis = 0;
    if (inner.size() > 9 || !absl::SimpleAtoi(inner, &axis)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad SBP ", QuotedInput(t), ": split axis ", QuotedInput(inner),
          " is too large; it must be in [0, ", kMaxSplitAxis, "]"));
    }
    return MakeSplit(axis);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad SBP ", QuotedInput(t), ": expected B, P or S(<axis>)"));
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
