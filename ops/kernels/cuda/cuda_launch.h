// Launchers of the CUDA kernels, behind a plain C++ interface: nvcc builds
// the .cu files, and cuda_kernels.cc (gcc, absl, KernelContext) checks
// layouts and calls these. No CUDA type crosses this header.
//
// Conventions: `dtype` is a oneflow_sbp::cuda::DtypeCode (== DataType);
// pointers are device pointers; work goes to the calling thread's stream
// (oneflow_sbp/cuda/cuda_device.h). Each returns "" on success, else an
// error string naming the kernel ("... unsupported dtype 8" or the CUDA
// runtime's message). Floating kernels take f32, f64, f16 and bf16; halves
// compute in float.
#ifndef OPS_KERNELS_CUDA_CUDA_LAUNCH_H_
#define OPS_KERNELS_CUDA_CUDA_LAUNCH_H_

#include <cstdint>
#include <string>

namespace oneflow_sbp::kernels::cuda {

enum class UnaryCode : int {
  kAbs, kCeil, kCos, kErf, kExp, kFastGelu, kFloor, kGelu, kLog, kMish, kNegative,
  kReciprocal, kRelu, kRound, kRsqrt, kSigmoid, kSign, kSilu, kSin, kSoftplus, kSqrt,
  kSquare, kTanh,
};
// y[i] = op(x[i]), n elements; 16-byte vector loads and stores when both
// pointers are 16-byte aligned.
std::string Unary(UnaryCode op, int dtype, const void* x, void* y, int64_t n);

enum class BinaryCode : int { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow };
constexpr int kMaxRank = 8;
// out = op(a, b) over `rank` output dims (<= kMaxRank); a_stride and
// b_stride give each operand's element stride per output dim (0 where it
// broadcasts). Same-shape operands take a vectorised path.
std::string Binary(BinaryCode op, int dtype, int rank, const int64_t* out_dims,
                   const int64_t* a_stride, const int64_t* b_stride, const void* a,
                   const void* b, void* out);

// y[o, c, i] = x[o, c, i] + bias[c] for x viewed as [outer, channels, inner].
std::string BiasAdd(int dtype, int64_t outer, int64_t channels, int64_t inner, const void* x,
                    const void* bias, void* y);

enum class ReduceCode : int { kSum, kMean, kMax, kMin };
// y[j] = reduce over the reduced index space of x. Output element j has
// multi-index over `out_rank` kept dims (out_dims, with x strides
// out_stride); the reduced dims are red_dims with x strides red_stride.
// Accumulates in double (as the CPU kernels do); mean divides by
// `divisor` (the LOGICAL reduced extent, so split ranks give addends).
std::string Reduce(ReduceCode op, int dtype, int out_rank, const int64_t* out_dims,
                   const int64_t* out_stride, int red_rank, const int64_t* red_dims,
                   const int64_t* red_stride, double divisor, const void* x, void* y);

// Row-wise over [rows, cols]: log = false: softmax, true: log_softmax.
std::string Softmax(int dtype, bool log, int64_t rows, int64_t cols, const void* x, void* y);
// softmax_grad (log = false, saved = y): dx = y * (dy - sum(dy * y));
// log_softmax_grad (log = true, saved = log p): dx = dy - exp(p) * sum(dy).
std::string SoftmaxGrad(int dtype, bool log, int64_t rows, int64_t cols, const void* saved,
                        const void* dy, void* dx);

// Dropout of n local elements whose LOGICAL row-major index is given by
// (out_dims, global_stride, global_offset): the same Philox stream as the
// CPU kernel, so results do not depend on the layout. add may be null.
std::string Dropout(int dtype, int rank, const int64_t* local_dims,
                    const int64_t* global_stride, int64_t global_offset, uint64_t seed,
                    uint32_t threshold, double scale, const void* x, const void* add, void* y,
                    bool* mask);
std::string DropoutGrad(int dtype, int64_t n, double scale, const void* dy, const bool* mask,
                        void* dx);

// Row-major C[b] = alpha * op(A[b]) op(B[b]) + beta * C[b] for `batch`
// matrices (stride 0 repeats one), through cuBLAS (f32, f64, f16, bf16;
// f32 accumulation for halves). m x k times k x n.
std::string Gemm(int dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                 double alpha, const void* a, int64_t stride_a, const void* b, int64_t stride_b,
                 double beta, void* c, int64_t stride_c, int64_t batch);

}  // namespace oneflow_sbp::kernels::cuda

#endif  // OPS_KERNELS_CUDA_CUDA_LAUNCH_H_
