// Element types of logical tensors and their byte sizes.
//
// Example:
//   absl::StatusOr<DataType> dt = ParseDataType("bf16");   // DataType::kBFloat16
//   ByteSizeOf(*dt);                                       // 2
//   DataTypeName(*dt);                                     // "bf16"
//
// Short names are what the `sbp` tool and error messages use: f16 bf16 f32
// f64 i8 i32 i64 u8 bool. The proto enum (proto/data_type.proto) keeps
// OneFlow's names; see proto_convert.h for the mapping.
#ifndef ONEFLOW_SBP_VALUES_DATA_TYPE_H_
#define ONEFLOW_SBP_VALUES_DATA_TYPE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp {

enum class DataType : uint8_t {
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kInt8,
  kInt32,
  kInt64,
  kUInt8,
  kBool,
};

inline constexpr int kNumDataTypes = 9;

// Bytes per element: 2 for f16/bf16, 4 for f32/i32, 8 for f64/i64, 1 for
// i8/u8/bool (SPEC.md §1.7).
int ByteSizeOf(DataType dtype);

// "f32", "bf16", ... Never empty.
absl::string_view DataTypeName(DataType dtype);

// Accepts the short names above and a few common spellings ("float32",
// "float", "half", "bfloat16", "int64", ...). Anything else is
// kInvalidArgument naming the bad value and listing the accepted names.
absl::StatusOr<DataType> ParseDataType(absl::string_view text);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_DATA_TYPE_H_
