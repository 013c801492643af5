// The WordPiece tokenizer against Hugging Face's Python BertTokenizer, and
// its failure paths.
//
// tests/data/tokenizer/reference.json holds what transformers answered for
// each case (tools/reference/tokenizer_reference.py wrote it, with the
// versions). The test needs neither transformers nor the model download:
// it loads tests/data/tokenizer/vocab_subset.tsv, "token<TAB>id" lines for
// every vocabulary entry that WordPiece found while tokenizing the cases,
// with the ids they have in the real 30,522-token vocab.txt. Every other id
// is filled with "\x01<id>", a token no word can match (cleaning removes
// control characters from the text), so ids are the real ids and each
// lookup answers as the full vocabulary does. With OFS_BERT_VOCAB set to the
// real vocab.txt (bazel test --test_env=OFS_BERT_VOCAB=...), the same cases
// run against it too.
#include "models/wordpiece_tokenizer.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "io/proto_io.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::text {
namespace {

using ::google::protobuf::ListValue;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDataDir[] = "tests/data/tokenizer/";

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const Struct& Reference() {
  static const Struct* ref = [] {
    auto* s = new Struct;
    const absl::Status st = io::FromJson(ReadFile(absl::StrCat(kDataDir, "reference.json")), s);
    EXPECT_TRUE(st.ok()) << st;
    return s;
  }();
  return *ref;
}

const Value& Field(const Struct& s, const std::string& name) {
  static const Value* null_value = new Value;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? *null_value : it->second;
}

std::vector<std::string> Strings(const Value& v) {
  std::vector<std::string> out;
  for (const Value& e : v.list_value().values()) out.push_back(e.string_value());
  return out;
}

std::vector<int32_t> Ints(const Value& v) {
  std::vector<int32_t> out;
  for (const Value& e : v.list_value().values()) {
    out.push_back(static_cast<int32_t>(e.number_value()));
  }
  return out;
}

// The input bytes of a case: its raw bytes where they are not UTF-8.
std::string InputOf(const Struct& c) {
  const Value& hex = Field(c, "utf8_hex");
  if (hex.has_string_value()) return absl::HexStringToBytes(hex.string_value());
  return Field(c, "text").string_value();
}

models::WordPieceTokenizer SubsetTokenizer() {
  const int size = static_cast<int>(
      Field(Field(Field(Reference(), "meta").struct_value(), "vocab").struct_value(), "size")
          .number_value());
  std::vector<std::string> tokens(size);
  for (int i = 0; i < size; ++i) tokens[i] = absl::StrCat("\x01", i);
  for (absl::string_view line : absl::StrSplit(ReadFile(absl::StrCat(kDataDir, "vocab_subset.tsv")),
                                               '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, '\t');
    EXPECT_EQ(parts.size(), 2u) << line;
    const int id = std::stoi(parts[1]);
    EXPECT_TRUE(id >= 0 && id < size) << line;
    tokens[id] = parts[0];
  }
  absl::StatusOr<models::WordPieceTokenizer> tok = models::WordPieceTokenizer::FromVocab(std::move(tokens));
  EXPECT_TRUE(tok.ok()) << tok.status();
  return *std::move(tok);
}

// Every case of reference.json: tokens and ids equal, mask and types right.
void ExpectReference(const models::WordPieceTokenizer& tok) {
  const ListValue& cases = Field(Reference(), "cases").list_value();
  ASSERT_GE(cases.values_size(), 25);
  int checked = 0;
  for (const Value& v : cases.values()) {
    const Struct& c = v.struct_value();
    SCOPED_TRACE(Field(c, "name").string_value());
    const std::string input = InputOf(c);
    absl::StatusOr<std::vector<std::string>> tokens = tok.Tokenize(input);
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    EXPECT_EQ(*tokens, Strings(Field(c, "tokens")));
    absl::StatusOr<models::Encoding> e = tok.Encode(input, 512);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->ids, Ints(Field(c, "ids")));
    EXPECT_EQ(e->attention_mask, std::vector<int32_t>(e->ids.size(), 1));
    EXPECT_EQ(e->type_ids, std::vector<int32_t>(e->ids.size(), 0));
    ++checked;
  }
  EXPECT_EQ(checked, cases.values_size());
}

TEST(WordPieceReference, EveryCaseMatchesTransformers) { ExpectReference(SubsetTokenizer()); }

TEST(WordPieceReference, RealVocabularyWhenGiven) {
  const char* path = std::getenv("OFS_BERT_VOCAB");
  if (path == nullptr) GTEST_SKIP() << "OFS_BERT_VOCAB not set";
  absl::StatusOr<models::WordPieceTokenizer> tok = models::WordPieceTokenizer::FromVocabFile(path);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->vocab_size(), 30522u);
  ExpectReference(*tok);
}

