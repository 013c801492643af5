// CUDA kernels of the sentence-encoder head (masked_mean_pool,
// l2_normalize and their grads): the CPU kernels' contract
// (kernels/cpu/encoder_kernels.cc) with the CPU's layout checks shared
// (kernels/common/encoder_args.h); the arithmetic is in encoder.cu. f32
// f64 f16 bf16 for the data, any dtype for the mask.
#include <vector>

#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/encoder_args.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

const std::vector<DataType> kFloating = {DataType::kFloat32, DataType::kFloat64,
                                         DataType::kFloat16, DataType::kBFloat16};

// masked_mean_pool (kGrad false) or its grad: data is input 0, mask input 1.
template <bool kGrad>
absl::Status MaskedMeanPoolKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const PoolDims p,
                       kGrad ? CheckMaskedMeanPoolGrad(ctx) : CheckMaskedMeanPool(ctx));
  OFS_RETURN_IF_ERROR(RequireDtype(ctx, kFloating, 0));
  const LocalTensor& mask = ctx.input(1);
  return Launched(ctx, cuda::MaskedMeanPool(static_cast<int>(ctx.input(0).dtype()), kGrad, p.b,
                                            p.s, p.h, mask.raw_data(),
                                            static_cast<int>(mask.dtype()), p.mask_row0,
                                            ctx.input(0).raw_data(), ctx.output(0).raw_data()));
}

// l2_normalize (kGrad false: input x) or its grad (inputs dy, x).
template <bool kGrad>
absl::Status L2NormalizeKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const L2Dims d, CheckL2Normalize(ctx));
  OFS_RETURN_IF_ERROR(RequireDtype(ctx, kFloating, 0));
  const LocalTensor& x = ctx.input(kGrad ? 1 : 0);
  return Launched(ctx, cuda::L2Normalize(static_cast<int>(x.dtype()), kGrad, d.outer, d.n,
                                         d.inner, d.epsilon, x.raw_data(),
                                         kGrad ? ctx.input(0).raw_data() : nullptr,
                                         ctx.output(0).raw_data()));
}

absl::Status RegisterCudaEncoderKernels(KernelRegistry& registry) {
  return RegisterKernels(registry, DeviceType::kCuda,
                         {
                             {"l2_normalize", L2NormalizeKernel<false>, kFloating},
                             {"l2_normalize_grad", L2NormalizeKernel<true>, kFloating},
                             {"masked_mean_pool", MaskedMeanPoolKernel<false>, kFloating},
                             {"masked_mean_pool_grad", MaskedMeanPoolKernel<true>, kFloating},
                         });
}

OFS_REGISTER_KERNELS(RegisterCudaEncoderKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
