// A float GEMM for CPUs with AVX-512, chosen at run time, so the binary
// still runs on any x86-64 (the rest of the build is SSE2).
//
//   if (!SgemmAvx512(ta, tb, m, n, k, alpha, a, b, accumulate, out)) {
//     ... the portable path (Eigen) ...
//   }
//
// Why not Eigen built with -mavx512f: Eigen's GEMM is templates, and every
// kernel file instantiates the same ones; the linker keeps one copy of
// each, so a single file built with other flags gets (or gives away) the
// SSE2 instantiation at the linker's whim: docs/PERFORMANCE.md, section
// "all-MiniLM-L6-v2 against sentence-transformers", found the AVX-512
// build of matmul_kernels.cc running the SSE2 kernel. This file holds no
// template shared with other files, only functions local to it.
//
// Each element of out sums its k products in k order, the same sequence of
// operations whatever its row and column and whatever m and n are, so a
// row- or column-sharded product reproduces the whole one bit for bit.
#ifndef OPS_KERNELS_CPU_SGEMM_AVX512_H_
#define OPS_KERNELS_CPU_SGEMM_AVX512_H_

#include <cstdint>

namespace oneflow_sbp::kernels {

// Whether this CPU (and OS) runs the AVX-512 kernel.
bool HasSgemmAvx512();

// out[m,n] (=|+=) alpha * op(a) * op(b), the contract of Gemm in gemm.h
// (row-major, contiguous; a [m,k] or [k,m] when ta, b [k,n] or [n,k]
// when tb). Returns false, touching nothing, when the CPU lacks AVX-512.
bool SgemmAvx512(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 const float* b, bool accumulate, float* out);

}  // namespace oneflow_sbp::kernels

#endif  // OPS_KERNELS_CPU_SGEMM_AVX512_H_