TEST(WordPieceReference, TruncationAndPaddedBatchMatchTransformers) {
  const models::WordPieceTokenizer tok = SubsetTokenizer();
  const Struct& batch = Field(Reference(), "batch").struct_value();
  std::vector<std::string> texts;
  for (const std::string& name : Strings(Field(batch, "names"))) {
    for (const Value& v : Field(Reference(), "cases").list_value().values()) {
      if (Field(v.struct_value(), "name").string_value() == name) {
        texts.push_back(InputOf(v.struct_value()));
      }
    }
  }
  ASSERT_EQ(texts.size(), 4u);
  absl::StatusOr<std::vector<models::Encoding>> got = tok.EncodeBatch(texts, 512);
  ASSERT_TRUE(got.ok()) << got.status();
  const auto rows = [](const Value& v) {
    std::vector<std::vector<int32_t>> out;
    for (const Value& row : v.list_value().values()) out.push_back(Ints(row));
    return out;
  };
  const auto ids = rows(Field(batch, "input_ids"));
  const auto mask = rows(Field(batch, "attention_mask"));
  const auto types = rows(Field(batch, "token_type_ids"));
  ASSERT_EQ(got->size(), ids.size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].ids, ids[i]) << i;
    EXPECT_EQ((*got)[i].attention_mask, mask[i]) << i;
    EXPECT_EQ((*got)[i].type_ids, types[i]) << i;
  }
}

// ---- Small vocabularies: the algorithm's edges ----

models::WordPieceTokenizer Small(std::vector<std::string> extra) {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  v.insert(v.end(), extra.begin(), extra.end());
  absl::StatusOr<models::WordPieceTokenizer> tok = models::WordPieceTokenizer::FromVocab(std::move(v));
  EXPECT_TRUE(tok.ok()) << tok.status();
  return *std::move(tok);
}

