#include "tools/cli_format.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "oneflow_sbp/proto_convert.h"
#include "oneflow_sbp/proto_io.h"

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
      "unknown --format '", text, "': this command supports ", allowed));
}

std::string Render(OutputFormat format, const google::protobuf::Message& message,
                   const std::string& text) {
  switch (format) {
    case OutputFormat::kJson:
      return ToJson(message, /*pretty=*/true) + "\n";
    case OutputFormat::kTextProto:
      return ToTextProto(message);
    default:
      return text;
  }
}

namespace {

// JSON objects start with '{'; text-format messages with a field name
// followed by '{' or ':' ("sbp_parallel { ... }", "device_tag: ...").
enum class Encoding { kCompact, kJson, kTextProto };

Encoding Detect(absl::string_view text, absl::string_view first_field) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  if (absl::StartsWith(t, "{")) return Encoding::kJson;
  for (absl::string_view field : absl::StrSplit(first_field, '|')) {
    if (absl::StartsWith(t, field)) return Encoding::kTextProto;
  }
  return Encoding::kCompact;
}

}  // namespace

absl::Status DecodeMessage(absl::string_view text, google::protobuf::Message* message) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  return absl::StartsWith(t, "{") ? FromJson(t, message) : FromTextProto(t, message);
}

absl::StatusOr<NdSbp> DecodeNdSbp(absl::string_view text) {
  if (Detect(text, "sbp_parallel") == Encoding::kCompact) return NdSbp::Parse(text);
  oneflow::NdSbp proto;
  absl::Status s = DecodeMessage(text, &proto);
  if (!s.ok()) return s;
  absl::StatusOr<NdSbp> nd = FromProto(proto);
  if (nd.ok() && nd->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NdSbp message '", text, "' has no sbp_parallel entries; give one per mesh axis"));
  }
  return nd;
}

absl::StatusOr<Placement> DecodePlacement(absl::string_view text) {
  if (Detect(text, "device_name|device_tag|hierarchy") == Encoding::kCompact) {
    return Placement::Parse(text);
  }
  oneflow::ParallelConf proto;
  absl::Status s = DecodeMessage(text, &proto);
  if (!s.ok()) return s;
  return FromProto(proto);
}

}  // namespace oneflow_sbp::cli
