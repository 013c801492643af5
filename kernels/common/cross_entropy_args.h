// sparse_softmax_cross_entropy[_ms](_grad)'s layout and label checks and
// the class group of the class-split layout, shared by the CPU kernels
// (cross_entropy_kernels.cc, which describes the contract) and the CUDA
// glue (kernels/cuda/cuda_cross_entropy_kernels.cc), so both accept and
// refuse the same calls with the same messages. Labels on a device are
// copied to the host for the check (one synchronising copy).
#ifndef KERNELS_COMMON_CROSS_ENTROPY_ARGS_H_
#define KERNELS_COMMON_CROSS_ENTROPY_ARGS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/communicator.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// The local layout of a (logits, label) pair: `rows` rows of `n` classes
// starting at global class `lo` of `depth`.
struct RowsOfClasses {
  int64_t rows = 0, n = 0, lo = 0, depth = 0;
};

struct SparseCeArgs {
  RowsOfClasses rc;
  // Per row: the local column of its label, or -1 where another rank holds
  // the label's class.
  std::vector<int64_t> column;
  // The ranks that split the classes with this one (forward only; null when
  // this rank holds whole rows). Row maxima and sums all-reduce over it.
  std::shared_ptr<comm::Communicator> group;
};

// Forward (prediction, label; depth) -> (prob, out): label holds the rows of
// prediction (kInternal), depth is the logical class dim and every label in
// [0, depth) (kInvalidArgument), out P exactly on the mesh axes that split
// the classes (kInternal), and their group (kFailedPrecondition without a
// world).
absl::StatusOr<SparseCeArgs> CheckSparseCe(KernelContext& ctx);

// Grad (dy, label, prob; depth) -> prediction_diff: as above for
// (prob, label), dy shaped as label with prob's dtype (kInternal).
absl::StatusOr<SparseCeArgs> CheckSparseCeGrad(KernelContext& ctx);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_CROSS_ENTROPY_ARGS_H_
