#include "cli/cmd_parse.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/data_type.h"
#include "io/proto_convert.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/status_macros.h"
#include "proto/sbp_tool.pb.h"
#include "io/message_decode.h"
#include "cli/cli_format.h"

namespace oneflow_sbp::cli {
namespace {

enum class Kind { kNdSbp, kPlacement, kShape, kDType };

Kind Classify(absl::string_view value) {
  const absl::string_view v = absl::StripAsciiWhitespace(value);
  if (ParseDataType(v).ok()) return Kind::kDType;
  // A shape is digits ([10,6] or 10,6); a bracketed list of anything else
  // is a layout written as a list ([Shard(0), Replicate()]).
  if (!v.empty() && absl::ascii_isdigit(v[0])) return Kind::kShape;
  if (!v.empty() && v[0] == '[') {
    const size_t first = v.find_first_not_of("[ ");
    return first == absl::string_view::npos || absl::ascii_isdigit(v[first]) ||
                   v[first] == ']'
               ? Kind::kShape
               : Kind::kNdSbp;
  }
  if (absl::StrContains(v, "device_tag") || absl::StrContains(v, "device_name")) {
    return Kind::kPlacement;
  }
  const size_t colon = v.find(':');
  if (colon != absl::string_view::npos && !absl::StrContains(v, "sbp_parallel")) {
    return Kind::kPlacement;
  }
  return Kind::kNdSbp;
}

// Files each positional value under the option its form names.
absl::Status FilePositionalValues(const std::vector<std::string>& positional, ParseOptions* o) {
  for (const std::string& value : positional) {
    std::optional<std::string>* slot = nullptr;
    const char* what = "";
    switch (Classify(value)) {
      case Kind::kNdSbp: slot = &o->nd_sbp; what = "nd_sbp"; break;
      case Kind::kPlacement: slot = &o->placement; what = "placement"; break;
      case Kind::kShape: slot = &o->shape; what = "shape"; break;
      case Kind::kDType: slot = &o->dtype; what = "dtype"; break;
    }
    // One value of each kind per call: a second one would silently replace
    // the first (and a flag), printing only the last.
    if (slot->has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "two ", what, " values, ", QuotedInput(**slot), " and ", QuotedInput(value),
          "; give one value of each kind per call"));
    }
    *slot = value;
  }
  return absl::OkStatus();
}

// Each Add* parses one value into `result` and appends its line to `text`.

absl::Status AddSbp(const std::string& value, oneflow::ParsedValues* result, std::string* text) {
  OFS_ASSIGN_OR_RETURN(SbpParallel sbp, SbpParallel::Parse(value));
  *result->mutable_sbp() = io::ToProto(sbp);
  result->set_sbp_str(sbp.ToString());
  absl::StrAppend(text, "sbp:       ", sbp.ToString(), "\n");
  return absl::OkStatus();
}

absl::Status AddNdSbp(const std::string& value, bool sbp_given, oneflow::ParsedValues* result,
                      std::string* text) {
  OFS_ASSIGN_OR_RETURN(NdSbp nd, io::DecodeNdSbp(value));
  *result->mutable_nd_sbp() = io::ToProto(nd);
  result->set_nd_sbp_str(nd.ToString());
  if (nd.size() == 1 && !sbp_given) {
    // A 1-entry nd_sbp is also a plain SBP (1-D placements write S(0)).
    *result->mutable_sbp() = io::ToProto((nd)[0]);
    result->set_sbp_str((nd)[0].ToString());
    absl::StrAppend(text, "sbp:       ", (nd)[0].ToString(), "\n");
  }
  absl::StrAppend(text, "nd_sbp:    ", nd.ToString(), "   (long form ", nd.ToLongString(), ", ",
                  nd.size(), nd.size() == 1 ? " mesh axis" : " mesh axes", ")\n");
  return absl::OkStatus();
}

absl::Status AddPlacement(const std::string& value, oneflow::ParsedValues* result,
                          std::string* text) {
  OFS_ASSIGN_OR_RETURN(Placement p, io::DecodePlacement(value));
  *result->mutable_parallel_conf() = io::ToProto(p);
  result->set_placement_str(p.ToString());
  std::string hierarchy;
  for (int i = 0; i < p.num_axes(); ++i) {
    absl::StrAppend(&hierarchy, i ? "," : "", p.hierarchy()[i]);
  }
  absl::StrAppend(text, "placement: ", p.ToString(), "   (", p.parallel_num(),
                  p.parallel_num() == 1 ? " rank" : " ranks", ", hierarchy [", hierarchy, "])\n");
  return absl::OkStatus();
}

absl::Status AddShape(const std::string& value, oneflow::ParsedValues* result, std::string* text) {
  OFS_ASSIGN_OR_RETURN(Shape s, Shape::Parse(value));
  *result->mutable_shape() = io::ToProto(s);
  result->set_shape_str(s.ToString());
  absl::StrAppend(text, "shape:     ", s.ToString(), "   (rank ", s.rank(), ", ", s.elem_cnt(),
                  " elements)\n");
  return absl::OkStatus();
}

absl::Status AddDType(const std::string& value, oneflow::ParsedValues* result, std::string* text) {
  OFS_ASSIGN_OR_RETURN(DataType d, ParseDataType(value));
  result->set_data_type(io::ToProto(d));
  result->set_data_type_str(std::string(DataTypeName(d)));
  absl::StrAppend(text, "dtype:     ", DataTypeName(d), "   (", ByteSizeOf(d), " bytes)\n");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RunParse(const ParseOptions& options) {
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(options.format,
      "text|json|textproto"));

  ParseOptions o = options;
  if (absl::Status s = FilePositionalValues(options.positional, &o); !s.ok()) return s;
  if (!o.sbp && !o.nd_sbp && !o.placement && !o.shape && !o.dtype) {
    return absl::InvalidArgumentError(
        "nothing to parse: give --sbp, --nd_sbp, --placement, --shape, --dtype "
        "or a value, e.g. sbp parse '(S(0), B)' 'cuda:0-7 [2,4]'");
  }

  oneflow::ParsedValues result;
  std::string text;
  absl::Status s;
  if (o.sbp) s = AddSbp(*o.sbp, &result, &text);
  if (s.ok() && o.nd_sbp) s = AddNdSbp(*o.nd_sbp, o.sbp.has_value(), &result, &text);
  if (s.ok() && o.placement) s = AddPlacement(*o.placement, &result, &text);
  if (s.ok() && o.shape) s = AddShape(*o.shape, &result, &text);
  if (s.ok() && o.dtype) s = AddDType(*o.dtype, &result, &text);
  OFS_RETURN_IF_ERROR(s);
  return Render(format, result, text);
}

}  // namespace oneflow_sbp::cli
