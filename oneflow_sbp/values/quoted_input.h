// User input quoted in error messages, cut to a readable length.
//
// Messages name the bad value, but a hostile or accidental input can be
// megabytes long (a file passed where a layout was expected); echoing it
// would bury the reason. QuotedInput keeps the first kMaxQuotedChars
// bytes (never splitting a UTF-8 character), then "..." and the full
// length. Control characters are escaped, so that a NUL, a newline or an
// ANSI escape in a name can neither cut the message nor drive the terminal:
//
//   QuotedInput("S(0)")          -> 'S(0)'
//   QuotedInput(<100 x "B,">)    -> 'B,B,...,B,...' (200 characters)
//   QuotedInput("x\x1b[31m\n")   -> 'x\x1b[31m\n'
//
// Every message that echoes user text (names of ops, blobs, tensors and
// files, flag values) quotes it through QuotedInput.
#ifndef ONEFLOW_SBP_VALUES_QUOTED_INPUT_H_
#define ONEFLOW_SBP_VALUES_QUOTED_INPUT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace oneflow_sbp {

inline constexpr size_t kMaxQuotedChars = 64;

std::string QuotedInput(absl::string_view text);

// A file path, quoted: escaped like QuotedInput but cut at
// kMaxQuotedPathChars, since a path is what the user needs to find the
// file and real ones run past 64 bytes (build sandboxes, checkpoints under
// long experiment directories); the cut still bounds a hostile one.
inline constexpr size_t kMaxQuotedPathChars = 4 * kMaxQuotedChars;
std::string QuotedPath(absl::string_view path);

// The same without the quotes, for a name that starts a message ("fc1:
// ..."): UnquotedInput(<100 x "a">) -> aaa...a... (100 characters).
std::string UnquotedInput(absl::string_view text);

// `text` with control characters escaped: \n \t \r, other C0 controls and
// DEL as \xNN, C1 controls (UTF-8 U+0080..U+009F) as \u00NN, bytes that
// are not part of a UTF-8 sequence (a lone 0x9B, 8-bit CSI) as \xNN;
// everything else, UTF-8 included, unchanged. For whole messages bound for a terminal.
std::string EscapedControls(absl::string_view text);

// A message part that may embed input (a protobuf parser's reason): cut to
// `max_chars` bytes followed by "...", unquoted, controls escaped.
std::string Abbreviated(absl::string_view text, size_t max_chars = 4 * kMaxQuotedChars);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_QUOTED_INPUT_H_
