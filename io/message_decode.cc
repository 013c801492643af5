#include "io/message_decode.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "io/proto_convert.h"
#include "io/proto_io.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "proto/placement.pb.h"
#include "proto/sbp_parallel.pb.h"

namespace oneflow_sbp::io {

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
  OFS_RETURN_IF_ERROR(s);
  absl::StatusOr<NdSbp> nd = FromProto(proto);
  if (nd.ok() && nd->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NdSbp message ", QuotedInput(text), " has no sbp_parallel entries; give one per mesh axis"));
  }
  // FromProto keeps an empty SbpParallel as "unset" (a free axis of a
  // constraint); a layout given by the user must say what every axis holds.
  for (int i = 0; nd.ok() && i < nd->size(); ++i) {
    if (!(*nd)[i].is_unset()) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "NdSbp message ", QuotedInput(text), ": sbp_parallel[", i,
        "] sets none of split_parallel, broadcast_parallel, partial_sum_parallel, "
        "partial_max_parallel, partial_min_parallel"));
  }
  return nd;
}

absl::StatusOr<Placement> DecodePlacement(absl::string_view text) {
  if (Detect(text, "device_name|device_tag|hierarchy") == Encoding::kCompact) {
    return Placement::Parse(text);
  }
  oneflow::ParallelConf proto;
  absl::Status s = DecodeMessage(text, &proto);
  OFS_RETURN_IF_ERROR(s);
  return FromProto(proto);
}

}  // namespace oneflow_sbp::io