// Dtype dispatch inside kernels: run a generic body for the element type of
// a runtime DataType, limited to the types a kernel supports, and report
// the rest as kUnimplemented naming the op and the dtype.
//
// Example:
//   using Types = DtypeConcat<FloatTypes, HalfTypes, IntTypes>;
//   return DispatchDtype<Types>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ... x.data<T>() ...
//     return absl::OkStatus();
//   });
//   DtypesOf(Types{});   // {f32, f64, f16, bf16, i32, i64}: for registration
//
// The body receives TypeTag<T> (element_type.h) and returns absl::Status.
#ifndef KERNELS_DTYPE_DISPATCH_H_
#define KERNELS_DTYPE_DISPATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/storage/element_type.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

template <typename... Ts>
struct DtypeList {};

using FloatTypes = DtypeList<float, double>;
using HalfTypes = DtypeList<Eigen::half, Eigen::bfloat16>;
using IntTypes = DtypeList<int32_t, int64_t>;
using BoolType = DtypeList<bool>;
// Every element type; for kernels that only move bytes.
using AllTypes = DtypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int32_t,
                           int64_t, uint8_t, bool>;

namespace internal {
template <typename... Lists>
struct Concat;
template <>
struct Concat<> {
  using type = DtypeList<>;
};
template <typename... Ts>
struct Concat<DtypeList<Ts...>> {
  using type = DtypeList<Ts...>;
};
template <typename... As, typename... Bs, typename... Rest>
struct Concat<DtypeList<As...>, DtypeList<Bs...>, Rest...> {
  using type = typename Concat<DtypeList<As..., Bs...>, Rest...>::type;
};
}  // namespace internal

// The concatenation of several DtypeLists.
template <typename... Lists>
using DtypeConcat = typename internal::Concat<Lists...>::type;

// The DataTypes of a list, in list order.
template <typename... Ts>
std::vector<DataType> DtypesOf(DtypeList<Ts...>) {
  return {kDataTypeOf<Ts>...};
}

// True if `dtype` is in the list.
template <typename... Ts>
bool InDtypeList(DtypeList<Ts...>, DataType dtype) {
  return ((dtype == kDataTypeOf<Ts>) || ...);
}

namespace internal {
template <typename... Ts, typename Body>
absl::Status DispatchIn(DtypeList<Ts...>, const KernelContext& ctx, DataType dtype,
                        absl::string_view bn, Body& body) {
  absl::Status result;
  const bool found =
      ((dtype == kDataTypeOf<Ts> ? (result = body(TypeTag<Ts>{}), true) : false) || ...);
  return found ? result : ctx.UnsupportedDtype(dtype, bn);
}
}  // namespace internal

// Calls body(TypeTag<T>{}) for the T of List whose dtype is `dtype` and
// returns its status; ctx.UnsupportedDtype(dtype, bn) if none is.
template <typename List, typename Body>
absl::Status DispatchDtype(const KernelContext& ctx, DataType dtype, absl::string_view bn,
                           Body&& body) {
  return internal::DispatchIn(List{}, ctx, dtype, bn, body);
}

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_DTYPE_DISPATCH_H_
