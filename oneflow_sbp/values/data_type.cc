#include "oneflow_sbp/values/data_type.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp {
namespace {

struct DataTypeInfo {
  DataType dtype;
  absl::string_view name;
  int bytes;
};

constexpr DataTypeInfo kInfos[kNumDataTypes] = {
    {DataType::kFloat16, "f16", 2}, {DataType::kBFloat16, "bf16", 2},
    {DataType::kFloat32, "f32", 4}, {DataType::kFloat64, "f64", 8},
    {DataType::kInt8, "i8", 1},     {DataType::kInt32, "i32", 4},
    {DataType::kInt64, "i64", 8},   {DataType::kUInt8, "u8", 1},
    {DataType::kBool, "bool", 1},
};

struct Alias {
  absl::string_view name;
  DataType dtype;
};

constexpr Alias kAliases[] = {
    {"float16", DataType::kFloat16},  {"half", DataType::kFloat16},
    {"bfloat16", DataType::kBFloat16}, {"float32", DataType::kFloat32},
    {"float", DataType::kFloat32},    {"float64", DataType::kFloat64},
    {"double", DataType::kFloat64},   {"int8", DataType::kInt8},
    {"int32", DataType::kInt32},      {"int64", DataType::kInt64},
    {"uint8", DataType::kUInt8},
};

const DataTypeInfo& InfoOf(DataType dtype) {
  return kInfos[static_cast<int>(dtype)];
}

}  // namespace

int ByteSizeOf(DataType dtype) { return InfoOf(dtype).bytes; }

absl::string_view DataTypeName(DataType dtype) { return InfoOf(dtype).name; }

absl::StatusOr<DataType> ParseDataType(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  for (const DataTypeInfo& info : kInfos) {
    if (lower == info.name) return info.dtype;
  }
  for (const Alias& alias : kAliases) {
    if (lower == alias.name) return alias.dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown dtype ", QuotedInput(text),
      ": expected one of f16 bf16 f32 f64 i8 i32 i64 u8 bool"));
}

}  // namespace oneflow_sbp
