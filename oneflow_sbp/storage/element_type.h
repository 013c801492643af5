// C++ element types of the DataTypes, and a visitor that turns a runtime
// DataType into a compile-time type.
//
// Example:
//   static_assert(kDataTypeOf<float> == DataType::kFloat32);
//   VisitDataType(DataType::kBFloat16, [&](auto tag) {
//     using T = typename decltype(tag)::type;   // Eigen::bfloat16
//     ...
//   });
//
// Mapping (one C++ type per DataType, and back):
//   f16 Eigen::half   bf16 Eigen::bfloat16   f32 float   f64 double
//   i8 int8_t   i32 int32_t   i64 int64_t   u8 uint8_t   bool bool
// Eigen's half types are 2-byte values with float conversions; arithmetic
// on them is done in float (ComputeType). Every other type computes in
// itself.
#ifndef ONEFLOW_SBP_STORAGE_ELEMENT_TYPE_H_
#define ONEFLOW_SBP_STORAGE_ELEMENT_TYPE_H_

#include <cstdint>
#include <limits>
#include <type_traits>

#include "Eigen/Core"
#include "oneflow_sbp/values/data_type.h"

namespace oneflow_sbp {

// A value standing for the type T, passed to visitors.
template <typename T>
struct TypeTag {
  using type = T;
};

template <typename T>
struct DataTypeOf;  // undefined for unsupported element types
template <> struct DataTypeOf<Eigen::half> { static constexpr DataType value = DataType::kFloat16; };
template <> struct DataTypeOf<Eigen::bfloat16> { static constexpr DataType value = DataType::kBFloat16; };
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::kFloat32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::kFloat64; };
template <> struct DataTypeOf<int8_t> { static constexpr DataType value = DataType::kInt8; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = DataType::kInt64; };
template <> struct DataTypeOf<uint8_t> { static constexpr DataType value = DataType::kUInt8; };
template <> struct DataTypeOf<bool> { static constexpr DataType value = DataType::kBool; };

template <typename T>
inline constexpr DataType kDataTypeOf = DataTypeOf<T>::value;

// True for Eigen::half and Eigen::bfloat16.
template <typename T>
inline constexpr bool kIsHalfType =
    std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

// The type arithmetic on T is done in: float for the half types, T itself
// otherwise.
template <typename T>
using ComputeType = std::conditional_t<kIsHalfType<T>, float, T>;

// Calls f(TypeTag<T>{}) with the element type of `dtype` and returns what
// f returns. f must accept a tag of every one of the nine types (use
// `if constexpr` to exclude some); every DataType value is handled.
template <typename F>
decltype(auto) VisitDataType(DataType dtype, F&& f) {
  switch (dtype) {
    case DataType::kFloat16: return f(TypeTag<Eigen::half>{});
    case DataType::kBFloat16: return f(TypeTag<Eigen::bfloat16>{});
    case DataType::kFloat32: return f(TypeTag<float>{});
    case DataType::kFloat64: return f(TypeTag<double>{});
    case DataType::kInt8: return f(TypeTag<int8_t>{});
    case DataType::kInt32: return f(TypeTag<int32_t>{});
    case DataType::kInt64: return f(TypeTag<int64_t>{});
    case DataType::kUInt8: return f(TypeTag<uint8_t>{});
    case DataType::kBool: break;
  }
  return f(TypeTag<bool>{});
}

// Value conversions that never invoke undefined behaviour: NaN becomes 0
// in integer types, out-of-range values saturate, anything nonzero is
// true. Half types go through float.
template <typename To, typename From>
To ConvertElement(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsHalfType<From>) {
    return ConvertElement<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsHalfType<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(v == v)) return To(0);
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::lowest());
    // max() may round up when converted (2^63 - 1 -> 2^63); compare with >=.
    constexpr From hi = static_cast<From>(std::numeric_limits<To>::max());
    if (v <= lo) return std::numeric_limits<To>::lowest();
    if (v >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_STORAGE_ELEMENT_TYPE_H_
