#include "models/wordpiece_tokenizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::models {
namespace {

// The special tokens transformers cuts out of the text before anything else
// (its added-tokens trie). None is a substring of another, so the earliest
// match is the only match at its position.
constexpr absl::string_view kPad = "[PAD]";
constexpr absl::string_view kUnk = "[UNK]";
constexpr absl::string_view kCls = "[CLS]";
constexpr absl::string_view kSep = "[SEP]";
constexpr absl::string_view kMask = "[MASK]";
constexpr absl::string_view kSpecials[] = {kPad, kUnk, kCls, kSep, kMask};

// ---- Character classes, each exactly the Python predicate named. ----

// transformers' _is_control: category C* (Cc, Cf, Cn, Co, Cs) except the
// three whitespace controls.
bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return (U_GET_GC_MASK(c) & U_GC_C_MASK) != 0;
}

// transformers' _is_whitespace: the four ASCII ones and category Zs.
bool IsBertWhitespace(UChar32 c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(c) == U_SPACE_SEPARATOR;
}

// Python's str.isspace(), which str.split() splits on: category Zs or
// bidirectional class WS, B or S. After cleaning, this adds U+2028 and
// U+2029 (Zl, Zp) to ' ': transformers keeps them through _clean_text but
// whitespace_tokenize splits on them.
bool IsPythonSpace(UChar32 c) {
  if (c == ' ') return true;
  if (c < 0x80 && !(c >= 0x09 && c <= 0x0D) && !(c >= 0x1C && c <= 0x1F)) return false;
  if (u_charType(c) == U_SPACE_SEPARATOR) return true;
  const UCharDirection d = u_charDirection(c);
  return d == U_WHITE_SPACE_NEUTRAL || d == U_BLOCK_SEPARATOR || d == U_SEGMENT_SEPARATOR;
}

// transformers' _is_punctuation: all non-alphanumeric printable ASCII, and
// category P*.
bool IsPunctuation(UChar32 c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  return (U_GET_GC_MASK(c) & U_GC_P_MASK) != 0;
}

// BERT's _is_chinese_char: the CJK Unified Ideographs blocks and extensions
// A-E, and the compatibility ideographs. Not Hangul, kana or extension F-H.
bool IsCjk(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// ---- UTF-8 ----

// The next code point of s at *i, or U+FFFD for an ill-formed sequence.
// U8_NEXT consumes a maximal subpart only, so a valid character right after
// bad bytes is read as itself (as Python's errors='replace' does).
UChar32 NextCodePoint(absl::string_view s, int32_t* i) {
  UChar32 c;
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), *i, static_cast<int32_t>(s.size()), c);
  return c < 0 ? 0xFFFD : c;
}

bool IsValidUtf8(absl::string_view s) {
  if (s.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) return false;
  for (int32_t i = 0; i < static_cast<int32_t>(s.size());) {
    UChar32 c;
    U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, static_cast<int32_t>(s.size()), c);
    if (c < 0) return false;
  }
  return true;
}

void AppendUtf8(UChar32 c, std::string* out) {
  uint8_t buf[U8_MAX_LENGTH];
  int32_t n = 0;
  U8_APPEND_UNSAFE(buf, n, c);
  out->append(reinterpret_cast<const char*>(buf), n);
}

// ---- ICU normalisers ----

// ICU's instances are immortal (ICU owns them); they fail to load only if
// ICU's data library is missing, a broken installation, not bad input.
const icu::Normalizer2& LoadNormalizer(const icu::Normalizer2* (*get)(UErrorCode&),
                                       const char* form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = get(status);
  OFS_CHECK(U_SUCCESS(status) && n != nullptr)
      << "ICU " << form << " data: " << u_errorName(status);
  return *n;
}

const icu::Normalizer2& Nfc() {
  static const icu::Normalizer2& nfc = LoadNormalizer(&icu::Normalizer2::getNFCInstance, "NFC");
  return nfc;
}

const icu::Normalizer2& Nfd() {
  static const icu::Normalizer2& nfd = LoadNormalizer(&icu::Normalizer2::getNFDInstance, "NFD");
  return nfd;
}

