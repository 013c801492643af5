#include "oneflow_sbp/nd_sbp.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/check.h"
#include "oneflow_sbp/quoted_input.h"

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

absl::StatusOr<NdSbp> NdSbp::Parse(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  if (absl::ConsumePrefix(&body, "(")) {
    if (!absl::ConsumeSuffix(&body, ")")) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed nd_sbp ", QuotedInput(text), ": missing ')'"));
    }
  }
  body = absl::StripAsciiWhitespace(body);
  if (body.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed nd_sbp ", QuotedInput(text),
        ": expected one SBP per mesh axis, as in (S(0), B)"));
  }
  const std::vector<absl::string_view> pieces = absl::StrSplit(body, ',');
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

void NdSbp::set(int i, SbpParallel sbp) {
  OFS_CHECK(i >= 0 && i < size_) << "index " << i << " of " << ToString();
  const int shift = 8 * i;
  packed_ = (packed_ & ~(uint64_t{0xff} << shift)) |
            (uint64_t{sbp.code()} << shift);
}

void NdSbp::push_back(SbpParallel sbp) {
  OFS_CHECK(size_ < kMaxAxes) << "too many mesh axes";
  ++size_;
  set(size_ - 1, sbp);
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
