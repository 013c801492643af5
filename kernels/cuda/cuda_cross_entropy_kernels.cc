// CUDA kernels of sparse_softmax_cross_entropy[_ms] and their grads: the
// CPU kernels' contract (kernels/cpu/cross_entropy_kernels.cc) with
// the CPU's checks shared (kernels/common/cross_entropy_args.h). Labels
// (i32, i64) are copied to the host once for the check and become each
// row's local column. The class-split layout of _ms all-reduces the row
// maxima (kMax) and then the row sums of exp(x - max) over the class group,
// as the CPU kernel does; the statistics go through HOST buffers of one
// double per row (a device-to-host copy, the collective, a copy back),
// which every Communicator backend takes (the NCCL one stages host
// buffers itself). Statistics in double, as on the CPU. f32 f64 f16 bf16.
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/cross_entropy_args.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

// All-reduces `rows` device doubles over `group` through a host buffer.
absl::Status AllReduceRows(const KernelContext& ctx, comm::Communicator& group, double* dev,
                           int64_t rows, comm::ReduceOp op) {
  std::vector<double> host(static_cast<size_t>(rows));
  const int64_t bytes = rows * static_cast<int64_t>(sizeof(double));
  OFS_RETURN_IF_ERROR(Launched(ctx, oneflow_sbp::cuda::Copy(host.data(), dev, bytes, 2)));
  comm::CallOptions options;
  options.reduce_op = op;
  OFS_RETURN_IF_ERROR(ctx.Annotate(
      group.AllReduce(host.data(), host.data(), rows, DataType::kFloat64, options)));
  return Launched(ctx, oneflow_sbp::cuda::Copy(dev, host.data(), bytes, 1));
}

absl::Status SparseCeKernel(KernelContext& ctx) {
  const LocalTensor& pred = ctx.input("prediction");
  OFS_ASSIGN_OR_RETURN(const SparseCeArgs args, CheckSparseCe(ctx));
  const RowsOfClasses& rc = args.rc;
  const int dtype = static_cast<int>(pred.dtype());
  // [max | sum], one double per row each.
  Scratch<double> stats;
  OFS_RETURN_IF_ERROR(Launched(ctx, stats.Allocate(2 * rc.rows)));
  double* mx = stats.get();
  double* sum = mx + rc.rows;
  OFS_RETURN_IF_ERROR(
      Launched(ctx, cuda::RowMax(dtype, rc.rows, rc.n, pred.raw_data(), mx)));
  if (args.group) {
    OFS_RETURN_IF_ERROR(AllReduceRows(ctx, *args.group, mx, rc.rows, comm::ReduceOp::kMax));
  }
  OFS_RETURN_IF_ERROR(
      Launched(ctx, cuda::RowSumExp(dtype, rc.rows, rc.n, pred.raw_data(), mx, sum)));
  if (args.group) {
    OFS_RETURN_IF_ERROR(AllReduceRows(ctx, *args.group, sum, rc.rows, comm::ReduceOp::kSum));
  }
  return Launched(ctx, cuda::SparseCrossEntropy(dtype, rc.rows, rc.n, pred.raw_data(), mx, sum,
                                                args.column.data(), ctx.output(0).raw_data(),
                                                ctx.output(1).raw_data()));
}

absl::Status SparseCeGradKernel(KernelContext& ctx) {
  const LocalTensor& prob = ctx.input("prob");
  OFS_ASSIGN_OR_RETURN(const SparseCeArgs args, CheckSparseCeGrad(ctx));
  return Launched(ctx, cuda::SparseCrossEntropyGrad(
                           static_cast<int>(prob.dtype()), args.rc.rows, args.rc.n,
                           args.column.data(), prob.raw_data(), ctx.input("dy").raw_data(),
                           ctx.output(0).raw_data()));
}

absl::Status RegisterCudaCrossEntropyKernels(KernelRegistry& registry) {
  const std::vector<DataType> dtypes = {DataType::kFloat32, DataType::kFloat64,
                                        DataType::kFloat16, DataType::kBFloat16};
  return RegisterKernels(registry, DeviceType::kCuda,
                         {{"sparse_softmax_cross_entropy", SparseCeKernel, dtypes},
                          {"sparse_softmax_cross_entropy_grad", SparseCeGradKernel, dtypes},
                          {"sparse_softmax_cross_entropy_ms", SparseCeKernel, dtypes},
                          {"sparse_softmax_cross_entropy_ms_grad", SparseCeGradKernel, dtypes}});
}

OFS_REGISTER_KERNELS(RegisterCudaCrossEntropyKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
