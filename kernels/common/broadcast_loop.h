// NumPy-style broadcasting over LOCAL shards, decided by LOGICAL shapes.
//
// A dim of an operand broadcasts when its logical extent is 1 (or it is
// missing) while the result's logical extent is not; such a dim must be
// 1 locally too, and reads with stride 0. Every other aligned dim is
// "full": all full operands must have the same local extent, which is the
// output's local extent. Deciding by logical shapes matters: a shard that
// happens to hold one row of a split dim must not be silently broadcast.
//
// Example (where(c, x, y), c bool[4,1] B, x f32[4,6] S(1) on rank 1 of 2,
// y f32[6] S(0)):
//   BroadcastPlan p = *PlanBroadcast(ctx, {0, 1, 2}, /*out=*/0);
//   p.out_dims;     // [4,3]
//   p.strides[0];   // [1,0]   c repeats along dim 1
//   ForEachBroadcastRun(p, [&](int64_t out, const int64_t* in, int64_t n,
//                              const int64_t* in_step) { ... });
#ifndef KERNELS_COMMON_BROADCAST_LOOP_H_
#define KERNELS_COMMON_BROADCAST_LOOP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

struct BroadcastPlan {
  // Local output dims, computed from the local inputs.
  LocalDims out_dims;
  // Per operand, its element stride along each output dim (0: broadcast).
  std::vector<LocalDims> strides;
};

// The plan for `inputs` (input indices of ctx) into output `out`, from the
// blobs' logical shapes and the local inputs' dims. kInternal naming the
// blobs when local extents disagree (a layout this loop cannot compute).
absl::StatusOr<BroadcastPlan> PlanBroadcast(const KernelContext& ctx,
                                            absl::Span<const int> inputs, int out);

// Calls run(out_offset, in_offsets, n, in_steps) for every innermost run of
// n output elements: output elements out_offset .. + n - 1 (contiguous)
// read operand k at in_offsets[k] + j * in_steps[k].
template <typename Run>
void ForEachBroadcastRun(const BroadcastPlan& plan, Run&& run) {
  const int rank = static_cast<int>(plan.out_dims.size());
  const int k = static_cast<int>(plan.strides.size());
  int64_t count = 1;
  for (int64_t d : plan.out_dims) count *= d;
  if (count == 0) return;
  const int64_t row = rank ? plan.out_dims[rank - 1] : 1;
  std::vector<int64_t> steps(k, 0), offsets(k, 0);
  for (int i = 0; i < k; ++i) steps[i] = rank ? plan.strides[i][rank - 1] : 0;
  LocalDims idx(rank, 0);
  for (int64_t out = 0; out < count; out += row) {
    run(out, offsets.data(), row, steps.data());
    for (int d = rank - 2; d >= 0; --d) {
      for (int i = 0; i < k; ++i) offsets[i] += plan.strides[i][d];
      if (++idx[d] < plan.out_dims[d]) break;
      for (int i = 0; i < k; ++i) offsets[i] -= plan.strides[i][d] * plan.out_dims[d];
      idx[d] = 0;
    }
  }
}

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_BROADCAST_LOOP_H_
