// A float GEMM for x86-64 CPUs with AVX-512 or AVX2+FMA, chosen at run
// time, so the binary still runs on any x86-64 (the rest of the build is
// SSE2).
//
//   if (!Sgemm(ta, tb, m, n, k, alpha, a, b, accumulate, out)) {
//     ... the portable path (Eigen) ...
//   }
//
// Why not Eigen built with -mavx2 or -mavx512f: Eigen's GEMM is templates,
// and every kernel file instantiates the same ones; the linker keeps one
// copy of each, so a single file built with other flags gets (or gives
// away) the SSE2 instantiation at the linker's whim: docs/PERFORMANCE.md,
// section "all-MiniLM-L6-v2 against sentence-transformers", found the
// AVX-512 build of matmul_kernels.cc running the SSE2 kernel. This file
// holds no template shared with other files, only functions local to it.
//
// The exact arithmetic, the same on both instruction sets: each element of
// out is one chain of fused multiply-adds over k in k order, starting from
// zero (acc = fma(a(i,p), b(p,j), acc)), then acc * alpha, or, when
// accumulating, fma(acc, alpha, out) (one rounding). That sequence does not
// depend on where the element sits or on the register width, so
//  - a row- or column-sharded product reproduces the whole one bit for bit;
//  - an AVX2 machine and an AVX-512 machine give the same bits, so losses
//    printed by the demo do not depend on which of the two ran them.
// The file is built with -ffp-contract=off so the compiler cannot fuse
// anything else.
#ifndef KERNELS_CPU_SGEMM_SIMD_H_
#define KERNELS_CPU_SGEMM_SIMD_H_

#include <cstdint>

namespace oneflow_sbp::kernels {

enum class SgemmIsa { kNone, kAvx2, kAvx512 };

// The widest instruction set this CPU (and OS) runs the kernel with.
SgemmIsa BestSgemmIsa();
// "avx512", "avx2+fma" or "none".
const char* SgemmIsaName(SgemmIsa isa);

// out[m,n] (=|+=) alpha * op(a) * op(b), the contract of Gemm in gemm.h
// (row-major, contiguous; a [m,k] or [k,m] when ta, b [k,n] or [n,k]
// when tb), with BestSgemmIsa(). Returns false, touching nothing, when the
// CPU has neither instruction set (or k is above 16384).
bool Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           const float* b, bool accumulate, float* out);

// As Sgemm with one instruction set (tests compare the two); false,
// touching nothing, when this CPU lacks `isa` or `isa` is kNone.
bool SgemmWith(SgemmIsa isa, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, const float* b, bool accumulate, float* out);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_CPU_SGEMM_SIMD_H_
