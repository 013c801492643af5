#include "cli/cli_format.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "io/json_string.h"
#include "io/proto_io.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::cli {

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text,
                                               absl::string_view allowed) {
  struct Named {
    absl::string_view name;
    OutputFormat format;
  };
  constexpr Named kNames[] = {{"text", OutputFormat::kText},
                              {"json", OutputFormat::kJson},
                              {"textproto", OutputFormat::kTextProto},
                              {"table", OutputFormat::kTable},
                              {"dot", OutputFormat::kDot}};
  const std::vector<absl::string_view> ok = absl::StrSplit(allowed, '|');
  for (const Named& n : kNames) {
    if (n.name != text) continue;
    for (absl::string_view a : ok) {
      if (a == text) return n.format;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --format ", QuotedInput(text), ": this command supports ", allowed));
}

std::string Render(OutputFormat format, const google::protobuf::Message& message,
                   const std::string& text) {
  switch (format) {
    case OutputFormat::kJson:
      return io::ToJson(message, /*pretty=*/true) + "\n";
    case OutputFormat::kTextProto:
      return io::ToTextProto(message);
    default:
      return text;
  }
}

std::string JsonQuote(absl::string_view s) { return io::JsonString(s); }

}  // namespace oneflow_sbp::cli
