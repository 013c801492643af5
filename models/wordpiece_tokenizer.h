// WordPieceTokenizer: BERT's uncased WordPiece tokenizer, token for token and
// id for id the pure-Python one of Hugging Face transformers
// (`BertTokenizerLegacy` in transformers 5, `BertTokenizer` before it, with
// do_lower_case=True, tokenize_chinese_chars=True, strip_accents=None).
//
//   absl::StatusOr<WordPieceTokenizer> tok =
//       WordPieceTokenizer::FromVocabFile("model/vocab.txt");
//   tok->Tokenize("Café déjà vu!");  // {"cafe", "de", "##ja", "vu", "!"}
//   tok->Encode("Café déjà vu!");    // ids {101, 7668, 2139, 3900, 24728, 999, 102}
//
// The steps, as transformers runs them (models/wordpiece_tokenizer.cc comments
// each one):
//  1. The special tokens [PAD] [UNK] [CLS] [SEP] [MASK], written exactly so
//     (case matters) anywhere in the text, are cut out and kept whole.
//  2. Each other stretch is cleaned: U+0000, U+FFFD and every character of
//     category C* (controls, formats, private use, unassigned) except \t \n
//     \r are dropped, and whitespace (\t \n \r, category Zs) becomes ' '.
//  3. Spaces go around CJK ideographs (BERT's eight code point ranges), the
//     text is put in NFC and split on whitespace (Python's str.split).
//  4. Each word is lower-cased as a whole (Unicode full case mapping, so
//     "İ" becomes "i" + U+0307 and a word-final "Σ" becomes "ς"), put in NFD
//     with its marks of category Mn dropped, and split around punctuation
//     (ASCII 33-47, 58-64, 91-96, 123-126 and every category P*).
//  5. WordPiece: greedy longest match first against the vocabulary,
//     continuation pieces prefixed "##"; a word of more than 100 code points,
//     or one with a piece that matches nothing, is a single [UNK].
//
// Unicode comes from ICU (Debian's libicu 72, Unicode 15.0). Python's
// unicodedata is the Unicode of its own release (14.0 in Python 3.11), so
// the two differ only on characters assigned between the two versions:
// Python drops them as unassigned (category Cn), we keep them (then they
// are usually [UNK]).
//
// Input text is UTF-8. Bytes that are not valid UTF-8 never fail a call:
// each ill-formed sequence reads as U+FFFD (ICU's U8_NEXT, the Unicode
// "maximal subpart" rule that Python's errors='replace' follows too), and
// step 2 drops U+FFFD, so "ab\xFFcd" tokenizes as "abcd" does, exactly as
// transformers does with text decoded by bytes.decode("utf-8", "replace").
//
// The vocabulary is one token per line, id = line number from 0 (LF, CRLF
// or CR line ends, as Python's text mode reads them). Unlike transformers,
// which lets a duplicate's last line win and takes an empty line as the
// token "", we refuse both, and a line that is not UTF-8: such a file is
// broken, and silently shifted or shadowed ids are the worst outcome.
// [PAD] [UNK] [CLS] [SEP] must be in it; [MASK] may be missing (then
// "[MASK]" in the text gets [UNK]'s id, as in transformers).
//
// The Hugging Face fast (Rust) tokenizer lower-cases character by character,
// so it gives "σ" where this one (and the Python one) gives a final "ς";
// tests/data/tokenizer/reference.json records where the two disagree.
#ifndef MODELS_WORDPIECE_TOKENIZER_H_
#define MODELS_WORDPIECE_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace oneflow_sbp::models {

// One encoded sequence, as transformers' BatchEncoding holds it: the ids
// with [CLS] first and [SEP] last (then [PAD]s in a padded batch),
// attention_mask 1 for a real token and 0 for padding, type_ids all 0 (one
// segment). The three always have the same length.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> attention_mask;
  std::vector<int32_t> type_ids;

  friend bool operator==(const Encoding& a, const Encoding& b) {
    return a.ids == b.ids && a.attention_mask == b.attention_mask && a.type_ids == b.type_ids;
  }
  friend bool operator!=(const Encoding& a, const Encoding& b) { return !(a == b); }
};

