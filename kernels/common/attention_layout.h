// Layout checks of the attention kernels (rotary_embedding,
// scaled_dot_product_attention and their grads), shared by the CPU kernels
// (attention_kernels.cc) and the CUDA glue (kernels/cuda/
// cuda_kernels.cc) so that both accept and refuse exactly the same local
// shards. The layout rules are in attention_kernels.cc's header comment.
#ifndef KERNELS_COMMON_ATTENTION_LAYOUT_H_
#define KERNELS_COMMON_ATTENTION_LAYOUT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// rotary_embedding(_grad)(x, cos, sin): checks the local shapes ([B,H,S,D],
// [S,D], [S,D], one dtype), that D is whole, that cos and sin cover x's
// global sequence rows, and output 0; returns the row of the local cos/sin
// that x's first local sequence row uses.
absl::StatusOr<int64_t> RotaryRowOffset(const KernelContext& ctx);

struct AttentionDims {
  int64_t bh = 0;      // local batch * heads
  int64_t sq = 0;      // local query rows
  int64_t sk = 0;      // keys (whole)
  int64_t d = 0;       // query/key width (whole)
  int64_t dv = 0;      // value width
  int64_t row0 = 0;    // global index of the first local query row
  int64_t shift = 0;   // causal: global row i sees keys j <= i + shift
  bool causal = false;
  double scale = 1;    // the attribute, 0 resolved to 1/sqrt(d)
  // The optional key_padding_mask [B, Sk]: its input index (-1 without
  // one), the local heads per batch row (local batch-head bh reads mask row
  // bh / heads + mask_row0) and the local mask row of q's first local batch
  // row (0 under the rules: the mask splits with the batch or is whole
  // with a whole batch; the check also takes a whole mask over a split
  // batch).
  int mask = -1;
  int64_t heads = 1;
  int64_t mask_row0 = 0;
};

// Checks the local q, k, v (inputs q, q+1, q+2) and, if the call has one,
// the local key_padding_mask: rank 2, dtype bool, i32 or i64 (kUnimplemented
// otherwise, as a dtype dispatch), every key (dim 1 whole) and batch rows
// covering q's (kInternal otherwise). Returns the loop dims.
absl::StatusOr<AttentionDims> AttentionDimsOf(const KernelContext& ctx, int q);

// scaled_dot_product_attention: AttentionDimsOf(ctx, 0) and output 0.
absl::StatusOr<AttentionDims> CheckAttention(const KernelContext& ctx);
// scaled_dot_product_attention_grad(dout, q, k, v): AttentionDimsOf(ctx, 1),
// dout against q and v, and the outputs dq, dk, dv.
absl::StatusOr<AttentionDims> CheckAttentionGrad(const KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_ATTENTION_LAYOUT_H_
