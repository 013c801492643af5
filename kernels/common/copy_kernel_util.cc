#include "kernels/common/copy_kernel_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace oneflow_sbp::kernels {

void ZeroIfPartial(KernelContext& ctx, int out) {
  if (ctx.output_layout(out).is_partial()) ctx.output(out).SetZero();
}

absl::Status CopyFromInput(KernelContext& ctx, const BoxCopyPlan& plan, int in, int out,
                           BoxCopyCount* total) {
  absl::StatusOr<BoxCopyCount> n = BoxCopy(plan, &ctx.input(in), ctx.input_layout(in).slice,
                                           ctx.output(out), ctx.output_layout(out).slice);
  if (!n.ok()) return ctx.Internal(n.status().message());
  total->wanted += n->wanted;
  total->copied += n->copied;
  return absl::OkStatus();
}

absl::Status ZeroFill(KernelContext& ctx, const BoxCopyPlan& plan, int out) {
  absl::StatusOr<BoxCopyCount> n =
      BoxCopy(plan, nullptr, TensorSlice(), ctx.output(out), ctx.output_layout(out).slice);
  return n.ok() ? absl::OkStatus() : ctx.Internal(n.status().message());
}

absl::Status CheckCoverage(const KernelContext& ctx, int out, const BoxCopyCount& total) {
  if (total.copied == total.wanted || ctx.output_layout(out).is_partial()) {
    return absl::OkStatus();
  }
  std::vector<std::string> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const BlobLayout& l = ctx.input_layout(i);
    inputs.push_back(absl::StrCat(ctx.input_bn(i), ":", l.nd_sbp.ToString(), " slice ",
                                  l.slice.ToString()));
  }
  const BlobLayout& o = ctx.output_layout(out);
  return ctx.Internal(absl::StrCat(
      "rank ", ctx.parallel_id(), "'s local inputs determine ", total.copied, " of the ",
      total.wanted, " elements of ", ctx.output_bn(out), " ", o.logical.ToString(), ":",
      o.nd_sbp.ToString(), " slice ", o.slice.ToString(),
      " it must write; this layout cannot be computed locally (",
      absl::StrJoin(inputs, ", "), ")"));
}

std::vector<IndexRange> FullBox(absl::Span<const int64_t> dims) {
  std::vector<IndexRange> box;
  for (int64_t d : dims) box.push_back(IndexRange{0, d});
  return box;
}

std::vector<DimMap> IdentityMaps(int rank) {
  std::vector<DimMap> maps;
  for (int d = 0; d < rank; ++d) maps.push_back(SameDim(d));
  return maps;
}

}  // namespace oneflow_sbp::kernels
