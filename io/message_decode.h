// Decoding values and messages given as text: the compact forms
// ("(S(0), B)", "cpu:0-3 [2,2]"), or the proto message as a JSON object
// ("{...}") or in text format. The `sbp` tool reads every --nd_sbp,
// --placement and --request through these.
//
//   DecodeNdSbp("(S(0), B)");
//   DecodeNdSbp(R"({"sbp_parallel":[{"split_parallel":{"axis":0}}]})");
//   DecodePlacement("device_tag: \"cpu\" device_name: \"0:0-3\"");
#ifndef IO_MESSAGE_DECODE_H_
#define IO_MESSAGE_DECODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::io {

// A JSON object ("{...}") or, otherwise, text format.
absl::Status DecodeMessage(absl::string_view text, google::protobuf::Message* message);

// Compact string, JSON object ("{...}") or text-format NdSbp message.
absl::StatusOr<NdSbp> DecodeNdSbp(absl::string_view text);
// Compact string, JSON object or text-format ParallelConf message.
absl::StatusOr<Placement> DecodePlacement(absl::string_view text);

}  // namespace oneflow_sbp::io
#endif  // IO_MESSAGE_DECODE_H_
