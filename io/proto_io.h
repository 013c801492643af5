// Text encodings of protobuf messages: JSON (proto field names, as OneFlow's
// dumps spell them) and protobuf text format.
//
// Example:
//   std::string json = ToJson(ToProto(nd_sbp));
//   // {"sbp_parallel":[{"split_parallel":{"axis":"0"}},{"broadcast_parallel":{}}]}
//   oneflow::NdSbp parsed;
//   absl::Status s = FromJson(json, &parsed);
//
// Parsing never aborts: malformed input is kInvalidArgument carrying the
// parser's own message (line and column for text format). JSON is read
// strictly (RFC 8259: double quotes only, no trailing commas, no comments),
// and an array may hold an array only inside google.protobuf.Value,
// ListValue or Struct: protobuf alone would read [[1]] as [1].
#ifndef IO_PROTO_IO_H_
#define IO_PROTO_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace oneflow_sbp::io {

// One line unless `pretty`, which breaks lines and indents (protobuf's
// layout: one space per level).
std::string ToJson(const google::protobuf::Message& message, bool pretty = false);
// JSON nested deeper than this (objects and arrays, counted together) is
// refused before conversion, in one linear scan: protobuf's converter
// aborts or slows down on deep google.protobuf.Value trees (program attrs).
inline constexpr int kMaxJsonDepth = 32;
// kInvalidArgument for malformed JSON, or nesting deeper than kMaxJsonDepth.
absl::Status FromJson(absl::string_view json, google::protobuf::Message* message);

std::string ToTextProto(const google::protobuf::Message& message);
absl::Status FromTextProto(absl::string_view text,
                           google::protobuf::Message* message);

}  // namespace oneflow_sbp::io
#endif  // IO_PROTO_IO_H_
