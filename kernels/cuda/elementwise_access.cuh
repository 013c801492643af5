// Memory access of the elementwise CUDA kernels (elementwise.cu,
// select.cu): Load/Store of Vec (cuda_common.cuh) for the same-shape paths and the strided
// indexing of broadcast operands (strides from the CPU's PlanBroadcast, 0
// where an operand repeats). nvcc-only.
#ifndef KERNELS_CUDA_ELEMENTWISE_ACCESS_CUH_
#define KERNELS_CUDA_ELEMENTWISE_ACCESS_CUH_

#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {

// Vector p of N elements of a contiguous array, and whether the array is
// aligned for such vectors.
template <int N, typename T>
__device__ __forceinline__ Vec<T, N> Load(const T* a, int64_t p) {
  return reinterpret_cast<const Vec<T, N>*>(a)[p];
}
template <int N, typename T>
__device__ __forceinline__ void Store(T* a, int64_t p, const Vec<T, N>& v) {
  reinterpret_cast<Vec<T, N>*>(a)[p] = v;
}
template <int N, typename T>
bool AlignedVec(const T* a) {
  return reinterpret_cast<uintptr_t>(a) % (sizeof(T) * N) == 0;
}

// K operands over `rank` output dims (<= kMaxRank), passed by value to the
// kernel.
template <int K>
struct StridedIndex {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t stride[K][kMaxRank] = {};

  // Operand offsets of row-major output element i.
  __device__ __forceinline__ void Offsets(int64_t i, int64_t (&off)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = i % dims[d];
      i /= dims[d];
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += c * stride[k][d];
    }
  }
};

// The index of `strides[k]` (one element stride per output dim) over
// out_dims; *n gets the element count and *same whether every operand is
// row-major contiguous (the same-shape path). The caller checks rank.
template <int K>
StridedIndex<K> MakeStridedIndex(int rank, const int64_t* out_dims,
                                 const int64_t* const (&strides)[K], int64_t* n, bool* same) {
  StridedIndex<K> si;
  si.rank = rank;
  *n = 1;
  *same = true;
  for (int d = rank - 1; d >= 0; --d) {
    si.dims[d] = out_dims[d];
    for (int k = 0; k < K; ++k) {
      si.stride[k][d] = strides[k][d];
      *same = *same && (out_dims[d] == 1 || strides[k][d] == *n);
    }
    *n *= out_dims[d];
  }
  return si;
}

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_ELEMENTWISE_ACCESS_CUH_
