// conv2d on CUDA as im2col plus cuBLAS (Gemm, gemm.cu): the CPU kernel's
// decomposition (kernels/cpu/conv_kernels.cc), with a chunk of
// images' im2col matrices built at once so each group is one
// strided-batched gemm over the chunk's images. Products accumulate in f32 for halves (cuBLAS compute
// type), where the CPU accumulates halves in float too.
#include <algorithm>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/reduce_conv.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Cap of the im2col scratch (one image's matrices may exceed it).
constexpr int64_t kScratchBytes = int64_t{256} << 20;

// col[n][gr][(c*kh + i)*kw + j][y*ow + x] =
//   in[n, gr*cg + c, y*sh - ph + i*dh, x*sw - pw + j*dw], 0 in the padding.
template <typename T>
__global__ void Im2ColKernel(ConvGeometry g, const T* in, T* col, int64_t total) {
  const int64_t plane = g.oh * g.ow;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t x = e % g.ow;
    const int64_t y = (e / g.ow) % g.oh;
    int64_t r = e / plane;  // row of the stacked matrices: ((n*C + channel)*kh + i)*kw + j
    const int64_t j = r % g.kw;
    r /= g.kw;
    const int64_t i = r % g.kh;
    const int64_t channel = r / g.kh;  // n*C + gr*cg + c: the input plane
    const int64_t iy = y * g.sh - g.ph + i * g.dh;
    const int64_t ix = x * g.sw - g.pw + j * g.dw;
    col[e] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? in[(channel * g.h + iy) * g.w + ix]
                                                        : To<T>(0.0f);
  }
}

// out[n, f, p] = add[n, f, p] (or 0) + bias[f] (or 0), in the compute type.
template <typename T>
__global__ void ConvInitKernel(int64_t total, int64_t f, int64_t plane, const T* bias,
                               const T* add, T* out) {
  using C = ComputeT<T>;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    C v = add != nullptr ? To<C>(add[e]) : C(0);
    if (bias != nullptr) v += To<C>(bias[(e / plane) % f]);
    out[e] = To<T>(v);
  }
}

}  // namespace

std::string Conv2d(int dtype, const ConvGeometry& g, const void* in, const void* weight,
                   const void* bias, const void* add, void* out) {
  const int64_t plane = g.oh * g.ow;
  const int64_t out_n = g.n * g.f * plane;
  if (out_n == 0) return "";
  const int64_t fg = g.f / g.groups, patch = g.cg * g.kh * g.kw;
  const int64_t image_col = g.c * g.kh * g.kw * plane;  // = groups * patch * plane
  return DispatchFloating("conv2d", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    ConvInitKernel<T><<<GridFor(out_n, kThreads), kThreads, 0, Stream()>>>(
        out_n, g.f, plane, static_cast<const T*>(bias), static_cast<const T*>(add),
        static_cast<T*>(out));
    std::string err = LaunchError("conv2d init");
    if (!err.empty() || patch == 0) return err;
    // Images in chunks whose im2col matrices fit kScratchBytes (at least
    // one image a chunk), so a large batch does not need N times the
    // scratch.
    const int64_t chunk = std::max<int64_t>(
        1, std::min<int64_t>(g.n, kScratchBytes / std::max<int64_t>(1, image_col * sizeof(T))));
    Upload col;  // scratch, freed after the stream drains
    err = col.Allocate(chunk * image_col * static_cast<int64_t>(sizeof(T)));
    if (!err.empty()) return "conv2d im2col scratch: " + err;
    for (int64_t n0 = 0; err.empty() && n0 < g.n; n0 += chunk) {
      ConvGeometry part = g;
      part.n = std::min(chunk, g.n - n0);
      const int64_t col_n = part.n * image_col;
      Im2ColKernel<T><<<GridFor(col_n, kThreads), kThreads, 0, Stream()>>>(
          part, static_cast<const T*>(in) + n0 * g.c * g.h * g.w, col.at<T>(0), col_n);
      err = LaunchError("conv2d im2col");
      T* out_chunk = static_cast<T*>(out) + n0 * g.f * plane;
      for (int64_t gr = 0; err.empty() && gr < g.groups; ++gr) {
        // out[n, gr*fg:(gr+1)*fg] += weight[gr] [fg, patch] x col[n][gr] [patch, plane]
        err = Gemm(dtype, false, false, fg, plane, patch, 1.0,
                   static_cast<const T*>(weight) + gr * fg * patch, /*stride_a=*/0,
                   col.at<T>(0) + gr * patch * plane, /*stride_b=*/image_col, 1.0,
                   out_chunk + gr * fg * plane, /*stride_c=*/g.f * plane, part.n);
        if (!err.empty()) err = "conv2d: " + err;
      }
    }
    return err;
  });
}

}  // namespace oneflow_sbp::kernels::cuda