std::vector<std::string> Tokens(const models::WordPieceTokenizer& tok, absl::string_view text) {
  absl::StatusOr<std::vector<std::string>> t = tok.Tokenize(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : std::vector<std::string>{"<error>"};
}

TEST(WordPiece, GreedyLongestMatchFirst) {
  const models::WordPieceTokenizer tok = Small({"un", "##aff", "##able", "a", "##a", "##ff"});
  EXPECT_THAT(Tokens(tok, "unaffable"), ElementsAre("un", "##aff", "##able"));
  // "##a" then "##ff" would cover "aff" too; the longest piece wins.
  EXPECT_THAT(Tokens(tok, "unaffaff"), ElementsAre("un", "##aff", "##aff"));
  // One piece that matches nothing makes the whole word [UNK].
  EXPECT_THAT(Tokens(tok, "unaffablex a"), ElementsAre("[UNK]", "a"));
}

TEST(WordPiece, WordsOverOneHundredCodePointsAreUnknown) {
  const models::WordPieceTokenizer tok = Small({"a", "##a", "ж", "##ж"});
  EXPECT_THAT(Tokens(tok, std::string(101, 'a')), ElementsAre("[UNK]"));
  EXPECT_EQ(Tokens(tok, std::string(100, 'a')).size(), 100u);
  // Counted in code points, not bytes: 60 "ж" are 120 bytes.
  std::string zh;
  for (int i = 0; i < 60; ++i) zh += "ж";
  EXPECT_EQ(Tokens(tok, zh).size(), 60u);
}

TEST(WordPiece, InvalidUtf8IsDroppedLikeReplacementCharacters) {
  const models::WordPieceTokenizer tok = Small({"ab", "##cd", "x"});
  EXPECT_THAT(Tokens(tok, absl::StrCat("ab\xff", "cd")), ElementsAre("ab", "##cd"));
  EXPECT_THAT(Tokens(tok, absl::StrCat("ab\xe4\xb8", "cd")), ElementsAre("ab", "##cd"));
  EXPECT_THAT(Tokens(tok, "\xed\xa0\x80x\xc0\xaf"), ElementsAre("x"));  // surrogate, overlong
  EXPECT_THAT(Tokens(tok, "\xef\xbf\xbd"), IsEmpty());                  // U+FFFD itself
  // Any bytes at all: never an error, never a crash.
  std::mt19937 rng(7);
  const std::string alphabet = "ab cd[SEP]\x80\xbf\xc3\xe4\xed\xf0\xf4\xff\t\n";
  for (int n = 0; n < 2000; ++n) {
    std::string s(rng() % 48, ' ');
    for (char& c : s) {
      c = rng() % 4 == 0 ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()];
    }
    absl::StatusOr<models::Encoding> e = tok.Encode(s, 16);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_LE(e->ids.size(), 16u);
  }
}

TEST(WordPiece, SpecialTokensInTextAreKeptWhole) {
  const models::WordPieceTokenizer tok = Small({"a", "b", "[", "]", "sep"});
  EXPECT_THAT(Tokens(tok, "[SEP]a[SEP][SEP]b[MASK]"),
              ElementsAre("[SEP]", "a", "[SEP]", "[SEP]", "b", "[MASK]"));
  EXPECT_THAT(Tokens(tok, "[sep] [SE\xffP]"),  // case matters; bad bytes break it
              ElementsAre("[", "sep", "]", "[", "sep", "]"));
  // Without [MASK] in the vocabulary it still stays whole, with [UNK]'s id.
  absl::StatusOr<models::WordPieceTokenizer> no_mask =
      models::WordPieceTokenizer::FromVocab({"[UNK]", "[PAD]", "[CLS]", "[SEP]", "a"});
  ASSERT_TRUE(no_mask.ok()) << no_mask.status();
  EXPECT_THAT(Tokens(*no_mask, "a[MASK]"), ElementsAre("a", "[MASK]"));
  EXPECT_EQ(no_mask->Encode("a[MASK]")->ids, (std::vector<int32_t>{2, 4, 0, 3}));
}

// ICU 72 knows Unicode 15; Python 3.11's unicodedata stops at 14 and drops
// U+1FAE8 (new in 15) as unassigned. Documented in the header.
TEST(WordPiece, CharactersNewerThanPythonsUnicodeAreKept) {
  const models::WordPieceTokenizer tok = Small({"a", "b"});
  EXPECT_THAT(Tokens(tok, "a \xf0\x9f\xab\xa8 b"), ElementsAre("a", "[UNK]", "b"));
}

