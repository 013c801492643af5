// The CUDA kernels a training step needs besides the math families of
// cuda_kernels.cc: the layout ops, fill and zeros_like, add_n, the scalar
// ops and the activation gradients. Same contracts as the CPU kernels:
//   reshape flatten expand_dims squeeze transpose expand broadcast_like
//   cat stack split slice narrow slice_grad narrow_grad slice_update:
//     the CPU kernels themselves (view_kernels.h, concat_slice_kernels.h),
//     whose BoxCopy becomes one strided DeviceOps::CopyBox on a device
//     tensor; every dtype.
//   zeros_like, fill: every dtype (fill converts the value as the CPU does).
//   add_n: f32 f64 f16 bf16 i32 i64; a copy of in_0 then one in-place add
//     per further input, in input order (deterministic). Halves round after
//     every add, where the CPU rounds once: within the f16/bf16 tolerance.
//   scalar_add scalar_mul scalar_pow scalar_floordiv scalar_fmod: f32 f64
//     f16 bf16 i32 i64; scalar_div: f32 f64 f16 bf16. The operand and its
//     checks are the CPU's (scalar_args.h): int_operand when
//     has_int_operand is set; an integer tensor needs an int operand that
//     fits, not 0 for floordiv / fmod, not negative for pow. Integers wrap;
//     floordiv and fmod follow int_arith.h (shared host/device code).
//   relu_grad silu_grad gelu_grad: f32 f64 f16 bf16 (relu_grad also i32
//     i64), the CPU's formulas without fma contraction.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/storage/element_type.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/concat_slice_kernels.h"
#include "kernels/common/same_operands.h"
#include "kernels/common/scalar_args.h"
#include "kernels/common/view_kernels.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/scalar_fill.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

const std::vector<DataType> kFloating = {DataType::kFloat32, DataType::kFloat64,
                                         DataType::kFloat16, DataType::kBFloat16};
const std::vector<DataType> kAll = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                    DataType::kFloat64, DataType::kInt8,     DataType::kInt32,
                                    DataType::kInt64,   DataType::kUInt8,    DataType::kBool};

// fill (value from the attribute) or zeros_like (value 0): only the dims
// come from the input, the dtype is the inferred output's.
template <bool kZeros>
absl::Status FillKernel(KernelContext& ctx) {
  LocalTensor& out = ctx.output(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, ctx.input(0).dims(), out.dtype()));
  if (kZeros) {
    out.SetZero();
    return absl::OkStatus();
  }
  // The element converted on the host by the CPU kernel's ConvertElement
  // (a plain cast of an out-of-range or NaN double to an integer is
  // undefined; the CPU saturates and gives 0 for NaN), then its bytes.
  const double value = ctx.Attr<double>("value");
  uint64_t bits = 0;
  VisitDataType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = ConvertElement<T>(value);
    static_assert(sizeof(T) <= sizeof(bits));
    std::memcpy(&bits, &v, sizeof(T));  // little-endian: the low bytes
  });
  return Launched(ctx, cuda::Fill(static_cast<int>(ByteSizeOf(out.dtype())), out.raw_data(),
                                  out.elem_cnt(), bits));
}

absl::Status AddNKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameOperands(ctx));
  const LocalTensor& first = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, first.dims(), first.dtype()));
  LocalTensor& out = ctx.output(0);
  OFS_ASSIGN_OR_RETURN(DeviceOps * ops, ctx.Annotate(GetDeviceOps(out.device())));
  OFS_RETURN_IF_ERROR(ctx.Annotate(
      ops->Copy(out.raw_data(), first.raw_data(), out.byte_size(), CopyDirection::kSameDevice)));
  // One flat box of every element; add = true accumulates into out.
  StridedBox box;
  box.rank = 1;
  box.ext[0] = out.elem_cnt();
  box.src_stride[0] = box.dst_stride[0] = 1;
  for (int i = 1; i < ctx.num_inputs() && out.elem_cnt() > 0; ++i) {
    OFS_RETURN_IF_ERROR(ctx.Annotate(
        ops->CopyBox(out.dtype(), box, ctx.input(i).raw_data(), out.raw_data(), /*add=*/true)));
  }
  return absl::OkStatus();
}