class WordPieceTokenizer {
 public:
  // Bounds on hostile input (docs/RELIABILITY.md, "Limits"); each is
  // kResourceExhausted naming the bound. Real BERT vocabularies have 30-120
  // thousand tokens in about 1 MiB at most.
  static constexpr size_t kMaxVocabSize = size_t{1} << 20;
  static constexpr size_t kMaxVocabFileBytes = size_t{64} << 20;
  static constexpr size_t kMaxTextBytes = size_t{16} << 20;
  static constexpr int kMaxLengthLimit = 1 << 20;
  // transformers' max_input_chars_per_word and model_max_length for BERT.
  static constexpr int kMaxCharsPerWord = 100;
  static constexpr int kDefaultMaxLength = 512;

  // Reads `path` (see the file format above). kNotFound if it cannot be
  // opened; kInvalidArgument "path:LINE: ..." for an empty, duplicate or
  // non-UTF-8 line, "path: ..." for an empty file or a missing special
  // token; kResourceExhausted beyond kMaxVocabFileBytes or kMaxVocabSize.
  static absl::StatusOr<WordPieceTokenizer> FromVocabFile(const std::string& path);

  // The same from tokens in id order (tokens[i] gets id i); errors name
  // "vocab entry i" instead of a file line.
  static absl::StatusOr<WordPieceTokenizer> FromVocab(std::vector<std::string> tokens);

  // The tokens of `text`, without [CLS]/[SEP]: steps 1-5 above. Never fails
  // on content (invalid UTF-8 included); kResourceExhausted only when text
  // has more than kMaxTextBytes bytes.
  absl::StatusOr<std::vector<std::string>> Tokenize(absl::string_view text) const;

  // [CLS] + the ids of Tokenize(text) + [SEP], the tokens cut to the first
  // max_length - 2 (transformers' truncation=True, truncation_side right);
  // no padding. kInvalidArgument unless 2 <= max_length <= kMaxLengthLimit.
  absl::StatusOr<Encoding> Encode(absl::string_view text, int max_length = kDefaultMaxLength) const;

  // Encode of each text, then right-padded with [PAD] (mask 0, type 0) to
  // the longest of the batch (transformers' padding=True). An empty batch
  // gives an empty vector. Fails as Encode does, naming the text's index.
  absl::StatusOr<std::vector<Encoding>> EncodeBatch(absl::Span<const std::string> texts,
                                                    int max_length = kDefaultMaxLength) const;

  // The id of a vocabulary token, or nullopt.
  std::optional<int32_t> TokenId(absl::string_view token) const;
  size_t vocab_size() const { return vocab_.size(); }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }

 private:
  WordPieceTokenizer() = default;

  // Checks and indexes `tokens`; errors name `source` (the file, or
  // "vocab") and, through `where(i)`, the i-th token ("f.txt:3").
  static absl::StatusOr<WordPieceTokenizer> Build(std::vector<std::string> tokens,
                                                  absl::string_view source,
                                                  absl::FunctionRef<std::string(size_t)> where);

  // Steps 1-5 on `text`: appends each token's id to `ids` and, when
  // `tokens` is given, the token itself. Stops after `max_tokens` tokens
  // (the rest could only be truncated away).
  absl::Status Run(absl::string_view text, size_t max_tokens, std::vector<std::string>* tokens,
                   std::vector<int32_t>* ids) const;

  // Step 5 on one word (UTF-8, already lower-cased, stripped and split).
  void WordPiece(absl::string_view word, std::vector<std::string>* tokens,
                 std::vector<int32_t>* ids) const;

  absl::flat_hash_map<std::string, int32_t> vocab_;
  int32_t pad_id_ = 0;
  int32_t unk_id_ = 0;
  int32_t cls_id_ = 0;
  int32_t sep_id_ = 0;
  int32_t mask_id_ = 0;         // unk_id_ when the vocabulary has no [MASK]
  size_t max_token_bytes_ = 0;  // the longest token: WordPiece tries no longer piece
};

}  // namespace oneflow_sbp::models
#endif  // MODELS_WORDPIECE_TOKENIZER_H_
