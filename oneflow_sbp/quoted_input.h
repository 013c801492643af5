// User input quoted in error messages, cut to a readable length.
//
// Messages name the bad value, but a hostile or accidental input can be
// megabytes long (a file passed where a layout was expected); echoing it
// would bury the reason. QuotedInput keeps the first kMaxQuotedChars
// characters, then "..." and the full length:
//
//   QuotedInput("S(0)")          -> 'S(0)'
//   QuotedInput(<100 x "B,">)    -> 'B,B,...,B,...' (200 characters)
#ifndef ONEFLOW_SBP_QUOTED_INPUT_H_
#define ONEFLOW_SBP_QUOTED_INPUT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace oneflow_sbp {

inline constexpr size_t kMaxQuotedChars = 64;

std::string QuotedInput(absl::string_view text);

// A message part that may embed input (a protobuf parser's reason): cut to
// `max_chars` characters followed by "...", unquoted.
std::string Abbreviated(absl::string_view text, size_t max_chars = 4 * kMaxQuotedChars);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_QUOTED_INPUT_H_