TEST(WordPiece, EncodeTruncatesAndPads) {
  const models::WordPieceTokenizer tok = Small({"a", "b"});
  EXPECT_EQ(tok.Encode("a b a b", 4)->ids, (std::vector<int32_t>{2, 5, 6, 3}));
  EXPECT_EQ(tok.Encode("a b", 2)->ids, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(tok.Encode("a[SEP]b", 3)->ids, (std::vector<int32_t>{2, 5, 3}));
  absl::StatusOr<std::vector<models::Encoding>> batch = tok.EncodeBatch({"a b a", "", "b"}, 4);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ((*batch)[0].ids, (std::vector<int32_t>{2, 5, 6, 3}));
  EXPECT_EQ((*batch)[1].ids, (std::vector<int32_t>{2, 3, 0, 0}));
  EXPECT_EQ((*batch)[1].attention_mask, (std::vector<int32_t>{1, 1, 0, 0}));
  EXPECT_EQ((*batch)[2].type_ids, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_THAT(*tok.EncodeBatch({}, 8), IsEmpty());
}

// ---- Failure paths ----

std::string WriteTemp(const std::string& name, const std::string& content) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(WordPieceErrors, VocabularyFiles) {
  const std::string specials = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n";
  auto load = [](const std::string& path) {
    return models::WordPieceTokenizer::FromVocabFile(path).status();
  };

  absl::Status s = load("/nonexistent/vocab.txt");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/vocab.txt"));

  const std::string dup = WriteTemp("dup.txt", specials + "a\nb\na\n");
  s = load(dup);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s.message(), HasSubstr(dup + ":7: token 'a' duplicates " + dup + ":5"));

  const std::string blank = WriteTemp("blank.txt", specials + "a\n\nb\n");
  EXPECT_THAT(load(blank).message(), HasSubstr(blank + ":6: empty token"));

  const std::string empty = WriteTemp("empty.txt", "");
  EXPECT_THAT(load(empty).message(), HasSubstr(empty + ": the vocabulary is empty"));

  const std::string bad = WriteTemp("bad.txt", specials + "caf\xc3\n");
  EXPECT_THAT(load(bad).message(), HasSubstr(bad + ":5: token 'caf\\xc3'"));
  EXPECT_THAT(load(bad).message(), HasSubstr("not valid UTF-8"));

  const std::string no_sep = WriteTemp("nosep.txt", "[PAD]\n[UNK]\n[CLS]\na\n");
  s = load(no_sep);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s.message(), HasSubstr(no_sep + ": the vocabulary has no [SEP] token"));

  EXPECT_THAT(load(std::getenv("TEST_TMPDIR")), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(WordPieceErrors, LineEndsAsPythonReadsThem) {
  // LF, CRLF and lone CR each end a line; a final line end adds no token.
  const std::string path = WriteTemp("crlf.txt", "[PAD]\r\n[UNK]\r[CLS]\n[SEP]\r\nx");
  absl::StatusOr<models::WordPieceTokenizer> tok = models::WordPieceTokenizer::FromVocabFile(path);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->vocab_size(), 5u);
  EXPECT_EQ(tok->TokenId("x"), 4);
  EXPECT_EQ(tok->sep_id(), 3);
}

TEST(WordPieceErrors, VocabularyVectorsAndLimits) {
  absl::Status s = models::WordPieceTokenizer::FromVocab({"[PAD]", "[UNK]", "[CLS]"}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s.message(), HasSubstr("vocab: the vocabulary has no [SEP] token"));
  s = models::WordPieceTokenizer::FromVocab({"[PAD]", "x", "[UNK]", "x"}).status();
  EXPECT_THAT(s.message(), HasSubstr("vocab entry 3: token 'x' duplicates vocab entry 1"));
  EXPECT_THAT(models::WordPieceTokenizer::FromVocab({}), StatusIs(absl::StatusCode::kInvalidArgument));
  std::vector<std::string> huge(models::WordPieceTokenizer::kMaxVocabSize + 1);
  EXPECT_THAT(models::WordPieceTokenizer::FromVocab(std::move(huge)),
            StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(WordPieceErrors, InputLimits) {
  const models::WordPieceTokenizer tok = Small({"a"});
  const std::string big(models::WordPieceTokenizer::kMaxTextBytes + 1, 'a');
  EXPECT_THAT(tok.Tokenize(big), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(tok.Encode("a", 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(tok.Encode("a", models::WordPieceTokenizer::kMaxLengthLimit + 1),
            StatusIs(absl::StatusCode::kInvalidArgument));
  absl::Status s = tok.EncodeBatch({"a", big}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(s.message(), HasSubstr("text 1: "));
}

}  // namespace
}  // namespace oneflow_sbp::text
