#include "io/proto_io.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include <memory>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "oneflow_sbp/check.h"
#include "oneflow_sbp/quoted_input.h"

namespace oneflow_sbp {
namespace {

class CollectingErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(absl::StrCat("line ", line + 1, " column ", column + 1,
                                   ": ", message));
  }
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::vector<std::string> errors_;
};

// The offset where `json` first nests deeper than `max_depth`, or -1.
// Brackets inside strings do not count.
int64_t TooDeepAt(absl::string_view json, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return static_cast<int64_t>(i);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return -1;
}

// A strict RFC 8259 reader run before protobuf's, which is lenient: it
// takes single-quoted strings, trailing commas and unquoted keys, and reads
// a nested array ([[1]]) as its elements ([1]) for a repeated field. This
// one checks the syntax and, following the message's descriptor, that an
// array holds no array except under google.protobuf.Value, ListValue or
// Struct (where JSON is free-form). Errors say the byte offset and what was
// expected; the input itself is not echoed.
class StrictJson {
 public:
  explicit StrictJson(absl::string_view text) : text_(text) {}

  absl::Status Check(const google::protobuf::Descriptor* message) {
    Value(Context{message, nullptr, IsFreeForm(message)}, 0);
    SkipSpace();
    if (error_.empty() && pos_ != text_.size()) Fail("end of input");
    if (error_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(error_);
  }

 private:
  // What a JSON value stands for: a message (fields known), free-form JSON
  // (message == nullptr, free), or a repeated field's array.
  struct Context {
    const google::protobuf::Descriptor* message;
    const google::protobuf::FieldDescriptor* repeated;  // an array of this field
    bool free;
  };
  static constexpr int kMaxDepth = 100;  // protobuf's own recursion limit

  static bool IsFreeForm(const google::protobuf::Descriptor* d) {
    if (d == nullptr) return false;
    const std::string& n = d->full_name();
    return n == "google.protobuf.Value" || n == "google.protobuf.ListValue" ||
           n == "google.protobuf.Struct";
  }
  // The context of one value of `field` (an element, for a repeated one).
  static Context OfField(const google::protobuf::FieldDescriptor* field) {
    if (field == nullptr) return Context{nullptr, nullptr, true};  // unknown: protobuf says
    // A map's object holds its values: Object() looks them up through the
    // entry's value field.
    const google::protobuf::Descriptor* m = field->message_type();
    if (IsFreeForm(m)) return Context{nullptr, nullptr, true};
    return Context{m, nullptr, false};
  }

  void Fail(absl::string_view expected) {
    if (!error_.empty()) return;
    error_ = absl::StrCat("byte ", pos_, ": expected ", expected);
    if (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      absl::StrAppend(&error_, c >= 0x20 && c < 0x7f ? absl::StrCat(", got '", text_.substr(pos_, 1), "'")
                                                    : absl::StrCat(", got byte ", c));
    } else {
      absl::StrAppend(&error_, ", got the end of input");
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

  void Value(const Context& ctx, int depth) {
    if (!error_.empty()) return;
    if (depth > kMaxDepth) return Fail(absl::StrCat("at most ", kMaxDepth, " levels of nesting"));
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("a value");
    const char c = text_[pos_];
    if (c == '{') return Object(ctx, depth);
    if (c == '[') return Array(ctx, depth);
    if (c == '"') return String(nullptr);
    if (c == '-' || (c >= '0' && c <= '9')) return Number();
    for (absl::string_view word : {"true", "false", "null"}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return;
      }
    }
    Fail("a value (a double-quoted string, a number, an object, an array, true, false or null)");
  }

  void Object(const Context& ctx, int depth) {
    ++pos_;  // {
    if (Eat('}')) return;
    do {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("a double-quoted key");
      std::string key;
      String(&key);
      if (!error_.empty()) return;
      if (!Eat(':')) return Fail("':' after a key");
      Context field_ctx{nullptr, nullptr, true};
      if (!ctx.free && ctx.message != nullptr) {
        const google::protobuf::FieldDescriptor* f = ctx.message->FindFieldByName(key);
        if (f == nullptr) f = ctx.message->FindFieldByCamelcaseName(key);
        if (ctx.message->options().map_entry()) f = ctx.message->map_value();  // a map's values
        field_ctx = OfField(f);
        if (f != nullptr && f->is_repeated() && !f->is_map()) field_ctx.repeated = f;
      }
      Value(field_ctx, depth + 1);
      if (!error_.empty()) return;
    } while (Eat(','));
    if (!Eat('}')) Fail("',' or '}' in an object (no trailing comma)");
  }

  void Array(const Context& ctx, int depth) {
    ++pos_;  // [
    if (Eat(']')) return;
    do {
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '[' && !ctx.free) {
        return Fail(ctx.repeated != nullptr
                        ? absl::StrCat("an element of ", ctx.repeated->name(),
                                       ", not an array (a nested array is not a list)")
                        : std::string("a value, not a nested array"));
      }
      // The elements of a repeated field are values of that field.
      Context element = ctx;
      element.repeated = nullptr;
      Value(element, depth + 1);
      if (!error_.empty()) return;
    } while (Eat(','));
    if (!Eat(']')) Fail("',' or ']' in an array (no trailing comma)");
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
      if (c == '\\') {
        ++pos_;
        if (pos_ >= text_.size()) break;
        const char e = text_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (pos_ + i >= text_.size() || !absl::ascii_isxdigit(text_[pos_ + i])) {
              pos_ += i;
              return Fail("four hex digits after \\u");
            }
          }
          pos_ += 5;
          if (out != nullptr) out->push_back('?');  // keys are matched as ASCII names
          continue;
        }
        if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return Fail("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
        }
      }
      if (out != nullptr) out->push_back(static_cast<char>(c));
      ++pos_;
    }
    Fail("the closing '\"' of a string");
  }

  void Number() {
    auto digits = [&] {
      const size_t start = pos_;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
      return pos_ > start;
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
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

// MessageToJsonString serializes the message with the process default,
// which writes map entries in hash order (different on every run); this
// serializes deterministically (map entries sorted by key) and converts the
// same bytes, so the JSON of a message is the same on every run.
std::string ToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = pretty;
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    OFS_CHECK(message.SerializeToCodedStream(&coded));
  }
  constexpr char kUrlPrefix[] = "type.googleapis.com";
  std::unique_ptr<google::protobuf::util::TypeResolver> resolver(
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          kUrlPrefix, message.GetDescriptor()->file()->pool()));
  std::string out;
  const auto status = google::protobuf::util::BinaryToJsonString(
      resolver.get(), absl::StrCat(kUrlPrefix, "/", message.GetDescriptor()->full_name()), bytes,
      &out, options);
  OFS_CHECK(status.ok()) << status.ToString();
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

