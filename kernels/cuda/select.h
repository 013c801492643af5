// Launchers of select.cu: comparisons, broadcast_fmod, where, cast,
// logical_not and tril (registry glue: cuda_select_kernels.cc). Same
// conventions as cuda_launch.h: device pointers, the calling thread's
// stream, "" on success or an error string naming the kernel. Broadcast
// operands come as in cuda::Binary: rank <= kMaxRank output dims and each
// operand's element stride per output dim (0 where it repeats), from the
// CPU's PlanBroadcast.
#ifndef KERNELS_CUDA_SELECT_H_
#define KERNELS_CUDA_SELECT_H_

#include <cstdint>
#include <string>

namespace oneflow_sbp::kernels::cuda {

enum class CompareCode : int { kEqual, kNotEqual, kGreater, kGreaterEqual, kLess, kLessEqual };
// out[i] = op(a, b) as bool; a, b of f32 f64 f16 bf16 i32 i64 bool (halves
// compared in float, as the CPU).
std::string Compare(CompareCode op, int dtype, int rank, const int64_t* out_dims,
                    const int64_t* a_stride, const int64_t* b_stride, const void* a,
                    const void* b, bool* out);

// broadcast_fmod: out = fmod(a, b), the sign of a (C's fmod / %), f32 f64
// f16 bf16 i32 i64. An integer b of 0 gives 0 there and sets
// *int_by_zero (read back with one synchronising copy; the glue turns it
// into the CPU's kInvalidArgument).
std::string BroadcastFmod(int dtype, int rank, const int64_t* out_dims, const int64_t* a_stride,
                          const int64_t* b_stride, const void* a, const void* b, void* out,
                          bool* int_by_zero);

// where: out = cond ? x : y; elements of elem_bytes (1, 2, 4, 8) are
// copied, so every dtype.
std::string Where(int elem_bytes, int rank, const int64_t* out_dims, const int64_t* c_stride,
                  const int64_t* x_stride, const int64_t* y_stride, const bool* cond,
                  const void* x, const void* y, void* out);

// cast of n elements from dtype `from` to dtype `to` (any of the nine) with
// the CPU's ConvertElement rules: NaN -> 0 and saturation for floating to
// integer, nonzero -> true, halves through float (so f64 -> f16 rounds
// twice, as on the CPU), integer narrowing wraps.
std::string Cast(int from, int to, const void* x, void* y, int64_t n);

// logical_not: y = (x == 0) in x's dtype (bool f32 f64 f16 bf16 i32 i64).
std::string LogicalNot(int dtype, const void* x, void* y, int64_t n);

// tril of `mats` row-major [rows, cols] matrices: element (i, j) is kept
// when j <= i + lead, else 0 (every dtype: elem_bytes 1, 2, 4, 8).
std::string Tril(int elem_bytes, int64_t mats, int64_t rows, int64_t cols, int64_t lead,
                 const void* x, void* y);

}  // namespace oneflow_sbp::kernels::cuda

#endif  // KERNELS_CUDA_SELECT_H_
