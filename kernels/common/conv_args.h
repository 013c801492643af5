// The checks of conv2d, shared by the CPU kernel (conv_kernels.cc) and the
// CUDA glue (kernels/cuda/cuda_reduce_conv_kernels.cc), so both accept
// and refuse the same calls with the same messages.
#ifndef KERNELS_COMMON_CONV_ARGS_H_
#define KERNELS_COMMON_CONV_ARGS_H_

#include "absl/status/statusor.h"
#include "kernels/common/conv_geometry.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// conv2d(in, weight, opt bias, opt _add_to_output; ...) on this rank's
// local blocks: kUnimplemented for data_format other than channels_first;
// kInvalidArgument for attribute lists without 2 entries, strides or
// dilation < 1, padding < 0; kInternal where the local blocks do not form
// a convolution (in, weight, bias or _add_to_output dims: a layout the
// kernel cannot compute); every input in in's dtype (kUnimplemented
// naming the blob otherwise). out is checked as [n, f, oh, ow].
absl::StatusOr<ConvGeometry> CheckConv2d(KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_CONV_ARGS_H_
