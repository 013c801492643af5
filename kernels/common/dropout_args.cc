#include "kernels/common/dropout_args.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/philox.h"

namespace oneflow_sbp::kernels {

absl::StatusOr<DropoutArgs> CheckDropout(const KernelContext& ctx) {
  const LocalTensor& in = ctx.input("in");
  const double rate = ctx.Attr<double>("rate");
  if (!(rate >= 0.0 && rate <= 1.0)) {
    return ctx.InvalidArgument(absl::StrCat("attribute rate ", rate, " must be in [0, 1]"));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, in.dims(), in.dtype()));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(1, in.dims(), DataType::kBool));
  DropoutArgs args;
  if (ctx.has_input("_add_to_output")) {
    args.add = &ctx.input("_add_to_output");
    if (args.add->dims() != in.dims()) {
      return ctx.Internal(absl::StrCat("local _add_to_output_0 ", DimsToString(args.add->dims()),
                                       " differs from local in_0 ", DimsToString(in.dims())));
    }
  }
  args.seed = static_cast<uint64_t>(ctx.Attr<int64_t>("seed"));
  args.threshold = DropoutThreshold(rate);
  args.scale = rate < 1.0 ? 1.0 / (1.0 - rate) : 0.0;
  return args;
}

absl::Status CheckDropoutGrad(const KernelContext& ctx) {
  const LocalTensor& dy = ctx.input(0);
  const LocalTensor& mask = ctx.input(1);
  if (mask.dtype() != DataType::kBool || mask.dims() != dy.dims()) {
    return ctx.Internal(absl::StrCat("local mask_0 ", DataTypeName(mask.dtype()),
                                     DimsToString(mask.dims()), " does not match local dy_0 ",
                                     DimsToString(dy.dims())));
  }
  return ctx.CheckOutput(0, dy.dims(), dy.dtype());
}

}  // namespace oneflow_sbp::kernels
