#include "kernels/common/select_args.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {

absl::Status CheckSameDtype(const KernelContext& ctx, int a, int b) {
  const DataType ta = ctx.input(a).dtype(), tb = ctx.input(b).dtype();
  if (ta == tb) return absl::OkStatus();
  return ctx.Internal(absl::StrCat(ctx.input_bn(a), " is ", DataTypeName(ta), " but ",
                                   ctx.input_bn(b), " is ", DataTypeName(tb)));
}

absl::Status CheckWhereOperands(const KernelContext& ctx) {
  const DataType cond = ctx.input(0).dtype();
  if (cond != DataType::kBool) return ctx.UnsupportedDtype(cond, ctx.input_bn(0));
  return CheckSameDtype(ctx, 1, 2);
}

absl::StatusOr<int64_t> CheckTril(KernelContext& ctx) {
  const LocalTensor& in = ctx.input(0);
  if (in.rank() < 2) return ctx.Internal(absl::StrCat("in_0 has rank ", in.rank(), " < 2"));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, in.dims(), in.dtype()));
  const int r = in.rank();
  const TensorSlice& slice = ctx.input_layout(0).slice;
  // Local (i, j) is global (i + row0, j + col0): kept when
  // j + col0 <= i + row0 + diagonal. A lead of cols or more keeps every
  // element and one of -rows or less none, so clamping the (user-given)
  // diagonal and the lead changes nothing but keeps i + lead from
  // overflowing on a diagonal near the int64 limits.
  constexpr int64_t kFar = int64_t{1} << 62;
  const int64_t diagonal = std::clamp<int64_t>(ctx.Attr<int64_t>("diagonal"), -kFar, kFar);
  const int64_t lead = slice.range(r - 2).begin + diagonal - slice.range(r - 1).begin;
  return std::clamp<int64_t>(lead, -in.dim(r - 2), in.dim(r - 1));
}

absl::StatusOr<DataType> CheckCast(KernelContext& ctx) {
  const std::string name = ctx.Attr<std::string>("dtype");
  absl::StatusOr<DataType> to = ParseDataType(name);
  if (!to.ok()) return ctx.InvalidArgument(absl::StrCat("attribute dtype: ", to.status().message()));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, ctx.input(0).dims(), *to));
  return *to;
}

}  // namespace oneflow_sbp::kernels
