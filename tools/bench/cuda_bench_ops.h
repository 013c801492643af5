// Baselines of cuda_benchmark behind a plain C++ interface (no CUDA header).
#ifndef TOOLS_BENCH_CUDA_BENCH_OPS_H_
#define TOOLS_BENCH_CUDA_BENCH_OPS_H_

#include <string>

namespace oneflow_sbp::bench {

// Row-major C[m, n] = A[m, k] B[k, n] by one plain cublasSgemm on the
// calling thread's stream (device pointers); "" or an error.
std::string CublasSgemmRowMajor(int m, int n, int k, const float* a, const float* b, float* c);

}  // namespace oneflow_sbp::bench

#endif  // TOOLS_BENCH_CUDA_BENCH_OPS_H_
