// CUDA kernels of the reductions, sgd_update, conv2d and argwhere, with the
// CPU kernels' contracts and checks (shared through kernels/cpu/
// reduce_args.h, conv_args.h, same_operands.h and index_args.h):
//   reduce_sum reduce_max reduce_min reduce_prod reduce_sum_like: f32 f64
//     f16 bf16 i32 i64; reduce_mean reduce_nansum: f32 f64 f16 bf16. One
//     block per output element when x's last dim is reduced, one thread a
//     column chunk when it is kept (reduce_softmax.cu), double accumulation
//     (int64 wrapping for integers); reduce_mean divides by the LOGICAL
//     reduced extent so split ranks give addends, as on the CPU.
//   sgd_update: f32 f64 f16 bf16, in place, the CPU's attributes and
//     double arithmetic (sgd.cu).
//   conv2d: f32 f64 f16 bf16, NCHW, im2col on the device plus cuBLAS
//     (conv.cu); every layout the CPU kernel computes (batch, filter and
//     in-channel splits), since both read only local extents.
//   argwhere: every input dtype, i32 / i64 output; the count stays on the
//     device (argwhere.cu).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/conv_args.h"
#include "kernels/common/index_args.h"
#include "kernels/common/reduce_args.h"
#include "kernels/common/same_operands.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/reduce_conv.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

const std::vector<DataType> kFloating = {DataType::kFloat32, DataType::kFloat64,
                                         DataType::kFloat16, DataType::kBFloat16};
const std::vector<DataType> kNumeric = {DataType::kFloat32,  DataType::kFloat64,
                                        DataType::kFloat16,  DataType::kBFloat16,
                                        DataType::kInt32,    DataType::kInt64};

const std::vector<DataType> kAll = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                    DataType::kFloat64, DataType::kInt8,     DataType::kInt32,
                                    DataType::kInt64,   DataType::kUInt8,    DataType::kBool};

bool In(DataType t, const std::vector<DataType>& types) {
  for (DataType u : types) {
    if (u == t) return true;
  }
  return false;
}

// ----------------------------------------------------------------- reduce --

// Runs `code` over `plan` (checked by the shared reduce_args.h) on input 0.
absl::Status LaunchReduce(KernelContext& ctx, cuda::ReduceCode code, const ReducePlan& plan,
                          const std::vector<DataType>& dtypes) {
  const LocalTensor& x = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, x.dtype()));
  if (!In(x.dtype(), dtypes)) return ctx.UnsupportedDtype(x.dtype(), ctx.input_bn(0));
  if (x.rank() > cuda::kMaxRank) {
    return ctx.Unimplemented(absl::StrCat(ctx.input_bn(0), " has rank ", x.rank(),
                                          "; the CUDA kernels take up to ", cuda::kMaxRank,
                                          " dims"));
  }
  LocalDims kept, kept_stride, red, red_stride;
  const LocalDims strides = RowMajorStrides(x.dims());
  for (int d = 0; d < x.rank(); ++d) {
    (plan.reduced[d] ? red : kept).push_back(x.dim(d));
    (plan.reduced[d] ? red_stride : kept_stride).push_back(strides[d]);
  }
  const double divisor =
      code == cuda::ReduceCode::kMean ? LogicalReducedCount(ctx, plan.reduced) : 1;
  return Launched(ctx, cuda::Reduce(code, static_cast<int>(x.dtype()),
                                    static_cast<int>(kept.size()), kept.data(),
                                    kept_stride.data(), static_cast<int>(red.size()), red.data(),
                                    red_stride.data(), divisor, x.raw_data(),
                                    ctx.output(0).raw_data()));
}

KernelFn ReduceKernel(cuda::ReduceCode code, std::vector<DataType> dtypes) {
  return [code, dtypes](KernelContext& ctx) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(const ReducePlan plan, PlanReduce(ctx));
    return LaunchReduce(ctx, code, plan, dtypes);
  };
}

absl::Status ReduceSumLikeKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const ReducePlan plan, PlanReduceSumLike(ctx));
  return LaunchReduce(ctx, cuda::ReduceCode::kSum, plan, kNumeric);
}

// ------------------------------------------------------------ sgd_update --

// sgd_update(model!, model_diff; learning_rate, scale, weight_decay) in
// place, as the CPU kernel (optimizer_kernels.cc).
absl::Status SgdUpdateKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameOperands(ctx));
  LocalTensor model = ctx.input(0);  // a handle: writes reach the caller
  if (!In(model.dtype(), kFloating)) return ctx.UnsupportedDtype(model.dtype(), ctx.input_bn(0));
  return Launched(ctx, cuda::SgdUpdate(static_cast<int>(model.dtype()), model.elem_cnt(),
                                       ctx.Attr<double>("learning_rate"),
                                       ctx.Attr<double>("scale"),
                                       ctx.Attr<double>("weight_decay"), model.raw_data(),
                                       ctx.input(1).raw_data()));
}

// ----------------------------------------------------------------- conv2d --

absl::Status Conv2dKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const ConvGeometry g, CheckConv2d(ctx));
  const LocalTensor& in = ctx.input("in");
  if (!In(in.dtype(), kFloating)) return ctx.UnsupportedDtype(in.dtype(), "in_0");
  const void* bias = ctx.has_input("bias") ? ctx.input("bias").raw_data() : nullptr;
  const void* add =
      ctx.has_input("_add_to_output") ? ctx.input("_add_to_output").raw_data() : nullptr;
  return Launched(ctx, cuda::Conv2d(static_cast<int>(in.dtype()), g, in.raw_data(),
                                    ctx.input("weight").raw_data(), bias, add,
                                    ctx.output(0).raw_data()));
}

// --------------------------------------------------------------- argwhere --

absl::Status ArgwhereKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckArgwhere(ctx));
  const LocalTensor& input = ctx.input(0);
  if (input.rank() > cuda::kMaxRank) {
    return ctx.Unimplemented(absl::StrCat("input_0 has rank ", input.rank(),
                                          "; the CUDA argwhere takes up to ", cuda::kMaxRank,
                                          " dims"));
  }
  return Launched(ctx, cuda::Argwhere(static_cast<int>(input.dtype()), input.rank(),
                                      input.dims().data(), input.elem_cnt(), input.raw_data(),
                                      static_cast<int>(ctx.output(0).dtype()),
                                      ctx.output(0).raw_data(), ctx.output(1).raw_data()));
}

absl::Status RegisterCudaReduceConvKernels(KernelRegistry& registry) {
  using R = cuda::ReduceCode;
  return RegisterKernels(registry, DeviceType::kCuda,
                         {
                             {"reduce_sum", ReduceKernel(R::kSum, kNumeric), kNumeric},
                             {"reduce_mean", ReduceKernel(R::kMean, kFloating), kFloating},
                             {"reduce_max", ReduceKernel(R::kMax, kNumeric), kNumeric},
                             {"reduce_min", ReduceKernel(R::kMin, kNumeric), kNumeric},
                             {"reduce_prod", ReduceKernel(R::kProd, kNumeric), kNumeric},
                             {"reduce_nansum", ReduceKernel(R::kNanSum, kFloating), kFloating},
                             {"reduce_sum_like", ReduceSumLikeKernel, kNumeric},
                             {"sgd_update", SgdUpdateKernel, kFloating},
                             {"conv2d", Conv2dKernel, kFloating},
                             {"argwhere", ArgwhereKernel, kAll},
                         });
}

OFS_REGISTER_KERNELS(RegisterCudaReduceConvKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