icu::UnicodeString Normalize(const icu::Normalizer2& form, const icu::UnicodeString& s) {
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeString out = form.normalize(s, status);
  // Fails only on a bogus input string or out of memory, neither of which
  // user text can cause (every code point we append is a scalar value).
  OFS_CHECK(U_SUCCESS(status)) << "ICU normalize: " << u_errorName(status);
  return out;
}

absl::StatusOr<std::string> ReadVocabFile(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (f == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the vocabulary: ", std::strerror(errno)));
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) {
    data.append(buf, n);
    if (data.size() > WordPieceTokenizer::kMaxVocabFileBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": the vocabulary is over the limit of ",
                       WordPieceTokenizer::kMaxVocabFileBytes, " bytes"));
    }
  }
  if (std::ferror(f.get())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot read the vocabulary: ", std::strerror(errno)));
  }
  return data;
}

// Python's text-mode readlines() with rstrip("\n"): lines end at LF, CRLF
// or a lone CR, and a final line end does not start another line.
std::vector<std::string> SplitLines(absl::string_view data) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] != '\n' && data[i] != '\r') continue;
    lines.emplace_back(data.substr(start, i - start));
    if (data[i] == '\r' && i + 1 < data.size() && data[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < data.size()) lines.emplace_back(data.substr(start));
  return lines;
}

}  // namespace

// ---------------------------------------------------------------------------
// Loading

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromVocabFile(const std::string& path) {
  OFS_ASSIGN_OR_RETURN(std::string data, ReadVocabFile(path));
  return Build(SplitLines(data), path,
               [&path](size_t i) { return absl::StrCat(path, ":", i + 1); });
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromVocab(std::vector<std::string> tokens) {
  return Build(std::move(tokens), "vocab",
               [](size_t i) { return absl::StrCat("vocab entry ", i); });
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::Build(
    std::vector<std::string> tokens, absl::string_view source,
    absl::FunctionRef<std::string(size_t)> where) {
  if (tokens.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the vocabulary is empty"));
  }
  if (tokens.size() > kMaxVocabSize) {
    return absl::ResourceExhaustedError(
        absl::StrCat(source, ": ", tokens.size(), " tokens, over the limit of ", kMaxVocabSize));
  }
  WordPieceTokenizer tok;
  tok.vocab_.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    tok.max_token_bytes_ = std::max(tok.max_token_bytes_, tokens[i].size());
    if (tokens[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(i), ": empty token (it would take id ", i, ")"));
    }
    if (!IsValidUtf8(tokens[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(i), ": token ", QuotedInput(absl::CHexEscape(tokens[i])), " is not valid UTF-8"));
    }
    auto [it, inserted] = tok.vocab_.try_emplace(std::move(tokens[i]), static_cast<int32_t>(i));
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(where(i), ": token ", QuotedInput(it->first),
                                                     " duplicates ", where(it->second)));
    }
  }
  for (auto [name, id] : {std::pair{kPad, &tok.pad_id_}, std::pair{kUnk, &tok.unk_id_},
                          std::pair{kCls, &tok.cls_id_}, std::pair{kSep, &tok.sep_id_}}) {
    std::optional<int32_t> found = tok.TokenId(name);
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": the vocabulary has no ", name, " token"));
    }
    *id = *found;
  }
  tok.mask_id_ = tok.TokenId(kMask).value_or(tok.unk_id_);
  return tok;
}

