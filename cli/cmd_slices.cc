#include "cli/cmd_slices.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/data_type.h"
#include "io/proto_convert.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "io/message_decode.h"
#include "cli/cli_format.h"

namespace oneflow_sbp::cli {
namespace {

absl::Status Required(const std::string& value, absl::string_view flag,
                      absl::string_view example) {
  if (!value.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " is required, e.g. --", flag, "=", example));
}

}  // namespace

absl::StatusOr<std::string> RunSlices(const SlicesOptions& options) {
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(options.format,
      "text|json|textproto"));
  for (absl::Status s : {Required(options.shape, "shape", "10,6"),
                         Required(options.placement, "placement", "'cpu:0-3 [2,2]'"),
                         Required(options.nd_sbp, "nd_sbp", "'(S(0),S(1))'")}) {
    OFS_RETURN_IF_ERROR(s);
  }
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Parse(options.shape));
  OFS_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(options.dtype));
  OFS_ASSIGN_OR_RETURN(Placement placement, io::DecodePlacement(options.placement));
  OFS_ASSIGN_OR_RETURN(NdSbp nd_sbp, io::DecodeNdSbp(options.nd_sbp));
  OFS_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(shape, ByteSizeOf(dtype)));
  OFS_ASSIGN_OR_RETURN(std::vector<TensorSlice> slices, AllRankSlices(shape, nd_sbp, placement));

  std::string text = absl::StrCat(
      DataTypeName(dtype), shape.ToString(), " (", bytes, " bytes) as ",
      nd_sbp.ToString(), " on ", placement.ToString(), "\n");
  if (nd_sbp.any_partial()) {
    absl::StrAppend(&text,
                    "partial: every rank holds an addend of its range; the "
                    "logical value is their ",
                    PartialKindName(*nd_sbp.partial_kind()), "\n");
  }
  const std::string header = absl::StrFormat("%-11s %-5s %-8s %-24s %8s %10s\n",
                                             "parallel_id", "rank", "coord",
                                             "slice", "elems", "bytes");
  absl::StrAppend(&text, header);
  for (int64_t id = 0; id < placement.parallel_num(); ++id) {
    const TensorSlice& s = (slices)[id];
    const std::string coord =
        absl::StrCat("(", absl::StrJoin(placement.CoordinateOf(id), ","), ")");
    absl::StrAppend(
        &text, absl::StrFormat("%-11d %-5d %-8s %-24s %8d %10d%s\n", id,
                               placement.RankOf(id), coord, s.ToString(),
                               s.elem_cnt(), s.elem_cnt() * ByteSizeOf(dtype),
                               s.elem_cnt() == 0 ? "  (empty)" : ""));
  }
  return Render(format, io::ToProto(shape, dtype, nd_sbp, placement, slices), text);
}

}  // namespace oneflow_sbp::cli
