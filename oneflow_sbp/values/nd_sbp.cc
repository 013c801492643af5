#include "oneflow_sbp/values/nd_sbp.h"

#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp {

NdSbp::NdSbp(std::initializer_list<SbpParallel> sbps) {
  for (SbpParallel s : sbps) push_back(s);
}

NdSbp NdSbp::Repeat(SbpParallel sbp, int count) {
  NdSbp nd;
  for (int i = 0; i < count; ++i) nd.push_back(sbp);
  return nd;
}

absl::StatusOr<NdSbp> NdSbp::Make(absl::Span<const SbpParallel> sbps) {
  if (sbps.size() > kMaxAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nd_sbp has ", sbps.size(), " entries; at most ", kMaxAxes,
        " mesh axes are supported"));
  }
  NdSbp nd;
  for (SbpParallel s : sbps) nd.push_back(s);
  return nd;
}

namespace {

// `body` cut at the commas outside parentheses and quotes, so that
// entries such as Partial(reduce_op="sum") stay whole.
std::vector<absl::string_view> SplitTopLevel(absl::string_view body) {
  std::vector<absl::string_view> pieces;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      pieces.push_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  pieces.push_back(body.substr(start));
  return pieces;
}

}  // namespace

absl::StatusOr<NdSbp> NdSbp::Parse(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  // (S(0), B) as we print it, or [S(0), B] as Python users write a list.
  for (const auto& [open, close] : {std::pair<absl::string_view, absl::string_view>{"(", ")"},
                                    {"[", "]"}}) {
    if (absl::ConsumePrefix(&body, open)) {
      if (!absl::ConsumeSuffix(&body, close)) {
        return absl::InvalidArgumentError(absl::StrCat("malformed nd_sbp ", QuotedInput(text),
                                                       ": missing '", close, "'"));
      }
      break;
    }
  }
  body = absl::StripAsciiWhitespace(body);
  if (body.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed nd_sbp ", QuotedInput(text),
        ": expected one SBP per mesh axis, as in (S(0), B)"));
  }
  const std::vector<absl::string_view> pieces = SplitTopLevel(body);
  if (pieces.size() > static_cast<size_t>(kMaxAxes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed nd_sbp ", QuotedInput(text), ": ", pieces.size(), " entries; at most ",
        kMaxAxes, " mesh axes are supported"));
  }
  std::vector<SbpParallel> sbps;
  for (size_t i = 0; i < pieces.size(); ++i) {
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(pieces[i]);
    if (!sbp.ok()) {
      // The SBP's message quotes the bad entry; quote the whole text only
      // when it says more than the entry (never the same input twice).
      const bool piece_is_text =
          absl::StripAsciiWhitespace(pieces[0]) == absl::StripAsciiWhitespace(text);
      return absl::InvalidArgumentError(
          pieces.size() == 1 && piece_is_text
              ? absl::StrCat("malformed nd_sbp: ", sbp.status().message())
          : pieces.size() == 1
              ? absl::StrCat("malformed nd_sbp ", QuotedInput(text), ": ", sbp.status().message())
              : absl::StrCat("malformed nd_sbp ", QuotedInput(text), ": entry ", i + 1, " of ",
                             pieces.size(), ": ", sbp.status().message()));
    }
    sbps.push_back(*sbp);
  }
  return Make(sbps);
}

void NdSbp::BadIndex(int i) const {
  OFS_CHECK(i >= 0 && i < size_ && size_ <= kMaxAxes)
      << "index " << i << " of " << ToString() << " (at most " << kMaxAxes << " mesh axes)";
  std::abort();  // unreachable: the check above fails
}

bool NdSbp::all_broadcast() const {
  for (int i = 0; i < size_; ++i) {
    if (!(*this)[i].is_broadcast()) return false;
  }
  return true;
}

bool NdSbp::any_partial_sum() const {
  for (int i = 0; i < size_; ++i) {
    if ((*this)[i].is_partial_sum()) return true;
  }
  return false;
}

bool NdSbp::any_partial() const {
  for (int i = 0; i < size_; ++i) {
    if ((*this)[i].is_partial()) return true;
  }
  return false;
}

std::optional<PartialKind> NdSbp::partial_kind() const {
  for (int i = 0; i < size_; ++i) {
    if ((*this)[i].is_partial()) return (*this)[i].partial_kind();
  }
  return std::nullopt;
}

bool NdSbp::mixes_partial_kinds() const {
  const std::optional<PartialKind> first = partial_kind();
  for (int i = 0; first && i < size_; ++i) {
    if ((*this)[i].is_partial() && (*this)[i].partial_kind() != *first) return true;
  }
  return false;
}

bool NdSbp::any_unset() const {
  for (int i = 0; i < size_; ++i) {
    if ((*this)[i].is_unset()) return true;
  }
  return false;
}

std::string NdSbp::ToString() const {
  std::string out = "(";
  for (int i = 0; i < size_; ++i) {
    if (i > 0) out += ", ";
    out += (*this)[i].ToString();
  }
  out += ")";
  return out;
}

std::string NdSbp::ToLongString() const {
  std::string out;
  for (int i = 0; i < size_; ++i) {
    if (i > 0) out += ",";
    out += (*this)[i].ToString();
  }
  return out;
}

bool operator<(const NdSbp& a, const NdSbp& b) {
  if (a.size_ != b.size_) return a.size_ < b.size_;
  for (int i = 0; i < a.size_; ++i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

}  // namespace oneflow_sbp
