// Launchers of the CUDA kernels, behind a plain C++ interface: nvcc builds
// the .cu files, and cuda_kernels.cc (gcc, absl, KernelContext) checks
// layouts and calls these. No CUDA type crosses this header.
//
// Conventions: `dtype` is a oneflow_sbp::cuda::DtypeCode (== DataType);
// pointers are device pointers; work goes to the calling thread's stream
// (oneflow_sbp/storage/cuda/cuda_device.h). Each returns "" on success, else an
// error string naming the kernel ("... unsupported dtype 8" or the CUDA
// runtime's message). Floating kernels take f32, f64, f16 and bf16; halves
// compute in float.
#ifndef KERNELS_CUDA_CUDA_LAUNCH_H_
#define KERNELS_CUDA_CUDA_LAUNCH_H_

#include <cstdint>
#include <string>

namespace oneflow_sbp::kernels::cuda {

enum class UnaryCode : int {
  kAbs, kCeil, kCos, kErf, kExp, kFastGelu, kFloor, kGelu, kLog, kMish, kNegative,
  kReciprocal, kRelu, kRound, kRsqrt, kSigmoid, kSign, kSilu, kSin, kSoftplus, kSqrt,
  kSquare, kTanh,
};
// y[i] = op(x[i]), n elements; 16-byte vector loads and stores when both
// pointers are 16-byte aligned. Also i32 and i64 for abs, negative, relu,
// sign and square (wrapping: int_arith.h, as the CPU).
std::string Unary(UnaryCode op, int dtype, const void* x, void* y, int64_t n);

enum class BinaryCode : int { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow };
constexpr int kMaxRank = 8;
// out = op(a, b) over `rank` output dims (<= kMaxRank); a_stride and
// b_stride give each operand's element stride per output dim (0 where it
// broadcasts). Same-shape operands take a vectorised path. Also i32 and
// i64 for every op but div (wrapping: int_arith.h, as the CPU). An integer
// pow with a negative exponent writes 0 there and sets *negative_exponent
// (read back from the device after the launch: a synchronising copy); with
// negative_exponent null it is an error string instead.
std::string Binary(BinaryCode op, int dtype, int rank, const int64_t* out_dims,
                   const int64_t* a_stride, const int64_t* b_stride, const void* a,
                   const void* b, void* out, bool* negative_exponent = nullptr);

// y[o, c, i] = x[o, c, i] + bias[c] for x viewed as [outer, channels, inner].
std::string BiasAdd(int dtype, int64_t outer, int64_t channels, int64_t inner, const void* x,
                    const void* bias, void* y);

enum class ReduceCode : int { kSum, kMean, kMax, kMin, kProd, kNanSum };
// y[j] = reduce over the reduced index space of x. Output element j has
// multi-index over `out_rank` kept dims (out_dims, with x strides
// out_stride); the reduced dims are red_dims with x strides red_stride.
// Accumulates in double (as the CPU kernels do; i32 and i64 in int64,
// wrapping); mean divides by `divisor` (the LOGICAL reduced extent, so
// split ranks give addends). Max/min propagate NaN, nansum skips it.
// Floating dtypes, and i32 i64 for sum, max, min and prod.
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

// ---- embedding.cu (registry glue: cuda_embedding_kernels.cc) ----

// out[i, :] = table[rows[i], :] for `n` LOCAL table rows given on the HOST
// (rows[i] < 0: a zero row, a vocab-parallel rank's addend for an id
// another rank holds); rows of `dim` elements of `elem_bytes` bytes (1, 2,
// 4, 8: every dtype, bytes are copied). A row >= table_rows is an error
// naming it. One synchronising upload of the rows.
std::string Embedding(int elem_bytes, int64_t table_rows, int64_t dim, int64_t n,
                      const int64_t* rows, const void* table, void* out);
// gather: out[o, j, :] = in[o, rows[j], :] for in viewed as [outer, mid,
// inner] and out as [outer, n, inner], n LOCAL rows of dim `mid` given on
// the HOST (< 0: zeros, as in Embedding, which is Gather with outer 1).
// Rows are copied as bytes in the widest unit the row size and pointers
// allow (up to 16 bytes). A row >= mid is an error naming `kernel`.
std::string Gather(int elem_bytes, int64_t outer, int64_t mid, int64_t inner, int64_t n,
                   const int64_t* rows, const void* in, void* out, const char* kernel);
// dtable [table_rows, dim] (floating dtype): each local row v gets the sum,
// over positions i in index order with rows[i] == v (HOST array; < 0
// skipped: padding_idx, other ranks' ids), of dout[i, :] * scale[i] (HOST
// array; null: 1), accumulated in double without FMA contraction: the CPU
// kernel's arithmetic and order, so bit-reproducible. Rows never indexed
// get zeros. A host counting sort, then one block per table row.
std::string EmbeddingGrad(int dtype, int64_t table_rows, int64_t dim, int64_t n,
                          const int64_t* rows, const double* scale, const void* dout,
                          void* dtable);

// ---- cross_entropy.cu (registry glue: cuda_cross_entropy_kernels.cc) ----

// Row statistics of x [rows, n] (floating dtype) in device doubles:
// mx[r] = max over the row, sum[r] = sum of exp(x - mx[r]) (mx read from
// the device, so the glue may all-reduce it in between).
std::string RowMax(int dtype, int64_t rows, int64_t n, const void* x, double* mx);
std::string RowSumExp(int dtype, int64_t rows, int64_t n, const void* x, const double* mx,
                      double* sum);
// prob = exp(x - mx) / sum; loss[r] = log(sum[r]) + mx[r] - x[r, column[r]]
// where column[r] >= 0 (HOST array of each row's LOCAL label column, -1
// where another rank holds the label's class: loss addend 0).
std::string SparseCrossEntropy(int dtype, int64_t rows, int64_t n, const void* x,
                               const double* mx, const double* sum, const int64_t* column,
                               void* prob, void* loss);
// dx[r, c] = (prob[r, c] - (c == column[r])) * dy[r], column on the HOST.
std::string SparseCrossEntropyGrad(int dtype, int64_t rows, int64_t n, const int64_t* column,
                                   const void* prob, const void* dy, void* dx);

// ---- nn.cu, attention.cu (glue: the norms, adam_update, rotary, attention) ----
//
// Floating dtypes (f32 f64 f16 bf16) unless noted; pointers of `dtype`
// unless noted.

// layer_norm (rms = false) or rms_norm over the last `cols` of [rows, cols]:
// y = (x - mean) * inv_std * gamma + beta (rms: no mean, no beta);
// inv_std = 1 / sqrt(mean((x - mean)^2) + eps), sums in double. gamma, beta
// may be null; mean is not written for rms (may be null). mean and inv_std
// are f32 for f16/bf16 x, else x's dtype (the CPU's statistics dtype).
std::string NormForward(int dtype, bool rms, int64_t rows, int64_t cols, double eps,
                        const void* x, const void* gamma, const void* beta, void* y, void* mean,
                        void* inv_std);
// dx (if not null), dgamma and dbeta (if not null; column sums over rows
// in double, deterministic) from the saved mean / inv_std (dtypes as in
// NormForward).
std::string NormBackward(int dtype, bool rms, int64_t rows, int64_t cols, const void* x,
                         const void* gamma, const void* mean, const void* inv_std,
                         const void* dy, void* dx, void* dgamma, void* dbeta);

// One Adam(W) step in place, step >= 1: m = b1 m + (1-b1) g;
// v = b2 v + (1-b2) g^2; p -= lr * (m/(1-b1^t) / (sqrt(v/(1-b2^t)) + eps)
// + weight_decay * p). Computes in double for every dtype, in the CPU
// kernel's order and roundings (optimizer_kernels.cc); 16-byte packs when
// every pointer is aligned.
std::string AdamUpdate(int dtype, int64_t n, int64_t step, double lr, double beta1,
                       double beta2, double eps, double weight_decay, void* param, void* m,
                       void* v, const void* grad);
// The registry's adam_update (OneFlow's attributes): g = scale * grad and
// the bias corrections given directly (1 - beta^t); otherwise as above.
std::string AdamUpdateCorrected(int dtype, int64_t n, double lr, double beta1, double beta2,
                                double eps, double weight_decay, double scale,
                                double correction1, double correction2, void* param, void* m,
                                void* v, const void* grad);

// Rotary embedding of x [rows, seq, dim] (f32; rotate-half pairs
// (i, i + dim/2), angle (offset + s) * base^(-2i/dim)); backward = true
// applies the inverse rotation (the gradient). dim must be even.
std::string Rotary(bool backward, int64_t rows, int64_t seq, int64_t dim, int64_t offset,
                   double base, const float* x, float* y);

// The registry's rotary_embedding (grad = false) or rotary_embedding_grad
// of x [bh, seq, dim] with tables cos, sin [*, dim]: x's sequence row s
// uses table row row0 + s (formulas in kernels/cpu/attention_kernels.cc;
// halves compute in float, as there). dim must be even.
std::string RotaryTable(int dtype, bool grad, int64_t bh, int64_t seq, int64_t dim,
                        int64_t row0, const void* cos, const void* sin, const void* x, void* y);

// Default `shift` of Attention and AttentionGrad: sk - sq.
constexpr int64_t kShiftSkMinusSq = INT64_MIN;

// The key_padding_mask of Attention and AttentionGrad: a device mask of
// rows of sk flags, dtype `dtype` (bool, i32 or i64; nonzero = attend);
// batch-head b reads row b / heads + row0 (the batch of its heads). A
// masked key gets p = 0 in every query row of the batch; a row left with
// no key gets out 0 (lse -inf), as with the causal mask. data null: none.
struct KeyMask {
  const void* data = nullptr;
  int dtype = 0;
  int64_t heads = 1;
  int64_t row0 = 0;
};

// Scaled dot-product attention of q [bh, sq, d], k [bh, sk, d],
// v [bh, sk, dv] -> out [bh, sq, dv] and, if lse is not null, the row
// log-sum-exp lse [bh, sq] (device doubles); causal masks key j > i + shift
// (default sk - sq; a rank holding query rows from global row r0 passes
// r0 + logical (sk - sq)). A row with every key masked gets out 0 and lse
// -inf. A thread per query row with an online softmax in double (the
// CPU sums in double too, but in two passes: results agree to rounding,
// not bit for bit), a block per 64-row tile staging K and V in shared
// memory (attention.cu); head dims up to 256.
std::string Attention(int dtype, int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                      double scale, bool causal, const void* q, const void* k, const void* v,
                      void* out, double* lse, int64_t shift = kShiftSkMinusSq,
                      KeyMask mask = KeyMask());
// Gradients dq, dk, dvv from the forward's inputs and dout (the CPU op's
// inputs): recomputes lse and dout . out into device scratch, then one
// thread per query row (dq) and per key row (dk, dv), tiled as Attention,
// sums in double in a fixed order; shift and mask as in Attention (a
// masked key gets dk = dv = 0).
std::string AttentionGrad(int dtype, int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                          double scale, bool causal, const void* q, const void* k, const void* v,
                          const void* dout, void* dq, void* dk, void* dvv,
                          int64_t shift = kShiftSkMinusSq, KeyMask mask = KeyMask());

// ---- encoder.cu (registry glue: cuda_encoder_kernels.cc) ----
//
// The CPU kernels' arithmetic (kernels/cpu/encoder_kernels.cc): sums
// and each value in double, in the CPU's order, products rounded on their
// own (no fma), so results match the CPU's bit for bit.

// masked_mean_pool (grad false) of x [b, s, h] -> y [b, h], or its grad
// (grad true) of dy [b, h] -> dx [b, s, h]; floating dtype. The mask has
// rows of s elements of `mask_dtype` (any; nonzero keeps); batch row r
// reads mask row r + mask_row0. A thread per (batch row, column).
std::string MaskedMeanPool(int dtype, bool grad, int64_t b, int64_t s, int64_t h,
                           const void* mask, int mask_dtype, int64_t mask_row0, const void* in,
                           void* out);

// l2_normalize (grad false: out = x / max(norm, eps)) or its grad (out =
// dx from dy and x) along the middle dim of [outer, n, inner]; floating
// dtype. A thread per vector.
std::string L2Normalize(int dtype, bool grad, int64_t outer, int64_t n, int64_t inner,
                        double eps, const void* x, const void* dy, void* out);

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_CUDA_LAUNCH_H_
