#include "oneflow_sbp/values/quoted_input.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace oneflow_sbp {
namespace {

// `text` cut to at most `max_chars` bytes, backed off to the start of a
// UTF-8 sequence so that the cut never splits a character.
absl::string_view Cut(absl::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t n = max_chars;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// The length of the UTF-8 sequence that text[i] leads, if its continuation
// bytes follow; 0 for a byte that leads none (a stray continuation byte,
// 0xC0, 0xC1, 0xF5..0xFF) or a cut sequence.
size_t SequenceAt(absl::string_view text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  const size_t n = (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
                   : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string EscapedControls(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // A C1 control (U+0080..U+009F) in UTF-8: U+009B starts an ANSI
      // sequence on some terminals, like ESC [.
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(text[++i]));
    } else if (c >= 0x80) {
      // Bytes that are not UTF-8 are escaped: a lone 0x9B is CSI to a
      // terminal in 8-bit mode, as ESC [ is.
      const size_t n = SequenceAt(text, i);
      if (n == 0) {
        absl::StrAppendFormat(&out, "\\x%02x", c);
      } else {
        out.append(text.data() + i, n);
        i += n - 1;
      }
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

namespace {

std::string QuotedUpTo(absl::string_view text, size_t max_chars) {
  const absl::string_view kept = Cut(text, max_chars);
  if (kept.size() == text.size()) return absl::StrCat("'", EscapedControls(text), "'");
  return absl::StrCat("'", EscapedControls(kept), "...' (", text.size(), " characters)");
}

}  // namespace

std::string QuotedInput(absl::string_view text) { return QuotedUpTo(text, kMaxQuotedChars); }

std::string QuotedPath(absl::string_view path) { return QuotedUpTo(path, kMaxQuotedPathChars); }

std::string UnquotedInput(absl::string_view text) {
  const std::string quoted = QuotedInput(text);
  const size_t close = quoted.rfind('\'');
  return absl::StrCat(quoted.substr(1, close - 1), quoted.substr(close + 1));
}

std::string Abbreviated(absl::string_view text, size_t max_chars) {
  const absl::string_view kept = Cut(text, max_chars);
  if (kept.size() == text.size()) return EscapedControls(text);
  return absl::StrCat(EscapedControls(kept), "...");
}

}  // namespace oneflow_sbp
