// JsonString: a JSON string literal (quotes and escapes), for the files and
// reports written by hand rather than through protobuf (safetensors
// headers, checkpoint indexes, the tool's JSON output).
#ifndef IO_JSON_STRING_H_
#define IO_JSON_STRING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace oneflow_sbp::io {

// "\"a\\\"b\"" for a"b; control characters as \n, \t or \u00XX.
std::string JsonString(absl::string_view s);

}  // namespace oneflow_sbp::io

#endif  // IO_JSON_STRING_H_
