// CUDA kernels of embedding and embedding_grad: the CPU kernels' contract
// (kernels/cpu/index_kernels.cc) with the CPU's checks shared
// (kernels/common/index_args.h): i32 and i64 ids, GLOBAL ids checked
// against the logical vocab (kInvalidArgument naming the blob, position and
// value), a vocab-parallel rank (weight:S(0)) writing zero rows for ids
// outside its slice when out is P (kInternal when it is not) and skipping
// them in the grad, padding_idx and scale_grad_by_freq. The ids are copied
// to the host once for those checks; the launchers (embedding.cu) get local
// rows. embedding: every dtype (rows are copied bytes); embedding_grad f32
// f64 f16 bf16, accumulated in double in the CPU's order.
#include <cstdint>
#include <vector>

#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/index_args.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

absl::Status EmbeddingKernel(KernelContext& ctx) {
  const LocalTensor& weight = ctx.input("weight");
  OFS_RETURN_IF_ERROR(CheckEmbeddingOutput(ctx));
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> rows, LocalRows(ctx, 0, 1, /*axis=*/0));
  return Launched(ctx, cuda::Embedding(static_cast<int>(ByteSizeOf(weight.dtype())),
                                       weight.dim(0), weight.dim(1),
                                       static_cast<int64_t>(rows.size()), rows.data(),
                                       weight.raw_data(), ctx.output(0).raw_data()));
}

absl::Status EmbeddingGradKernel(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input("dy");
  OFS_ASSIGN_OR_RETURN(const EmbeddingGradArgs args, CheckEmbeddingGrad(ctx));
  // The CPU kernel's kUnimplemented naming dy_0 (its dispatch), not the
  // launcher's kInternal: the registry's dtype list does not restrict.
  const DataType t = dy.dtype();
  if (t != DataType::kFloat32 && t != DataType::kFloat64 && t != DataType::kFloat16 &&
      t != DataType::kBFloat16) {
    return ctx.UnsupportedDtype(t, ctx.input_bn(0));
  }
  LocalTensor& dx = ctx.output(0);
  return Launched(ctx, cuda::EmbeddingGrad(static_cast<int>(dy.dtype()), dx.dim(0), args.cols,
                                           static_cast<int64_t>(args.row.size()),
                                           args.row.data(),
                                           args.scale.empty() ? nullptr : args.scale.data(),
                                           dy.raw_data(), dx.raw_data()));
}

absl::Status RegisterCudaEmbeddingKernels(KernelRegistry& registry) {
  const std::vector<DataType> all = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                     DataType::kFloat64, DataType::kInt8,     DataType::kInt32,
                                     DataType::kInt64,   DataType::kUInt8,    DataType::kBool};
  const std::vector<DataType> floating = {DataType::kFloat32, DataType::kFloat64,
                                          DataType::kFloat16, DataType::kBFloat16};
  return RegisterKernels(registry, DeviceType::kCuda,
                         {{"embedding", EmbeddingKernel, all},
                          {"embedding_grad", EmbeddingGradKernel, floating}});
}

OFS_REGISTER_KERNELS(RegisterCudaEmbeddingKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