// `op` is the CPU's name of the same operation (scalar_args.h), whose
// operand checks both devices share.
KernelFn ScalarKernel(cuda::ScalarCode code, ScalarOp op) {
  return [code, op](KernelContext& ctx) -> absl::Status {
    const LocalTensor& x = ctx.input(0);
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
    OFS_ASSIGN_OR_RETURN(const ScalarOperand s, CheckScalarOperand(ctx, op));
    const int dtype = static_cast<int>(x.dtype());
    if (x.dtype() == DataType::kInt32 || x.dtype() == DataType::kInt64) {
      if (code == cuda::ScalarCode::kDiv) return ctx.UnsupportedDtype(x.dtype(), ctx.input_bn(0));
      // CheckScalarOperand made sure of an int operand that fits.
      return Launched(ctx, cuda::ScalarInt(code, dtype, x.raw_data(), ctx.output(0).raw_data(),
                                           x.elem_cnt(), s.int_value));
    }
    bool floating = false;
    for (DataType t : kFloating) floating = floating || t == x.dtype();
    if (!floating) return ctx.UnsupportedDtype(x.dtype(), ctx.input_bn(0));
    // The operand in the compute type, as the CPU's s.As<C>(): an int
    // operand goes to float directly (int64 -> double -> float would round
    // twice); the float then travels exactly in the double.
    const double operand = x.dtype() == DataType::kFloat64
                               ? s.As<double>()
                               : static_cast<double>(s.As<float>());
    return Launched(ctx, cuda::Scalar(code, dtype, x.raw_data(), ctx.output(0).raw_data(),
                                      x.elem_cnt(), operand));
  };
}

KernelFn ActivationGradKernel(cuda::ActivationGradCode code) {
  return [code](KernelContext& ctx) -> absl::Status {
    const LocalTensor& saved = ctx.input(0);
    const LocalTensor& dy = ctx.input(1);
    if (saved.dims() != dy.dims() || saved.dtype() != dy.dtype()) {
      return ctx.Internal(absl::StrCat("local ", ctx.input_bn(0), " ",
                                       DataTypeName(saved.dtype()), DimsToString(saved.dims()),
                                       " and ", ctx.input_bn(1), " ", DataTypeName(dy.dtype()),
                                       DimsToString(dy.dims()), " differ"));
    }
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, dy.dims(), dy.dtype()));
    // The CPU's dtypes (relu_grad also i32 i64) and its kUnimplemented
    // naming dy for the others.
    const bool ints = code == cuda::ActivationGradCode::kRelu;
    bool known = ints && (dy.dtype() == DataType::kInt32 || dy.dtype() == DataType::kInt64);
    for (DataType t : kFloating) known = known || t == dy.dtype();
    if (!known) return ctx.UnsupportedDtype(dy.dtype(), ctx.input_bn(1));
    return Launched(ctx, cuda::ActivationGrad(code, static_cast<int>(dy.dtype()), saved.raw_data(),
                                              dy.raw_data(), ctx.output(0).raw_data(),
                                              dy.elem_cnt()));
  };
}

absl::Status RegisterCudaSupportKernels(KernelRegistry& registry) {
  OFS_RETURN_IF_ERROR(RegisterViewKernelsOn(registry, DeviceType::kCuda));
  OFS_RETURN_IF_ERROR(RegisterConcatSliceKernelsOn(registry, DeviceType::kCuda));
  using S = cuda::ScalarCode;
  using G = cuda::ActivationGradCode;
  using P = ScalarOp;
  // add_n's and the integer scalar ops' dtypes: the CPU's Signed.
  std::vector<DataType> add_n = kFloating;
  add_n.push_back(DataType::kInt32);
  add_n.push_back(DataType::kInt64);
  return RegisterKernels(registry, DeviceType::kCuda,
                         {
                             {"zeros_like", FillKernel<true>, kAll},
                             {"fill", FillKernel<false>, kAll},
                             {"add_n", AddNKernel, add_n},
                             {"scalar_add", ScalarKernel(S::kAdd, P::kAdd), add_n},
                             {"scalar_mul", ScalarKernel(S::kMul, P::kMul), add_n},
                             {"scalar_div", ScalarKernel(S::kDiv, P::kDiv), kFloating},
                             {"scalar_pow", ScalarKernel(S::kPow, P::kPow), add_n},
                             {"scalar_floordiv", ScalarKernel(S::kFloorDiv, P::kFloorDiv), add_n},
                             {"scalar_fmod", ScalarKernel(S::kFmod, P::kFmod), add_n},
                             {"relu_grad", ActivationGradKernel(G::kRelu), add_n},
                             {"silu_grad", ActivationGradKernel(G::kSilu), kFloating},
                             {"gelu_grad", ActivationGradKernel(G::kGelu), kFloating},
                         });
}

OFS_REGISTER_KERNELS(RegisterCudaSupportKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
