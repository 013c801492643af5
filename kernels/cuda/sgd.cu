// sgd_update on CUDA: one memory-bound pass, 16 bytes per load and store
// (Pack) where aligned. The update is computed in double with explicitly
// rounded operations (__dmul_rn, __dadd_rn: nvcc would otherwise contract
// to FMAs), in the CPU kernel's order (optimizer_kernels.cc).
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/reduce_conv.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

struct SgdArgs {
  double lr, scale, wd;
};

template <typename T>
__device__ __forceinline__ T Step(const SgdArgs& a, T w, T g) {
  const double wi = To<double>(w);
  const double grad = __dadd_rn(__dmul_rn(a.scale, To<double>(g)), __dmul_rn(a.wd, wi));
  return To<T>(__dsub_rn(wi, __dmul_rn(a.lr, grad)));
}

template <typename T>
__global__ void SgdVecKernel(SgdArgs a, Pack<T>* w, const Pack<T>* g, int64_t packs, T* wt,
                             const T* gt, int64_t tail_begin, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs;
       i += stride) {
    Pack<T> p = w[i];
    const Pack<T> q = g[i];
#pragma unroll
    for (int j = 0; j < Pack<T>::kN; ++j) p.v[j] = Step(a, p.v[j], q.v[j]);
    w[i] = p;
  }
  for (int64_t i = tail_begin + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    wt[i] = Step(a, wt[i], gt[i]);
  }
}

}  // namespace

std::string SgdUpdate(int dtype, int64_t n, double lr, double scale, double weight_decay,
                      void* w, const void* g) {
  if (n == 0) return "";
  const SgdArgs a{lr, scale, weight_decay};
  return DispatchFloating("sgd_update", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    // Unaligned pointers: no packs, every element in the scalar tail.
    const int64_t packs = Aligned16(w) && Aligned16(g) ? n / Pack<T>::kN : 0;
    SgdVecKernel<T><<<GridFor(packs > 0 ? packs : n, kThreads), kThreads, 0, Stream()>>>(
        a, static_cast<Pack<T>*>(w), static_cast<const Pack<T>*>(g), packs, static_cast<T*>(w),
        static_cast<const T*>(g), packs * Pack<T>::kN, n);
    return LaunchError("sgd_update");
  });
}

}  // namespace oneflow_sbp::kernels::cuda
