// CUDA kernels of gather, dim_gather, where, cast, the comparisons
// (broadcast_equal, _not_equal, _greater, _greater_equal, _less,
// _less_equal), logical_not, broadcast_fmod and tril: the CPU kernels'
// contracts with their checks shared (kernels/common/index_args.h,
// select_args.h, broadcast_loop.h), the work in the launchers of
// embedding.cu (Gather) and select.cu.
//   gather, dim_gather: every dtype; i32 i64 indices copied to the host
//     once and checked there against the logical dim (as embedding); a
//     rank lacking an index writes zeros when the output is partial
//     (gather's in:S(axis) -> out:P), kInternal otherwise. dim_gather
//     becomes a Gather of single elements at the host-computed offsets.
//   where: every dtype of x, y (bytes are selected), condition bool.
//   comparisons: f32 f64 f16 bf16 i32 i64 bool -> bool.
//   broadcast_fmod: f32 f64 f16 bf16 i32 i64; an integer 0 divisor is the
//     CPU's kInvalidArgument (a device flag read back after the kernel).
//   logical_not: bool f32 f64 f16 bf16 i32 i64 (1 where x == 0, x's dtype).
//   cast: every dtype to every dtype, ConvertElement's rules.
//   tril: every dtype, the diagonal in GLOBAL coordinates.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/broadcast_loop.h"
#include "kernels/common/index_args.h"
#include "kernels/common/select_args.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/select.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

// The CPU's dtype lists (binary_kernels.cc, elementwise_kernels.cc): every
// type; Signed; Comparable (also logical_not's).
const std::vector<DataType> kAll = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                    DataType::kFloat64, DataType::kInt8,     DataType::kInt32,
                                    DataType::kInt64,   DataType::kUInt8,    DataType::kBool};
const std::vector<DataType> kSigned = {DataType::kFloat32, DataType::kFloat64,
                                       DataType::kFloat16, DataType::kBFloat16,
                                       DataType::kInt32,   DataType::kInt64};
const std::vector<DataType> kComparable = {DataType::kFloat32,  DataType::kFloat64,
                                           DataType::kFloat16,  DataType::kBFloat16,
                                           DataType::kInt32,    DataType::kInt64,
                                           DataType::kBool};

int Code(DataType t) { return static_cast<int>(t); }
int Bytes(DataType t) { return static_cast<int>(ByteSizeOf(t)); }

int64_t Product(const LocalDims& d, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= d[i];
  return p;
}

// The broadcast plan of `inputs` into output 0 with `out_dtype`, within
// the launchers' rank (kUnimplemented naming the output beyond it).
absl::StatusOr<BroadcastPlan> Plan(KernelContext& ctx, absl::Span<const int> inputs,
                                   DataType out_dtype) {
  OFS_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, inputs, 0));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, out_dtype));
  if (plan.out_dims.size() > static_cast<size_t>(cuda::kMaxRank)) {
    return ctx.Unimplemented(absl::StrCat(ctx.output_bn(0), " has rank ", plan.out_dims.size(),
                                          "; the CUDA kernels take up to ", cuda::kMaxRank,
                                          " dims"));
  }
  return plan;
}

int Rank(const BroadcastPlan& plan) { return static_cast<int>(plan.out_dims.size()); }

// ---------------------------------------------------------------- gather --

absl::Status GatherKernel(KernelContext& ctx) {
  const LocalTensor& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(const int axis, CheckGather(ctx));  // index_args.h
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> rows, LocalRows(ctx, 0, 1, axis));
  return Launched(ctx, cuda::Gather(Bytes(in.dtype()), Product(in.dims(), 0, axis), in.dim(axis),
                                    Product(in.dims(), axis + 1, in.rank()),
                                    static_cast<int64_t>(rows.size()), rows.data(),
                                    in.raw_data(), ctx.output(0).raw_data(), "gather"));
}

absl::Status DimGatherKernel(KernelContext& ctx) {
  const LocalTensor& input = ctx.input("input");
  OFS_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, DimGatherOffsets(ctx));
  // Each output element is a one-element "row" of input seen flat.
  return Launched(ctx, cuda::Gather(Bytes(input.dtype()), 1, input.elem_cnt(), 1,
                                    static_cast<int64_t>(offsets.size()), offsets.data(),
                                    input.raw_data(), ctx.output(0).raw_data(), "dim_gather"));
}

// ------------------------------------------------------ broadcasting ops --

