#include "kernels/common/conv_args.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {
namespace {

absl::StatusOr<ConvGeometry> GeometryOf(const KernelContext& ctx) {
  const LocalTensor& in = ctx.input("in");
  const LocalTensor& weight = ctx.input("weight");
  if (in.rank() != 4 || weight.rank() != 4) {
    return ctx.Internal(absl::StrCat("in_0 ", DimsToString(in.dims()), " and weight_0 ",
                                     DimsToString(weight.dims()), " must be 4-D"));
  }
  std::vector<std::vector<int64_t>> pairs;
  for (const char* name : {"kernel_size", "strides", "padding_before", "dilation_rate"}) {
    pairs.push_back(ctx.Attr<std::vector<int64_t>>(name));
    if (pairs.back().size() != 2) {
      return ctx.InvalidArgument(absl::StrCat("attribute ", name, " [",
                                              absl::StrJoin(pairs.back(), ","),
                                              "] must have 2 entries"));
    }
  }
  ConvGeometry g{in.dim(0), in.dim(1), in.dim(2), in.dim(3), weight.dim(0), weight.dim(1),
                 ctx.Attr<int64_t>("groups"),
                 pairs[0][0], pairs[0][1], pairs[1][0], pairs[1][1], pairs[2][0], pairs[2][1],
                 pairs[3][0], pairs[3][1], 0, 0};
  if (g.groups < 1 || g.c != g.groups * g.cg || g.f % g.groups != 0 || weight.dim(2) != g.kh ||
      weight.dim(3) != g.kw) {
    return ctx.Internal(absl::StrCat("local in_0 ", DimsToString(in.dims()), " and weight_0 ",
                                     DimsToString(weight.dims()), " do not form a convolution in ",
                                     g.groups, " groups with kernel_size [", g.kh, ",", g.kw,
                                     "] (a layout this kernel cannot compute)"));
  }
  if (g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 || g.ph < 0 || g.pw < 0) {
    return ctx.InvalidArgument("strides and dilation_rate must be >= 1, padding_before >= 0");
  }
  g.oh = (g.h + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  return g;
}

}  // namespace

absl::StatusOr<ConvGeometry> CheckConv2d(KernelContext& ctx) {
  if (ctx.Attr<std::string>("data_format") != "channels_first") {
    return ctx.Unimplemented("only data_format channels_first (NCHW) is supported");
  }
  OFS_ASSIGN_OR_RETURN(const ConvGeometry g, GeometryOf(ctx));
  const LocalTensor& in = ctx.input("in");
  const LocalDims out_dims = {g.n, g.f, g.oh, g.ow};
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, out_dims, in.dtype()));
  if (ctx.has_input("bias") && ctx.input("bias").dims() != LocalDims{g.f}) {
    return ctx.Internal(absl::StrCat("local bias_0 ", DimsToString(ctx.input("bias").dims()),
                                     " does not match the ", g.f, " local filters of weight_0"));
  }
  if (ctx.has_input("_add_to_output") && ctx.input("_add_to_output").dims() != out_dims) {
    return ctx.Internal(absl::StrCat("local _add_to_output_0 ",
                                     DimsToString(ctx.input("_add_to_output").dims()),
                                     " differs from local out_0 ", DimsToString(out_dims)));
  }
  for (int b = 1; b < ctx.num_inputs(); ++b) {
    if (ctx.input(b).dtype() != in.dtype()) {
      return ctx.UnsupportedDtype(ctx.input(b).dtype(), ctx.input_bn(b));
    }
  }
  return g;
}

}  // namespace oneflow_sbp::kernels
