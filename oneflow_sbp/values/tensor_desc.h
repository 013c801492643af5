// TensorDesc: the logical shape and dtype of a global tensor, as inference
// sees it (SPEC.md §1.6: stride, memory format and dynamic-ness play no
// role).
//
//   absl::StatusOr<TensorDesc> d = TensorDesc::Parse("f32[64,32]");
//   d->ToString();      // "f32[64,32]"
//   d->byte_size();     // 8192
#ifndef ONEFLOW_SBP_VALUES_TENSOR_DESC_H_
#define ONEFLOW_SBP_VALUES_TENSOR_DESC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {

struct TensorDesc {
  Shape shape;
  DataType dtype = DataType::kFloat32;

  // Logical bytes T = elem_cnt x sizeof(dtype) (SPEC.md §1.7). Shapes are
  // checked so that this fits in int64 when they are parsed; see Parse.
  int64_t byte_size() const { return shape.elem_cnt() * ByteSizeOf(dtype); }

  // "f32[64,32]"; "f32[]" for a scalar.
  std::string ToString() const;
  // "<dtype>[<dims>]", e.g. "bf16[8,128]". Also rejects shapes whose byte
  // size overflows int64.
  static absl::StatusOr<TensorDesc> Parse(absl::string_view text);

  friend bool operator==(const TensorDesc& a, const TensorDesc& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorDesc& a, const TensorDesc& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const TensorDesc& d) {
    return H::combine(std::move(h), d.shape, d.dtype);
  }
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_TENSOR_DESC_H_