absl::Status WhereKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckWhereOperands(ctx));
  const LocalTensor& x = ctx.input(1);
  OFS_ASSIGN_OR_RETURN(const BroadcastPlan plan, Plan(ctx, {0, 1, 2}, x.dtype()));
  OFS_RETURN_IF_ERROR(RequireDtype(ctx, kComparable, 1));
  return Launched(ctx, cuda::Where(Bytes(x.dtype()), Rank(plan), plan.out_dims.data(),
                                   plan.strides[0].data(), plan.strides[1].data(),
                                   plan.strides[2].data(), ctx.input(0).data<bool>(),
                                   x.raw_data(), ctx.input(2).raw_data(),
                                   ctx.output(0).raw_data()));
}

KernelFn CompareKernel(cuda::CompareCode code) {
  return [code](KernelContext& ctx) -> absl::Status {
    OFS_RETURN_IF_ERROR(CheckSameDtype(ctx, 0, 1));
    const LocalTensor& x = ctx.input(0);
    OFS_ASSIGN_OR_RETURN(const BroadcastPlan plan, Plan(ctx, {0, 1}, DataType::kBool));
    OFS_RETURN_IF_ERROR(RequireDtype(ctx, kComparable, 0));
    return Launched(ctx, cuda::Compare(code, Code(x.dtype()), Rank(plan), plan.out_dims.data(),
                                       plan.strides[0].data(), plan.strides[1].data(),
                                       x.raw_data(), ctx.input(1).raw_data(),
                                       ctx.output(0).data<bool>()));
  };
}

absl::Status FmodKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameDtype(ctx, 0, 1));
  const LocalTensor& x = ctx.input(0);
  OFS_ASSIGN_OR_RETURN(const BroadcastPlan plan, Plan(ctx, {0, 1}, x.dtype()));
  OFS_RETURN_IF_ERROR(RequireDtype(ctx, kSigned, 0));
  bool by_zero = false;
  OFS_RETURN_IF_ERROR(Launched(
      ctx, cuda::BroadcastFmod(Code(x.dtype()), Rank(plan), plan.out_dims.data(),
                               plan.strides[0].data(), plan.strides[1].data(), x.raw_data(),
                               ctx.input(1).raw_data(), ctx.output(0).raw_data(), &by_zero)));
  // The CPU kernel's message (binary_kernels.cc).
  return by_zero ? ctx.InvalidArgument("integer fmod by 0 in y_0") : absl::OkStatus();
}

// ---------------------------------------------------------- elementwise --

absl::Status LogicalNotKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  OFS_RETURN_IF_ERROR(RequireDtype(ctx, kComparable, 0));
  return Launched(ctx, cuda::LogicalNot(Code(x.dtype()), x.raw_data(), ctx.output(0).raw_data(),
                                        x.elem_cnt()));
}

absl::Status CastKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_ASSIGN_OR_RETURN(const DataType to, CheckCast(ctx));
  return Launched(ctx, cuda::Cast(Code(x.dtype()), Code(to), x.raw_data(),
                                  ctx.output(0).raw_data(), x.elem_cnt()));
}

absl::Status TrilKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int64_t lead, CheckTril(ctx));
  const LocalTensor& in = ctx.input(0);
  const int r = in.rank();
  const int64_t rows = in.dim(r - 2), cols = in.dim(r - 1);
  const int64_t mats = rows * cols == 0 ? 0 : in.elem_cnt() / (rows * cols);
  return Launched(ctx, cuda::Tril(Bytes(in.dtype()), mats, rows, cols, lead, in.raw_data(),
                                  ctx.output(0).raw_data()));
}

absl::Status RegisterCudaSelectKernels(KernelRegistry& registry) {
  using C = cuda::CompareCode;
  return RegisterKernels(registry, DeviceType::kCuda,
                         {
                             {"gather", GatherKernel, kAll},
                             {"dim_gather", DimGatherKernel, kAll},
                             {"where", WhereKernel, kComparable},
                             {"broadcast_equal", CompareKernel(C::kEqual), kComparable},
                             {"broadcast_not_equal", CompareKernel(C::kNotEqual), kComparable},
                             {"broadcast_greater", CompareKernel(C::kGreater), kComparable},
                             {"broadcast_greater_equal", CompareKernel(C::kGreaterEqual),
                              kComparable},
                             {"broadcast_less", CompareKernel(C::kLess), kComparable},
                             {"broadcast_less_equal", CompareKernel(C::kLessEqual), kComparable},
                             {"broadcast_fmod", FmodKernel, kSigned},
                             {"logical_not", LogicalNotKernel, kComparable},
                             {"cast", CastKernel, kAll},
                             {"tril", TrilKernel, kAll},
                         });
}

OFS_REGISTER_KERNELS(RegisterCudaSelectKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
