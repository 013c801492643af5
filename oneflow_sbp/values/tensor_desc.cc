#include "oneflow_sbp/values/tensor_desc.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

std::string TensorDesc::ToString() const {
  return absl::StrCat(DataTypeName(dtype), shape.ToString());
}

absl::StatusOr<TensorDesc> TensorDesc::Parse(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  const size_t bracket = t.find('[');
  if (bracket == absl::string_view::npos || t.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed tensor ", QuotedInput(text), ": expected <dtype>[<dims>], e.g. f32[64,32]"));
  }
  OFS_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(t.substr(0, bracket)));
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Parse(t.substr(bracket)));
  OFS_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(shape, ByteSizeOf(dtype)));
  return TensorDesc{std::move(shape), dtype};
}

}  // namespace oneflow_sbp
