#include "oneflow_sbp/values/sbp_parallel.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"

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

const char* PartialKindName(PartialKind kind) {
  switch (kind) {
    case PartialKind::kSum:
      return "sum";
    case PartialKind::kMax:
      return "max";
    case PartialKind::kMin:
      return "min";
  }
  return "?";
}

PartialKind SbpParallel::partial_kind() const {
  OFS_CHECK(is_partial()) << ToString() << " is not a partial";
  return code_ == kPartialMaxCode   ? PartialKind::kMax
         : code_ == kPartialMinCode ? PartialKind::kMin
                                    : PartialKind::kSum;
}

void SbpParallel::NotASplit() const {
  OFS_CHECK(is_split()) << ToString() << " is not a split";
  std::abort();  // unreachable: the check above fails
}

namespace {

// Length of the SBP token that `t` starts with ("B", "P", "P(max)",
// "P(min)", "P(sum)" or "S(<digits>)"), or 0. Used only to explain errors:
// "S(0)S(1)" lacks a comma.
size_t LeadingSbpLength(absl::string_view t) {
  for (absl::string_view kind : {"P(max)", "P(min)", "P(sum)"}) {
    if (absl::StartsWith(t, kind)) return kind.size();
  }
  if (absl::StartsWith(t, "B") || absl::StartsWith(t, "P")) return 1;
  if (!absl::StartsWith(t, "S(")) return 0;
  size_t i = 2;
  while (i < t.size() && absl::ascii_isdigit(t[i])) ++i;
  return i > 2 && i < t.size() && t[i] == ')' ? i + 1 : 0;
}

// The users' spellings of one SBP, besides ours (B, P, S(k)): OneFlow's
// (`broadcast`, `partial_sum`, `split(0)`, `split(dim=0)`, with or without
// `flow.sbp.` / `oneflow.sbp.` / `sbp.`) and PyTorch DTensor's
// (`Replicate()`, `Partial()`, `Partial("sum")`, `Shard(0)`,
// `Shard(dim=0)`, with or without `torch.distributed.tensor.`). nullopt when
// `t` is none of these names; a Status when it is one with bad arguments.
// `partial_max`/`partial_min` and DTensor's Partial("max"/"min") name the
// other partial kinds.
std::optional<absl::StatusOr<SbpParallel>> ParseUsersSpelling(absl::string_view t) {
  absl::string_view body = t;
  for (absl::string_view prefix :
       {"oneflow.sbp.", "flow.sbp.", "sbp.", "torch.distributed.tensor.placement_types.",
        "torch.distributed.tensor.", "torch.distributed._tensor."}) {
    if (absl::ConsumePrefix(&body, prefix)) break;
  }
  const size_t open = body.find('(');
  const absl::string_view name = absl::StripAsciiWhitespace(body.substr(0, open));
  std::optional<absl::string_view> args;
  if (open != absl::string_view::npos) {
    absl::string_view rest = body.substr(open + 1);
    if (!absl::ConsumeSuffix(&rest, ")")) {
      return absl::StatusOr<SbpParallel>(absl::InvalidArgumentError(
          absl::StrCat("bad SBP ", QuotedInput(t), ": missing ')'")));
    }
    args = absl::StripAsciiWhitespace(rest);
  }
  auto no_arguments = [&](SbpParallel sbp) -> absl::StatusOr<SbpParallel> {
    if (args.has_value() && !args->empty()) {
      return absl::InvalidArgumentError(absl::StrCat("bad SBP ", QuotedInput(t), ": ", name,
                                                     " takes no arguments"));
    }
    return sbp;
  };
  if (name == "broadcast" || name == "Replicate") return no_arguments(SbpParallel::Broadcast());
  if (name == "partial_sum") return no_arguments(SbpParallel::PartialSum());
  if (name == "partial_max") return no_arguments(SbpParallel::PartialMax());
  if (name == "partial_min") return no_arguments(SbpParallel::PartialMin());
  if (name == "Partial") {
    // DTensor's reduce_op: "sum", "max" or "min".
    absl::string_view op = args.value_or("");
    absl::ConsumePrefix(&op, "reduce_op");
    op = absl::StripLeadingAsciiWhitespace(op);
    if (absl::ConsumePrefix(&op, "=")) op = absl::StripAsciiWhitespace(op);
    if ((absl::ConsumePrefix(&op, "\"") && absl::ConsumeSuffix(&op, "\"")) ||
        (absl::ConsumePrefix(&op, "'") && absl::ConsumeSuffix(&op, "'"))) {
      if (op == "sum") return SbpParallel::PartialSum();
      if (op == "max") return SbpParallel::PartialMax();
      if (op == "min") return SbpParallel::PartialMin();
      return absl::StatusOr<SbpParallel>(absl::InvalidArgumentError(absl::StrCat(
          "bad SBP ", QuotedInput(t), ": a partial reduces by sum, max or min, not ",
          QuotedInput(op))));
    }
    return no_arguments(SbpParallel::PartialSum());
  }
  if (name == "split" || name == "Shard") {
    absl::string_view axis = args.value_or("");
    if (absl::ConsumePrefix(&axis, "dim") || absl::ConsumePrefix(&axis, "axis")) {
      axis = absl::StripLeadingAsciiWhitespace(axis);
      if (!absl::ConsumePrefix(&axis, "=")) axis = "";
      axis = absl::StripAsciiWhitespace(axis);
    }
    bool digits = !axis.empty();
    for (char c : axis) digits = digits && absl::ascii_isdigit(c);
    int64_t value = 0;
    if (!digits || axis.size() > 9 || !absl::SimpleAtoi(axis, &value)) {
      return absl::StatusOr<SbpParallel>(absl::InvalidArgumentError(absl::StrCat(
          "bad SBP ", QuotedInput(t), ": ", name, " takes a non-negative dim, as in ", name,
          "(0)", absl::StartsWith(axis, "-") ? " (a negative dim needs the tensor's rank; "
                                                "count from 0)"
                                              : "")));
    }
    return SbpParallel::MakeSplit(value);
  }
  return std::nullopt;
}

}  // namespace


absl::StatusOr<SbpParallel> SbpParallel::Parse(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t == "B") return Broadcast();
  if (t == "P" || t == "P(sum)") return PartialSum();
  if (t == "P(max)") return PartialMax();
  if (t == "P(min)") return PartialMin();
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
  if (std::optional<absl::StatusOr<SbpParallel>> users = ParseUsersSpelling(t)) {
    return *std::move(users);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad SBP ", QuotedInput(t),
      ": expected B, P, P(max), P(min) or S(<axis>) (or OneFlow's broadcast, partial_sum, "
      "split(0), or DTensor's Replicate(), Partial(), Partial(\"max\"), Shard(0))"));
}

std::string SbpParallel::ToString() const {
  switch (code_) {
    case kUnsetCode:
      return "unset";
    case kBroadcastCode:
      return "B";
    case kPartialSumCode:
      return "P";
    case kPartialMaxCode:
      return "P(max)";
    case kPartialMinCode:
      return "P(min)";
    default:
      return absl::StrCat("S(", split_axis(), ")");
  }
}

}  // namespace oneflow_sbp
