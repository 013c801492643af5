// A strict JSON document reader for files whose keys are data, not field
// names: the safetensors header (tensor names as keys) and the checkpoint
// index. Protobuf's JSON reader, used before, is lenient (single quotes,
// trailing commas, unquoted keys) and, reading into a google.protobuf
// Struct, keeps the last of two equal keys, so a header with two entries
// for one tensor name was read as one of them, silently.
//
// Example:
//   absl::StatusOr<JsonValue> doc = ParseStrictJson(R"({"a": [1, 2]})");
//   const JsonValue* a = doc->Find("a");  // a->kind == JsonValue::kArray
//
// The grammar is RFC 8259's: double-quoted strings with valid escapes, no
// trailing commas, comments or unquoted keys, nothing after the value.
// Beyond it: strings must be valid UTF-8 (escaped surrogates must pair), an
// object may not repeat a key, and nesting is bounded at kMaxJsonDocDepth
// levels (objects and arrays together). Errors are kInvalidArgument with
// the byte offset and what was expected there ("byte 17: expected ',' or
// '}' in an object (no trailing comma), got ']'"); a repeated key is named
// through QuotedInput. The reader recurses at most kMaxJsonDocDepth deep.
#ifndef IO_JSON_VALUE_H_
#define IO_JSON_VALUE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp::io {

// The same bound as the program reader's (kMaxJsonDepth in io/proto_io.h).
inline constexpr int kMaxJsonDocDepth = 32;

struct JsonValue {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind = kNull;
  size_t offset = 0;  // the byte where the value starts, for messages
  bool boolean = false;
  double number = 0;  // JSON numbers are doubles, as in every reader of these files
  std::string string;
  std::vector<JsonValue> array;
  // In document order; keys are unique (the reader refuses repeats).
  std::vector<std::pair<std::string, JsonValue>> object;

  // The member named `key` of an object; nullptr if absent or not an object.
  const JsonValue* Find(absl::string_view key) const;
  // "null", "a boolean", "a number", "a string", "an array", "an object".
  static absl::string_view KindName(Kind kind);
};

absl::StatusOr<JsonValue> ParseStrictJson(absl::string_view text);

}  // namespace oneflow_sbp::io

#endif  // IO_JSON_VALUE_H_