std::optional<int32_t> WordPieceTokenizer::TokenId(absl::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------------------
// Tokenizing

namespace {

// Steps 2 and 3 of the header on one stretch between special tokens:
// transformers' _clean_text, _tokenize_chinese_chars and NFC. Python code
// points and ICU's agree because U8_NEXT yields scalar values only.
icu::UnicodeString CleanText(absl::string_view stretch) {
  icu::UnicodeString out;
  for (int32_t i = 0; i < static_cast<int32_t>(stretch.size());) {
    const UChar32 c = NextCodePoint(stretch, &i);
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
    if (IsBertWhitespace(c)) {
      out.append(static_cast<UChar>(' '));
    } else if (IsCjk(c)) {
      out.append(static_cast<UChar>(' ')).append(c).append(static_cast<UChar>(' '));
    } else {
      out.append(c);
    }
  }
  return Normalize(Nfc(), out);
}

// Step 4 on one whitespace-delimited word: str.lower() of the whole word
// (ICU's full lower-casing in the root locale is Python's: "İ" -> "i̇", and
// Final_Sigma looks at the word around each "Σ"), NFD, Mn marks dropped,
// then split around punctuation. Calls `emit` with each non-empty piece in
// UTF-8.
template <typename Emit>
void NormalizeWord(icu::UnicodeString word, const Emit& emit) {
  word.toLower(icu::Locale::getRoot());
  const icu::UnicodeString nfd = Normalize(Nfd(), word);
  std::string piece;
  const UChar* buf = nfd.getBuffer();
  const int32_t n = nfd.length();
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U16_NEXT(buf, i, n, c);
    if (u_charType(c) == U_NON_SPACING_MARK) continue;
    // The final whitespace_tokenize(" ".join(...)) of BasicTokenizer would
    // split here too; no canonical decomposition yields a space today, but
    // splitting keeps that true by construction.
    const bool space = IsPythonSpace(c);
    if (space || IsPunctuation(c)) {
      if (!piece.empty()) emit(piece);
      piece.clear();
      if (space) continue;
      AppendUtf8(c, &piece);
      emit(piece);
      piece.clear();
    } else {
      AppendUtf8(c, &piece);
    }
  }
  if (!piece.empty()) emit(piece);
}

}  // namespace

void WordPieceTokenizer::WordPiece(absl::string_view word, std::vector<std::string>* tokens,
                                   std::vector<int32_t>* ids) const {
  // Byte offset of each code point, plus the end: transformers counts and
  // slices the word in Python characters, which are code points.
  // Counting stops past the limit: a longer word is [UNK] whatever it holds.
  std::vector<int32_t> at;
  for (int32_t i = 0; i < static_cast<int32_t>(word.size()) && at.size() <= kMaxCharsPerWord;) {
    at.push_back(i);
    U8_FWD_1(reinterpret_cast<const uint8_t*>(word.data()), i, static_cast<int32_t>(word.size()));
  }
  const int32_t chars = static_cast<int32_t>(at.size());
  at.push_back(static_cast<int32_t>(word.size()));
  std::vector<std::pair<int32_t, std::string>> pieces;
  if (chars <= kMaxCharsPerWord) {
    std::string candidate;
    for (int32_t start = 0; start < chars;) {
      // Candidates longer than the longest token cannot match; skipping them
      // keeps a word at ~100 x longest lookups instead of 100 x 100 / 2.
      const int32_t prefix = start > 0 ? 2 : 0;
      int32_t end = chars;
      while (end > start && static_cast<size_t>(at[end] - at[start] + prefix) > max_token_bytes_) {
        --end;
      }
      std::optional<int32_t> id;
      for (; start < end; --end) {
        const absl::string_view sub = word.substr(at[start], at[end] - at[start]);
        if (start > 0) {
          candidate.assign("##").append(sub.data(), sub.size());
          id = TokenId(candidate);
        } else {
          id = TokenId(sub);
        }
        if (id) break;
      }
      if (!id) {  // no piece of the vocabulary starts here: the word is [UNK]
        pieces.clear();
        break;
      }
      pieces.emplace_back(*id, start > 0 ? candidate : std::string(word.substr(0, at[end])));
      start = end;
    }
  }
  if (pieces.empty()) {  // too long, or unmatched (a word is never empty)
    ids->push_back(unk_id_);
    if (tokens != nullptr) tokens->emplace_back(kUnk);
    return;
  }
  for (auto& [id, token] : pieces) {
    ids->push_back(id);
    if (tokens != nullptr) tokens->push_back(std::move(token));
  }
}

