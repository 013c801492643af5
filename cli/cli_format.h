// Output formats and input decoding shared by the `sbp` subcommands.
//
// Every subcommand produces a result message and a human text rendering;
// --format picks one: text (default), json (proto field names), textproto,
// plus command-specific formats (table, dot) handled by the command.
// Values on the command line are decoded by io/message_decode.h.
#ifndef CLI_CLI_FORMAT_H_
#define CLI_CLI_FORMAT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace oneflow_sbp::cli {

enum class OutputFormat { kText, kJson, kTextProto, kTable, kDot };

// "text", "json", "textproto", "table", "dot". `allowed` lists the formats
// the command supports, e.g. "text|json|textproto"; others are errors that
// say which formats the command has.
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text,
                                               absl::string_view allowed);

// Renders `message` for kJson (pretty) and kTextProto; `text` for kText.
std::string Render(OutputFormat format, const google::protobuf::Message& message,
                   const std::string& text);

// `s` as a JSON string literal, quotes included, for the reports written as
// JSON by hand rather than through a message (verify, demo).
std::string JsonQuote(absl::string_view s);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CLI_FORMAT_H_
