#include "oneflow_sbp/quoted_input.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp {

std::string QuotedInput(absl::string_view text) {
  if (text.size() <= kMaxQuotedChars) return absl::StrCat("'", text, "'");
  return absl::StrCat("'", text.substr(0, kMaxQuotedChars), "...' (", text.size(),
                      " characters)");
}

std::string Abbreviated(absl::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return absl::StrCat(text.substr(0, max_chars), "...");
}

}  // namespace oneflow_sbp
