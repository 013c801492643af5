#include "kernels/common/scalar_args.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::kernels {
namespace {

// [lo, hi] of an integer dtype; false for the others.
bool IntegerRange(DataType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DataType::kInt8:
      *lo = std::numeric_limits<int8_t>::lowest();
      *hi = std::numeric_limits<int8_t>::max();
      return true;
    case DataType::kUInt8:
      *lo = 0;
      *hi = std::numeric_limits<uint8_t>::max();
      return true;
    case DataType::kInt32:
      *lo = std::numeric_limits<int32_t>::lowest();
      *hi = std::numeric_limits<int32_t>::max();
      return true;
    case DataType::kInt64:
      *lo = std::numeric_limits<int64_t>::lowest();
      *hi = std::numeric_limits<int64_t>::max();
      return true;
    default: return false;
  }
}

}  // namespace

absl::StatusOr<ScalarOperand> CheckScalarOperand(const KernelContext& ctx, ScalarOp op) {
  ScalarOperand s;
  s.has_int = ctx.Attr<bool>("has_int_operand");
  const bool has_float = ctx.Attr<bool>("has_float_operand");
  s.int_value = ctx.Attr<int64_t>("int_operand");
  s.float_value = ctx.Attr<double>("float_operand");
  if (!s.has_int && !has_float) {
    return ctx.InvalidArgument("neither has_int_operand nor has_float_operand is set");
  }
  const DataType t = ctx.input(0).dtype();
  int64_t lo = 0, hi = 0;
  if (!IntegerRange(t, &lo, &hi)) return s;
  if (!s.has_int) {
    return ctx.Unimplemented(absl::StrCat(
        "float operand ", s.float_value, " on the integer tensor ", ctx.input_bn(0), " (",
        DataTypeName(t), "): the result would need a floating dtype; cast first"));
  }
  if (s.int_value < lo || s.int_value > hi) {
    return ctx.InvalidArgument(
        absl::StrCat("int_operand ", s.int_value, " does not fit ", DataTypeName(t)));
  }
  if (s.int_value == 0 && (op == ScalarOp::kFloorDiv || op == ScalarOp::kFmod)) {
    return ctx.InvalidArgument("integer division by int_operand 0");
  }
  if (s.int_value < 0 && op == ScalarOp::kPow) {
    return ctx.InvalidArgument(
        absl::StrCat("integer power with the negative exponent int_operand ", s.int_value));
  }
  return s;
}

}  // namespace oneflow_sbp::kernels
