#include "io/proto_io.h"

#include <vector>

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
#include "io/json_value.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::io {
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

// Protobuf's JSON reader is lenient: it takes single-quoted strings,
// trailing commas and unquoted keys, keeps the last of two equal keys, and
// reads a nested array ([[1]]) as its elements ([1]) for a repeated field.
// So the text is first read strictly (io/json_value.h: RFC 8259, unique
// keys), then checked, following the message's descriptor, for arrays that
// hold arrays outside google.protobuf.Value, ListValue or Struct (where
// JSON is free-form). Errors give the byte offset; input is not echoed.
class NestedArrayCheck {
 public:
  // Checks `v`, a value of `message`.
  static absl::Status Check(const io::JsonValue& v, const google::protobuf::Descriptor* message) {
    return Value(v, Context{message, nullptr, IsFreeForm(message)});
  }

 private:
  // What a JSON value stands for: a message (fields known), a scalar
  // (message == nullptr), free-form JSON, or a repeated field's array.
  struct Context {
    const google::protobuf::Descriptor* message;
    const google::protobuf::FieldDescriptor* repeated;  // an array of this field
    bool free;
  };

  static bool IsFreeForm(const google::protobuf::Descriptor* d) {
    if (d == nullptr) return false;
    const std::string& n = d->full_name();
    return n == "google.protobuf.Value" || n == "google.protobuf.ListValue" ||
           n == "google.protobuf.Struct";
  }

  static absl::Status Value(const io::JsonValue& v, const Context& ctx) {
    if (ctx.free) return absl::OkStatus();
    if (v.kind == io::JsonValue::kArray) {
      Context element = ctx;  // the elements of a repeated field are values of that field
      element.repeated = nullptr;
      for (const io::JsonValue& e : v.array) {
        if (e.kind == io::JsonValue::kArray) {
          return absl::InvalidArgumentError(absl::StrCat(
              "byte ", e.offset, ": expected ",
              ctx.repeated != nullptr
                  ? absl::StrCat("an element of ", ctx.repeated->name(),
                                 ", not an array (a nested array is not a list)")
                  : std::string("a value, not a nested array")));
        }
        if (absl::Status s = Value(e, element); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    if (v.kind != io::JsonValue::kObject || ctx.message == nullptr) return absl::OkStatus();
    for (const auto& [key, member] : v.object) {
      const google::protobuf::FieldDescriptor* f = ctx.message->FindFieldByName(key);
      if (f == nullptr) f = ctx.message->FindFieldByCamelcaseName(key);
      // A map's object is read as its entry message, whose keys all stand
      // for the entry's value field.
      if (ctx.message->options().map_entry()) f = ctx.message->map_value();
      Context field{nullptr, nullptr, f == nullptr};  // unknown: protobuf's reader says so
      if (f != nullptr) {
        field.message = f->message_type();
        field.free = IsFreeForm(field.message);
        if (f->is_repeated() && !f->is_map()) field.repeated = f;
      }
      if (absl::Status s = Value(member, field); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
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
  absl::StatusOr<io::JsonValue> tree = io::ParseStrictJson(json);
  absl::Status strict = tree.ok() ? NestedArrayCheck::Check(*tree, message->GetDescriptor())
                                  : tree.status();
  if (!strict.ok()) {
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

}  // namespace oneflow_sbp::io