// The matmul family's local planning (matmul, batch_matmul,
// broadcast_matmul), shared by the CPU kernel (matmul_kernels.cc) and the
// CUDA glue (kernels/cuda/cuda_kernels.cc), so both accept exactly the
// same calls, batch broadcasts included, with the same statuses.
//
// Broadcasting of batch dims is decided by LOGICAL shapes (as
// broadcast_loop.h does): a batch dim of a (or b) broadcasts when its
// logical extent is 1 (or missing) while out's is not, and must then be 1
// locally; other batch dims must have the same local extent in every
// operand that has them. Local extents that disagree, or local k that
// differs between a and b, are a layout the kernels cannot compute
// (kInternal naming the blobs).
#ifndef KERNELS_COMMON_MATMUL_PLAN_H_
#define KERNELS_COMMON_MATMUL_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

struct MatmulPlan {
  LocalDims out_dims;  // out's local dims: batch dims, then m, n
  int64_t m = 0, n = 0, k = 0;
  // Per matrix of out (row-major over out's batch dims): the index of the
  // matrix of a and of b it multiplies.
  std::vector<int64_t> a_matrix, b_matrix;
};

// Plans the call and checks what both devices check before computing:
// operands are matrices with equal local k and batch dims that form out's
// (kInternal), out's local dims and dtype (CheckOutput), _add_to_output
// shaped as out (kInternal), b's dtype a's (kUnimplemented naming b_0).
// The dtype of a is the caller's to check (its own list).
absl::StatusOr<MatmulPlan> CheckMatmul(const KernelContext& ctx);

// out matrices [first, first + count) multiply a matrices a_first + j *
// a_step and b matrices b_first + j * b_step (steps >= 0; 0 repeats one):
// one strided batched gemm.
struct MatmulRun {
  int64_t first = 0, count = 0;
  int64_t a_first = 0, a_step = 0;
  int64_t b_first = 0, b_step = 0;
};
// The plan's matrices as the fewest such runs, greedily in out's order
// (one run when a and b are each repeated or walked evenly; a partial
// broadcast such as a [2,1] x b [1,3] batch gives one run per a matrix).
std::vector<MatmulRun> MatmulRuns(const MatmulPlan& plan);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_MATMUL_PLAN_H_
