#include "io/json_value.h"

#include <cstdint>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::io {
namespace {

// Recursive descent; the first error stops everything (error_ set). The
// recursion is bounded by kMaxJsonDocDepth, checked before descending.
class Reader {
 public:
  explicit Reader(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Read() {
    JsonValue root;
    Value(&root, 0);
    SkipSpace();
    if (error_.empty() && pos_ != text_.size()) Fail("the end of input");
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    return root;
  }

 private:
  void Fail(absl::string_view expected) {
    if (!error_.empty()) return;
    error_ = absl::StrCat("byte ", pos_, ": expected ", expected);
    if (pos_ >= text_.size()) {
      absl::StrAppend(&error_, ", got the end of input");
      return;
    }
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    // One character at most: the input is data, never echoed at length.
    if (c >= 0x20 && c < 0x7f) {
      absl::StrAppend(&error_, ", got '", text_.substr(pos_, 1), "'");
    } else {
      absl::StrAppend(&error_, ", got byte ", c);
    }
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void Value(JsonValue* out, int depth) {
    SkipSpace();
    out->offset = pos_;
    if (pos_ >= text_.size()) return Fail("a value");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth + 1 > kMaxJsonDocDepth) {
        return Fail(absl::StrCat("at most ", kMaxJsonDocDepth, " levels of nesting"));
      }
      return c == '{' ? Object(out, depth + 1) : Array(out, depth + 1);
    }
    if (c == '"') {
      out->kind = JsonValue::kString;
      return String(&out->string);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number(out);
    for (auto [word, kind, b] : {std::tuple{"true", JsonValue::kBool, true},
                                 std::tuple{"false", JsonValue::kBool, false},
                                 std::tuple{"null", JsonValue::kNull, false}}) {
      const absl::string_view w(word);
      if (text_.substr(pos_, w.size()) == w) {
        pos_ += w.size();
        out->kind = kind;
        out->boolean = b;
        return;
      }
    }
    Fail("a value (a double-quoted string, a number, an object, an array, true, false or null)");
  }

  void Object(JsonValue* out, int depth) {
    out->kind = JsonValue::kObject;
    ++pos_;  // {
    if (Eat('}')) return;
    absl::flat_hash_set<std::string> seen;
    do {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("a double-quoted key");
      const size_t key_at = pos_;
      std::string key;
      String(&key);
      if (!error_.empty()) return;
      if (!seen.insert(key).second) {
        // Two members with one name: which one a reader keeps is up to the
        // reader, so the document has no single meaning.
        error_ = absl::StrCat("byte ", key_at, ": duplicate key ", QuotedInput(key));
        return;
      }
      if (!Eat(':')) return Fail("':' after a key");
      out->object.emplace_back(std::move(key), JsonValue());
      Value(&out->object.back().second, depth);
      if (!error_.empty()) return;
    } while (Eat(','));
    if (!Eat('}')) Fail("',' or '}' in an object (no trailing comma)");
  }

  void Array(JsonValue* out, int depth) {
    out->kind = JsonValue::kArray;
    ++pos_;  // [
    if (Eat(']')) return;
    do {
      out->array.emplace_back();
      Value(&out->array.back(), depth);
      if (!error_.empty()) return;
    } while (Eat(','));
    if (!Eat(']')) Fail("',' or ']' in an array (no trailing comma)");
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // Four hex digits after "\u" at pos_ (which points at the 'u').
  bool Hex4(uint32_t* cp) {
    uint32_t v = 0;
    for (int i = 1; i <= 4; ++i) {
      if (pos_ + i >= text_.size() || !absl::ascii_isxdigit(text_[pos_ + i])) {
        pos_ += i;
        Fail("four hex digits after \\u");
        return false;
      }
      const char h = absl::ascii_tolower(text_[pos_ + i]);
      v = v * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : h - 'a' + 10);
    }
    pos_ += 5;
    *cp = v;
    return true;
  }

  // The length of the well-formed UTF-8 sequence at pos_, or 0 (overlong
  // forms, surrogates and code points past U+10FFFF are not well formed).
  size_t Utf8Length() const {
    const auto at = [&](size_t i) {
      return pos_ + i < text_.size() ? static_cast<unsigned char>(text_[pos_ + i]) : 0;
    };
    const unsigned char c = at(0);
    const auto cont = [&](size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
      return at(i) >= lo && at(i) <= hi;
    };
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (c >= 0xE1 && c <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
  }

  void String(std::string* out) {
    ++pos_;  // "
    while (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c < 0x20) return Fail("a control character escaped (\\n, \\u0000) inside a string");
      if (c >= 0x80) {
        const size_t n = Utf8Length();
        if (n == 0) return Fail("valid UTF-8 inside a string");
        out->append(text_.data() + pos_, n);
        pos_ += n;
        continue;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_];
      if (e == 'u') {
        uint32_t cp;
        if (!Hex4(&cp)) return;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("a high surrogate before a low one");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (text_.substr(pos_, 2) != "\\u") return Fail("\\u and a low surrogate");
          ++pos_;
          if (!Hex4(&low)) return;
          if (low < 0xDC00 || low > 0xDFFF) return Fail("a low surrogate (\\uDC00-\\uDFFF)");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        AppendUtf8(cp, out);
        continue;
      }
      static constexpr absl::string_view kFrom = "\"\\/bfnrt";
      static constexpr absl::string_view kTo = "\"\\/\b\f\n\r\t";
      const size_t k = kFrom.find(e);
      if (k == absl::string_view::npos) {
        return Fail("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
      }
      out->push_back(kTo[k]);
      ++pos_;
    }
    Fail("the closing '\"' of a string");
  }

  void Number(JsonValue* out) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
      return pos_ > from;
    };
    if (text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return Fail("a digit");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digits()) return Fail("a digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digits()) return Fail("a digit in the exponent");
    }
    out->kind = JsonValue::kNumber;
    // The grammar is checked; SimpleAtod fails only out of range (1e999).
    if (!absl::SimpleAtod(text_.substr(start, pos_ - start), &out->number)) {
      pos_ = start;
      Fail("a number within the range of a double");
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const JsonValue* JsonValue::Find(absl::string_view key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::string_view JsonValue::KindName(Kind kind) {
  switch (kind) {
    case kNull: return "null";
    case kBool: return "a boolean";
    case kNumber: return "a number";
    case kString: return "a string";
    case kArray: return "an array";
    case kObject: return "an object";
  }
  return "a value";
}

absl::StatusOr<JsonValue> ParseStrictJson(absl::string_view text) { return Reader(text).Read(); }

}  // namespace oneflow_sbp::io
