#include "oneflow_sbp/nd_sbp.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/check.h"

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
          absl::StrCat("malformed nd_sbp '", text, "': missing ')'"));
    }
  }
  body = absl::StripAsciiWhitespace(body);
  if (body.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed nd_sbp '", text,
        "': expected one SBP per mesh axis, as in (S(0), B)"));
  }
  std::vector<SbpParallel> sbps;
  for (absl::string_view piece : absl::StrSplit(body, ',')) {
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(piece);
    if (!sbp.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed nd_sbp '", text, "': ", sbp.status().message()));
    }
    sbps.push_back(*sbp);
  }
  absl::StatusOr<NdSbp> nd = Make(sbps);
  if (!nd.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed nd_sbp '", text, "': ", nd.status().message()));
  }
  return nd;
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
