// Exact GELU (x * Phi(x) = x/2 * (1 + erf(x / sqrt 2))) on float arrays
// with AVX2+FMA, chosen at run time like sgemm_simd.h: the scalar loop's
// glibc erff was 10-15% of an all-MiniLM-L6-v2 forward pass.
//
//   if (!GeluF32Simd(in, out, n)) { ... the scalar loop (std::erf) ... }
//
// erf is the rational interpolant Eigen uses for float (a 13/8-degree odd/
// even ratio on [-4, 4], +/-1 outside; a couple of ulp), evaluated with
// fused multiply-adds. Every element, the tail included (it is padded to a
// whole vector), goes through the same vector code, so an element's result
// does not depend on where it sits: a split tensor's shards give the bits
// of the whole.
#ifndef KERNELS_CPU_GELU_SIMD_H_
#define KERNELS_CPU_GELU_SIMD_H_

#include <cstdint>

namespace oneflow_sbp::kernels {

// out[i] = gelu(in[i]) for i < n (in and out the same pointer, or apart).
// Returns false, touching nothing, where the CPU lacks AVX2 or FMA.
bool GeluF32Simd(const float* in, float* out, int64_t n);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_CPU_GELU_SIMD_H_