absl::Status WordPieceTokenizer::Run(absl::string_view text, size_t max_tokens,
                                     std::vector<std::string>* tokens,
                                     std::vector<int32_t>* ids) const {
  if (text.size() > kMaxTextBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("text of ", text.size(), " bytes, over the limit of ", kMaxTextBytes));
  }
  const size_t base = ids->size();
  auto full = [&] { return ids->size() - base >= max_tokens; };

  // Steps 2-5 on the text between two special tokens.
  auto stretch = [&](absl::string_view s) {
    const icu::UnicodeString clean = CleanText(s);
    const UChar* buf = clean.getBuffer();
    const int32_t n = clean.length();
    for (int32_t i = 0; i < n && !full();) {
      UChar32 c;
      int32_t start = i;
      U16_NEXT(buf, i, n, c);
      if (IsPythonSpace(c)) continue;
      int32_t end = i;
      while (end < n) {
        int32_t next = end;
        U16_NEXT(buf, next, n, c);
        if (IsPythonSpace(c)) break;
        end = next;
      }
      NormalizeWord(icu::UnicodeString(clean, start, end - start), [&](const std::string& piece) {
        if (!full()) WordPiece(piece, tokens, ids);
      });
      i = end;
    }
  };

  // Step 1: the specials are ASCII, and no byte of a multi-byte or
  // ill-formed UTF-8 sequence is ASCII (U8_NEXT never swallows one), so
  // cutting the bytes first gives the same stretches as cutting the code
  // points. next[k] caches where special k occurs next, so that a text full
  // of one special does not rescan for the others (linear, not quadratic).
  constexpr size_t kNumSpecials = sizeof(kSpecials) / sizeof(kSpecials[0]);
  size_t next[kNumSpecials];
  for (size_t k = 0; k < kNumSpecials; ++k) next[k] = text.find(kSpecials[k]);
  const int32_t special_ids[kNumSpecials] = {pad_id_, unk_id_, cls_id_, sep_id_, mask_id_};
  size_t pos = 0;
  while (pos < text.size() && !full()) {
    size_t k_best = kNumSpecials;
    for (size_t k = 0; k < kNumSpecials; ++k) {
      if (next[k] != absl::string_view::npos && next[k] < pos) {
        next[k] = text.find(kSpecials[k], pos);
      }
      if (next[k] != absl::string_view::npos &&
          (k_best == kNumSpecials || next[k] < next[k_best])) {
        k_best = k;
      }
    }
    const size_t cut = k_best == kNumSpecials ? text.size() : next[k_best];
    stretch(text.substr(pos, cut - pos));
    if (k_best == kNumSpecials) break;
    if (!full()) {
      ids->push_back(special_ids[k_best]);
      if (tokens != nullptr) tokens->emplace_back(kSpecials[k_best]);
    }
    pos = cut + kSpecials[k_best].size();
  }
  if (ids->size() - base > max_tokens) {
    ids->resize(base + max_tokens);
    if (tokens != nullptr) tokens->resize(max_tokens);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> WordPieceTokenizer::Tokenize(
    absl::string_view text) const {
  std::vector<std::string> tokens;
  std::vector<int32_t> ids;
  OFS_RETURN_IF_ERROR(Run(text, std::numeric_limits<size_t>::max(), &tokens, &ids));
  OFS_CHECK(tokens.size() == ids.size()) << tokens.size() << " tokens, " << ids.size() << " ids";
  return tokens;
}

absl::StatusOr<Encoding> WordPieceTokenizer::Encode(absl::string_view text, int max_length) const {
  if (max_length < 2 || max_length > kMaxLengthLimit) {
    return absl::InvalidArgumentError(absl::StrCat("max_length ", max_length, " must be in [2, ",
                                                   kMaxLengthLimit,
                                                   "] ([CLS] and [SEP] take two)"));
  }
  Encoding e;
  e.ids.push_back(cls_id_);
  OFS_RETURN_IF_ERROR(Run(text, static_cast<size_t>(max_length) - 2, nullptr, &e.ids));
  e.ids.push_back(sep_id_);
  e.attention_mask.assign(e.ids.size(), 1);
  e.type_ids.assign(e.ids.size(), 0);
  return e;
}

absl::StatusOr<std::vector<Encoding>> WordPieceTokenizer::EncodeBatch(
    absl::Span<const std::string> texts, int max_length) const {
  std::vector<Encoding> out;
  out.reserve(texts.size());
  size_t longest = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    absl::StatusOr<Encoding> e = Encode(texts[i], max_length);
    if (!e.ok()) {
      return absl::Status(e.status().code(), absl::StrCat("text ", i, ": ", e.status().message()));
    }
    longest = std::max(longest, e->ids.size());
    out.push_back(*std::move(e));
  }
  for (Encoding& e : out) {
    e.ids.resize(longest, pad_id_);
    e.attention_mask.resize(longest, 0);
    e.type_ids.resize(longest, 0);
  }
  return out;
}

}  // namespace oneflow_sbp::models