// The geometry of a conv2d call on a rank's LOCAL blocks: a plain struct
// (no absl, no CUDA) so that the CPU kernel, the shared checks
// (conv_args.h) and the CUDA launcher (kernels/cuda/conv.cu, built by
// nvcc) read one definition.
#ifndef KERNELS_COMMON_CONV_GEOMETRY_H_
#define KERNELS_COMMON_CONV_GEOMETRY_H_

#include <cstdint>

namespace oneflow_sbp::kernels {

struct ConvGeometry {
  int64_t n, c, h, w;  // local input
  int64_t f, cg;       // local filters, channels per group (weight dims 0, 1)
  int64_t groups;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t oh, ow;
};

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_CONV_GEOMETRY_H_
