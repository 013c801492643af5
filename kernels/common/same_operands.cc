#include "kernels/common/same_operands.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::kernels {

absl::Status CheckSameOperands(const KernelContext& ctx) {
  const LocalTensor& model = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const LocalTensor& t = ctx.input(i);
    if (t.dims() != model.dims() || t.dtype() != model.dtype()) {
      return ctx.Internal(absl::StrCat("local ", ctx.input_bn(i), " ", DataTypeName(t.dtype()),
                                       DimsToString(t.dims()), " differs from ", ctx.input_bn(0),
                                       " ", DataTypeName(model.dtype()),
                                       DimsToString(model.dims())));
    }
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::kernels
