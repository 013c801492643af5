// Fuzz target: the string parsers users type into (nd_sbp, sbp_parallel,
// placement, shape, dtype, attribute values), plus a layout made of three
// parsed lines, whose rank slices must tile the tensor.
//
// Input: byte 0 picks the parser; the rest is the text. For the layout
// case the text is "shape\nnd_sbp\nplacement".
// Properties: no crash; errors are never kInternal; a parsed value prints
// to text that parses back to the same value; slices tile exactly.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/sbp_parallel.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::fuzz {
namespace {

// Parses `text`, and if that works, checks that ToString parses back to the
// same value.
template <typename T, typename ParseFn>
void RoundTrip(absl::string_view text, ParseFn parse, const char* what) {
  absl::StatusOr<T> v = parse(text);
  CheckNotInternal(v.status(), what);
  if (!v.ok()) return;
  const std::string printed = v->ToString();
  absl::StatusOr<T> again = parse(printed);
  FUZZ_CHECK(again.ok(), absl::StrCat(what, " '", printed, "' does not parse back: ",
                                      again.status().ToString()));
  FUZZ_CHECK(*again == *v, absl::StrCat(what, " '", printed, "' parses to another value"));
}

void FuzzOne(FuzzInput& in) {
  const uint8_t which = in.Byte() % 8;
  switch (which) {
    case 0:
      RoundTrip<NdSbp>(in.Rest(), NdSbp::Parse, "NdSbp");
      break;
    case 1:
      RoundTrip<SbpParallel>(in.Rest(), SbpParallel::Parse, "SbpParallel");
      break;
    case 2:
      RoundTrip<Placement>(in.Rest(), Placement::Parse, "Placement");
      break;
    case 3:
      RoundTrip<Shape>(in.Rest(), Shape::Parse, "Shape");
      break;
    case 4: {
      absl::StatusOr<DataType> dt = ParseDataType(in.Rest());
      CheckNotInternal(dt.status(), "ParseDataType");
      if (dt.ok()) {
        absl::StatusOr<DataType> again = ParseDataType(DataTypeName(*dt));
        FUZZ_CHECK(again.ok() && *again == *dt, std::string(DataTypeName(*dt)));
      }
      break;
    }
    case 5:
    case 6: {
      const AttrType type = static_cast<AttrType>(in.Byte() % 5);
      const absl::string_view text = in.Rest();
      absl::StatusOr<AttrValue> v = ParseAttrValue(type, text);
      CheckNotInternal(v.status(), "ParseAttrValue");
      // Floats print rounded, so only exact types must round-trip.
      if (v.ok() && type != AttrType::kFloat) {
        absl::StatusOr<AttrValue> again = ParseAttrValue(type, v->ToString());
        FUZZ_CHECK(again.ok() && *again == *v,
                   absl::StrCat(AttrTypeName(type), " '", v->ToString(), "'"));
      }
      break;
    }
    case 7: {
      absl::StatusOr<Shape> shape = Shape::Parse(in.Line());
      absl::StatusOr<NdSbp> nd = NdSbp::Parse(in.Line());
      absl::StatusOr<Placement> placement = Placement::Parse(in.Rest());
      if (shape.ok() && nd.ok() && placement.ok()) CheckSlicesTile(*shape, *nd, *placement);
      break;
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
