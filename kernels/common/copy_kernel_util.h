// Helpers for kernels built on BoxCopy (box_copy.h): the partial-output
// convention and the coverage check that turns a rule/kernel disagreement
// into kInternal.
//
// Convention: a rank writes the elements of an output that its local
// inputs determine. If the output is partial (some mesh axis P), the
// elements it cannot determine are zero (its addend of them is 0; another
// rank contributes them: slice's x:S(i) -> y:P). If the output is not
// partial, every local element must be determined by local inputs;
// otherwise the layout the caller chose cannot be computed locally, which
// is kInternal naming the op, the blob, the counts and the layouts.
//
// Typical kernel:
//   OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, ctx.output_layout(0).local_dims(), dtype));
//   ZeroIfPartial(ctx, 0);
//   BoxCopyCount n;
//   OFS_RETURN_IF_ERROR(CopyFromInput(ctx, plan, /*in=*/0, /*out=*/0, &n));
//   return CheckCoverage(ctx, 0, n);
#ifndef KERNELS_COMMON_COPY_KERNEL_UTIL_H_
#define KERNELS_COMMON_COPY_KERNEL_UTIL_H_

#include <vector>

#include "absl/status/status.h"
#include "kernels/common/box_copy.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// Zeroes output `out` if its layout is partial.
void ZeroIfPartial(KernelContext& ctx, int out);

// BoxCopy from input `in` to output `out` with their slices; adds the
// counts to *total.
absl::Status CopyFromInput(KernelContext& ctx, const BoxCopyPlan& plan, int in, int out,
                           BoxCopyCount* total);

// Zero-fills the points of `plan` that land in output `out`.
absl::Status ZeroFill(KernelContext& ctx, const BoxCopyPlan& plan, int out);

// OK if every wanted element was copied, or the output is partial;
// kInternal otherwise (see the header comment).
absl::Status CheckCoverage(const KernelContext& ctx, int out, const BoxCopyCount& total);

// The box [0, extent) of every dim of `dims`.
std::vector<IndexRange> FullBox(absl::Span<const int64_t> dims);

// One identity DimMap per dim of a rank-`rank` tensor.
std::vector<DimMap> IdentityMaps(int rank);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_COPY_KERNEL_UTIL_H_