absl::Status FromJson(absl::string_view json, google::protobuf::Message* message) {
  if (const int64_t at = TooDeepAt(json, kMaxJsonDepth); at >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON for ", message->GetTypeName(), ": nested more than ", kMaxJsonDepth,
        " levels deep at byte ", at, "; flatten the value"));
  }
  if (absl::Status strict = StrictJson(json).Check(message->GetDescriptor()); !strict.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON for ", message->GetTypeName(),
                                                   ": ", strict.message()));
  }
  google::protobuf::util::JsonParseOptions options;
  const auto status = google::protobuf::util::JsonStringToMessage(
      std::string(json), message, options);
  if (!status.ok()) {
    // Protobuf appends the input around the error position on further
    // lines; keep the first line so every error stays one line.
    std::string reason(status.message());
    reason = reason.substr(0, reason.find('\n'));
    // Errors at the top level come with an empty field path (": missing
    // field x"); drop the dangling separator.
    while (!reason.empty() && (reason.front() == ':' || reason.front() == ' ')) reason.erase(0, 1);
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON for ", message->GetTypeName(), ": ", Abbreviated(reason)));
  }
  return absl::OkStatus();
}

std::string ToTextProto(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(message, &out);
  return out;
}

absl::Status FromTextProto(absl::string_view text,
                           google::protobuf::Message* message) {
  CollectingErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), message)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed text proto for ", message->GetTypeName(), ": ",
        Abbreviated(errors.Joined())));
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp
