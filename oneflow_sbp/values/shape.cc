#include "oneflow_sbp/values/shape.h"

#include <limits>
#include <vector>

#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace oneflow_sbp {

Shape::Shape(std::initializer_list<int64_t> dims) {
  absl::StatusOr<Shape> made = Make(absl::MakeConstSpan(dims.begin(), dims.size()));
  OFS_CHECK(made.ok()) << made.status().message();
  *this = *std::move(made);
}

absl::StatusOr<Shape> Shape::Make(absl::Span<const int64_t> dims) {
  if (dims.size() > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape [", absl::StrJoin(dims, ","), "] has rank ",
                     dims.size(), ", more than the supported ", kMaxRank));
  }
  Shape shape;
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape [", absl::StrJoin(dims, ","), "]: extent ", d, " at dim ", i,
          d == 0 ? " (empty tensors are not supported)" : "",
          "; every extent must be >= 1"));
    }
    if (count > std::numeric_limits<int64_t>::max() / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape [", absl::StrJoin(dims, ","),
                       "]: element count overflows int64"));
    }
    count *= d;
    shape.dims_.push_back(d);
  }
  shape.elem_cnt_ = count;
  return shape;
}

absl::StatusOr<Shape> Shape::Parse(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  if (body.empty()) {
    // An empty --shape is a mistake far more often than a scalar.
    return absl::InvalidArgumentError(
        "empty shape: write extents as 10,6 or [10,6], and a scalar as []");
  }
  if (absl::ConsumePrefix(&body, "[")) {
    if (!absl::ConsumeSuffix(&body, "]")) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed shape ", QuotedInput(text), ": missing ']'"));
    }
  } else if (absl::ConsumePrefix(&body, "(")) {
    if (!absl::ConsumeSuffix(&body, ")")) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed shape ", QuotedInput(text), ": missing ')'"));
    }
  }
  body = absl::StripAsciiWhitespace(body);
  std::vector<int64_t> dims;
  if (!body.empty()) {
    const std::vector<absl::string_view> pieces = absl::StrSplit(body, ',');
    if (pieces.size() > static_cast<size_t>(kMaxRank)) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", QuotedInput(text), " has rank ", pieces.size(),
                       ", more than the supported ", kMaxRank));
    }
    for (absl::string_view piece : pieces) {
      piece = absl::StripAsciiWhitespace(piece);
      int64_t d = 0;
      if (absl::SimpleAtoi(piece, &d)) {
        dims.push_back(d);
        continue;
      }
      bool digits = !piece.empty();
      for (char c : absl::StripPrefix(piece, "-")) digits = digits && absl::ascii_isdigit(c);
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed shape ", QuotedInput(text), ": ", QuotedInput(piece),
          digits ? " is too large for an extent (at most 2^63-1)"
                 : " is not an integer extent (write e.g. 10,6 or [10,6])"));
    }
  }
  return Make(dims);
}

std::string Shape::ToString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

absl::StatusOr<int64_t> CheckedByteSize(const Shape& shape, int bytes_per_elem) {
  if (shape.elem_cnt() > std::numeric_limits<int64_t>::max() / bytes_per_elem) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape ", shape.ToString(), " x ", bytes_per_elem,
        " bytes per element overflows int64"));
  }
  return shape.elem_cnt() * bytes_per_elem;
}

}  // namespace oneflow_sbp
