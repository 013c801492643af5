// Launchers of sgd.cu, conv.cu and argwhere.cu (registry glue:
// cuda_reduce_conv_kernels.cc). Same conventions as cuda_launch.h: device
// pointers, the calling thread's stream, "" on success or an error string
// naming the kernel. No CUDA or absl type crosses this header.
#ifndef KERNELS_CUDA_REDUCE_CONV_H_
#define KERNELS_CUDA_REDUCE_CONV_H_

#include <cstdint>
#include <string>

#include "kernels/common/conv_geometry.h"

namespace oneflow_sbp::kernels::cuda {

// sgd_update in place, n elements (f32 f64 f16 bf16):
// w -= lr * (scale * g + weight_decay * w), in double with every product
// and sum rounded separately (no FMA contraction): the CPU kernel's
// rounding steps (bit-equal where the host compiler does not contract
// either, as on x86-64 without -mfma). 16-byte vectors
// when both pointers are aligned.
std::string SgdUpdate(int dtype, int64_t n, double lr, double scale, double weight_decay,
                      void* w, const void* g);

// conv2d, NCHW, of the local blocks described by `g` (checked by
// kernels/common/conv_args.h), f32 f64 f16 bf16: out starts as
// _add_to_output (add, may be null) plus bias[f] (may be null), then each
// group adds its filters [f/groups, cg*kh*kw] times the im2col matrix
// [cg*kh*kw, oh*ow] of every image (cuBLAS, one strided batch over the
// images per group). The im2col matrices live in device scratch of at
// most 256 MiB (or one image's), images taken in chunks that fit.
std::string Conv2d(int dtype, const ConvGeometry& g, const void* in, const void* weight,
                   const void* bias, const void* add, void* out);

// argwhere of the n elements of x (every dtype; NaN is nonzero) with dims
// `dims` (rank <= 8): out [n, rank] gets the coordinates of the nonzero
// elements in row-major order then zero rows, size[0] their count; out and
// size are i32 or i64 (`index_dtype`). On the device: nonzero flags, an
// inclusive scan (CUB), then each nonzero element writes its own row; the
// count never leaves the device.
std::string Argwhere(int dtype, int rank, const int64_t* dims, int64_t n, const void* x,
                     int index_dtype, void* out, void* size);

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_REDUCE_CONV_H_
