// Helpers shared by the op families in ops/: axis normalisation, NumPy
// broadcasting, and the checks shape functions repeat.
#ifndef OPS_OP_UTIL_H_
#define OPS_OP_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::ops {

// `axis` in [-rank, rank) -> [0, rank). `what` names the attribute in the
// error, e.g. "attribute axis".
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what);

// Normalised, sorted, duplicate-free axes; errors name the bad entry.
absl::StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes,
                                               int rank, absl::string_view what);

// NumPy broadcasting of two shapes (right-aligned; size-1 dims stretch).
// Errors name both blobs and shapes.
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, absl::string_view a_name,
                                      const Shape& b, absl::string_view b_name);

// kInvalidArgument unless both descs have the same dtype.
absl::Status CheckSameDtype(const TensorDesc& a, absl::string_view a_name,
                            const TensorDesc& b, absl::string_view b_name);

// kInvalidArgument unless `desc` has rank `rank` (or >= rank when at_least).
absl::Status CheckRank(const TensorDesc& desc, absl::string_view name, int rank,
                       bool at_least = false);

// NormalizeAxis for attribute `attr` of blob `bn`; errors read
// "in_0 f32[4,5]: attribute axis 2 is out of range for rank 2 (...)".
absl::StatusOr<int> NormalizeAxisOf(int64_t axis, const TensorDesc& desc, absl::string_view bn,
                                    absl::string_view attr);

// kInvalidArgument unless `desc` is f16, bf16, f32 or f64:
// "<bn> i32[4] must have a floating-point dtype".
absl::Status CheckFloatingDtype(const TensorDesc& desc, absl::string_view bn);

// Index and label tensors must be i32 or i64 (OneFlow's IsIndexDataType).
// `what` names the role in the error ("index", "label").
absl::Status CheckIndexDtype(const TensorDesc& desc, absl::string_view bn,
                             absl::string_view what = "index");

// The axis attribute `attr` of blob `bn`, normalised (errors as
// NormalizeAxisOf). Works for ShapeContext and SbpContext.
template <typename Ctx>
absl::StatusOr<int> AxisOf(Ctx& ctx, absl::string_view attr, const TensorDesc& d,
                           absl::string_view bn) {
  return NormalizeAxisOf(ctx.template Attr<int64_t>(attr), d, bn, attr);
}

// Dims [begin, end) of `s`. Requires 0 <= begin <= end <= rank.
Shape SubShape(const Shape& s, int begin, int end);

// kInvalidArgument unless `a` and `b` have the same shape and dtype.
absl::Status CheckSameDesc(const TensorDesc& a, absl::string_view an, const TensorDesc& b,
                           absl::string_view bn);

// "<arg>_0": the blob name of a non-variadic arg, for messages.
std::string FirstBlob(absl::string_view arg);

// Shape from dims, with the error naming `what`.
absl::StatusOr<Shape> MakeShape(const std::vector<int64_t>& dims, absl::string_view what);

// Registers every builder; stops at the first error.
absl::Status RegisterAll(OpRegistry* registry,
                         const std::vector<OpDefBuilder>& builders);

}  // namespace oneflow_sbp::ops

#endif  // OPS_OP_UTIL_H_
