// CUDA kernels of the registry (DeviceType::kCuda): the same contract as
// the CPU kernels (kernel_context.h), with the arithmetic in the .cu
// launchers (cuda_launch.h). This file checks layouts and dims exactly as
// the CPU kernels do, reusing their planning helpers (PlanBroadcast) where
// they are shared, and turns launcher errors into statuses naming the op.
//
// Ops and dtypes (f32 f64 f16 bf16 unless noted; others kUnimplemented):
//   unary math: abs ceil cos erf exp fast_gelu floor gelu log mish negative
//     reciprocal relu round rsqrt sigmoid sign silu sin softplus sqrt
//     square tanh; abs negative relu sign square also i32 i64 (wrapping);
//     identity, copy (every dtype, device memcpy)
//   broadcast_add/sub/mul/div/maximum/minimum/pow; all but div also i32
//     i64 (wrapping; an integer pow with a negative exponent is the CPU's
//     kInvalidArgument, from a device flag read back after the kernel)
//   bias_add; dropout, dropout_grad (the CPU kernel's Philox stream)
//   (the reductions: cuda_reduce_conv_kernels.cc)
//   softmax, log_softmax, softmax_grad, log_softmax_grad
//   matmul, batch_matmul, broadcast_matmul (cuBLAS), every batch broadcast
//     the CPU kernel takes (its planning, matmul_plan.h)
//   nn.cu and attention.cu (the CPU's arithmetic: norms, attention and adam
//     in double, halves keep f32 statistics; rotary in float for
//     halves): layer_norm, layer_norm_grad, layer_norm_param_grad,
//     rms_norm, rms_norm_grad, rms_norm_param_grad (parameters over the
//     normalised dims only), adam_update, rotary_embedding,
//     rotary_embedding_grad (even head dim), scaled_dot_product_attention,
//     scaled_dot_product_attention_grad (head dims up to 256; optional
//     key_padding_mask bool i32 i64)
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/attention_layout.h"
#include "kernels/common/broadcast_loop.h"
#include "kernels/common/dropout_args.h"
#include "kernels/common/matmul_plan.h"
#include "kernels/common/norm_layout.h"
#include "kernels/common/same_operands.h"
#include "kernels/common/select_args.h"
#include "kernels/cuda/cuda_glue.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

const std::vector<DataType> kFloating = {DataType::kFloat32, DataType::kFloat64,
                                         DataType::kFloat16, DataType::kBFloat16};
// The CPU's Signed list: the unary and binary ops that take integers.
const std::vector<DataType> kSigned = {DataType::kFloat32, DataType::kFloat64,
                                       DataType::kFloat16, DataType::kBFloat16,
                                       DataType::kInt32,   DataType::kInt64};

bool IsFloating(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}

int Code(DataType t) { return static_cast<int>(t); }

absl::Status RequireFloating(const KernelContext& ctx, DataType t, absl::string_view bn) {
  return IsFloating(t) ? absl::OkStatus() : ctx.UnsupportedDtype(t, bn);
}

absl::Status RequireRank(const KernelContext& ctx, int rank, absl::string_view bn) {
  if (rank <= cuda::kMaxRank) return absl::OkStatus();
  return ctx.Unimplemented(absl::StrCat(bn, " has rank ", rank, "; the CUDA kernels take up to ",
                                        cuda::kMaxRank, " dims"));
}

// ------------------------------------------------------------------ unary --

// `dtypes`: the CPU kernel's list for the op (kFloating or kSigned).
KernelFn UnaryKernel(cuda::UnaryCode code, const std::vector<DataType>& dtypes) {
  return [code, dtypes](KernelContext& ctx) -> absl::Status {
    const LocalTensor& x = ctx.input(0);
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
    OFS_RETURN_IF_ERROR(RequireDtype(ctx, dtypes, 0));
    return Launched(ctx, cuda::Unary(code, Code(x.dtype()), x.raw_data(),
                                     ctx.output(0).raw_data(), x.elem_cnt()));
  };
}

absl::Status CopyKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  return Launched(ctx, oneflow_sbp::cuda::Copy(ctx.output(0).raw_data(), x.raw_data(),
                                               x.byte_size(), /*kind=*/0));
}

// ----------------------------------------------------------------- binary --

// `dtypes` as in UnaryKernel.
KernelFn BinaryKernel(cuda::BinaryCode code, const std::vector<DataType>& dtypes) {
  return [code, dtypes](KernelContext& ctx) -> absl::Status {
    const LocalTensor& a = ctx.input(0);
    const LocalTensor& b = ctx.input(1);
    // The CPU's check and status (kInternal naming both blobs' dtypes).
    OFS_RETURN_IF_ERROR(CheckSameDtype(ctx, 0, 1));
    OFS_RETURN_IF_ERROR(RequireDtype(ctx, dtypes, 0));
    OFS_ASSIGN_OR_RETURN(const BroadcastPlan plan, PlanBroadcast(ctx, {0, 1}, 0));
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, a.dtype()));
    const int rank = static_cast<int>(plan.out_dims.size());
    OFS_RETURN_IF_ERROR(RequireRank(ctx, rank, ctx.output_bn(0)));
    bool negative_exponent = false;
    OFS_RETURN_IF_ERROR(Launched(
        ctx, cuda::Binary(code, Code(a.dtype()), rank, plan.out_dims.data(),
                          plan.strides[0].data(), plan.strides[1].data(), a.raw_data(),
                          b.raw_data(), ctx.output(0).raw_data(), &negative_exponent)));
    // The CPU kernel's status and message (binary_kernels.cc).
    if (negative_exponent) {
      return ctx.InvalidArgument("integer power with a negative exponent in y_0");
    }
    return absl::OkStatus();
  };
}

absl::Status BiasAddKernel(KernelContext& ctx) {
  const LocalTensor& a = ctx.input(0);
  const LocalTensor& b = ctx.input(1);
  OFS_ASSIGN_OR_RETURN(int axis, ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>("axis"),
                                                                 a.rank(), "attribute axis")));
  if (b.rank() != 1 || b.dim(0) != a.dim(axis)) {
    return ctx.Internal(absl::StrCat("local b_0 ", DimsToString(b.dims()),
                                     " does not match local a_0 ", DimsToString(a.dims()),
                                     " at axis ", axis));
  }
  if (b.dtype() != a.dtype()) return ctx.UnsupportedDtype(b.dtype(), "b_0");
  OFS_RETURN_IF_ERROR(RequireFloating(ctx, a.dtype(), "a_0"));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, a.dims(), a.dtype()));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= a.dim(d);
  for (int d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  return Launched(ctx, cuda::BiasAdd(Code(a.dtype()), outer, a.dim(axis), inner, a.raw_data(),
                                     b.raw_data(), ctx.output(0).raw_data()));
}

// ---------------------------------------------------------------- dropout --

absl::Status DropoutKernel(KernelContext& ctx) {
  const LocalTensor& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(const DropoutArgs args, CheckDropout(ctx));
  OFS_RETURN_IF_ERROR(RequireFloating(ctx, in.dtype(), "in_0"));
  OFS_RETURN_IF_ERROR(RequireRank(ctx, in.rank(), "in_0"));
  // Element i of the shard is logical element offset + sum(idx * stride):
  // the logical row-major position, which is what makes the mask the same
  // under every layout.
  const BlobLayout& layout = ctx.input_layout(0);
  const int rank = in.rank();
  LocalDims logical(rank);
  for (int d = 0; d < rank; ++d) logical[d] = layout.logical.shape.dim(d);
  const LocalDims stride = RowMajorStrides(logical);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += layout.slice.range(d).begin * stride[d];
  return Launched(ctx, cuda::Dropout(Code(in.dtype()), rank, in.dims().data(), stride.data(),
                                     offset, args.seed, args.threshold, args.scale, in.raw_data(),
                                     args.add != nullptr ? args.add->raw_data() : nullptr,
                                     ctx.output(0).raw_data(), ctx.output(1).data<bool>()));
}

absl::Status DropoutGradKernel(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input(0);
  const LocalTensor& mask = ctx.input(1);
  OFS_RETURN_IF_ERROR(CheckDropoutGrad(ctx));
  OFS_RETURN_IF_ERROR(RequireFloating(ctx, dy.dtype(), "dy_0"));
  return Launched(ctx, cuda::DropoutGrad(Code(dy.dtype()), dy.elem_cnt(),
                                         ctx.Attr<double>("scale"), dy.raw_data(),
                                         mask.data<bool>(), ctx.output(0).raw_data()));
}

// ---------------------------------------------------------------- softmax --

// Row length of input `in`; kInternal unless the rank holds whole rows.
absl::StatusOr<int64_t> RowLength(const KernelContext& ctx, int in) {
  const LocalTensor& x = ctx.input(in);
  if (x.rank() == 0) return 1;
  const int64_t local = x.dim(x.rank() - 1);
  const int64_t logical = ctx.input_layout(in).logical.shape.dim(x.rank() - 1);
  if (local != logical) {
    return ctx.Internal(absl::StrCat("rank holds ", local, " of the ", logical,
                                     " entries of each row of ", ctx.input_bn(in),
                                     "; the last dim is reduced over and must be whole"));
  }
  return local;
}

KernelFn SoftmaxKernel(bool log) {
  return [log](KernelContext& ctx) -> absl::Status {
    const LocalTensor& x = ctx.input(0);
    OFS_ASSIGN_OR_RETURN(const int64_t n, RowLength(ctx, 0));
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
    OFS_RETURN_IF_ERROR(RequireFloating(ctx, x.dtype(), ctx.input_bn(0)));
    return Launched(ctx, cuda::Softmax(Code(x.dtype()), log, n == 0 ? 0 : x.elem_cnt() / n, n,
                                       x.raw_data(), ctx.output(0).raw_data()));
  };
}

KernelFn SoftmaxGradKernel(bool log) {
  return [log](KernelContext& ctx) -> absl::Status {
    const LocalTensor& saved = ctx.input(0);
    const LocalTensor& dy = ctx.input(1);
    if (saved.dims() != dy.dims() || saved.dtype() != dy.dtype()) {
      return ctx.Internal(absl::StrCat("local ", ctx.input_bn(0), " ",
                                       DimsToString(saved.dims()), " and ", ctx.input_bn(1),
                                       " ", DimsToString(dy.dims()), " differ"));
    }
    OFS_ASSIGN_OR_RETURN(const int64_t n, RowLength(ctx, 0));
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, dy.dims(), dy.dtype()));
    OFS_RETURN_IF_ERROR(RequireFloating(ctx, dy.dtype(), ctx.input_bn(1)));
    return Launched(ctx, cuda::SoftmaxGrad(Code(dy.dtype()), log, n == 0 ? 0 : dy.elem_cnt() / n,
                                           n, saved.raw_data(), dy.raw_data(),
                                           ctx.output(0).raw_data()));
  };
}

// ----------------------------------------------------------------- matmul --

// The CPU kernel's planning and checks (matmul_plan.h), so batch
// broadcasts (a [1,1,m,k] x b [2,k,n], a [2,1] x b [1,3] batches) are
// accepted and refused alike; then one cuBLAS strided-batched gemm per run
// of out matrices whose a and b matrices are evenly spaced (MatmulRuns:
// one run for equal batch dims or one operand repeated).
absl::Status MatmulKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const MatmulPlan plan, CheckMatmul(ctx));
  const LocalTensor& a = ctx.input("a");
  const LocalTensor& b = ctx.input("b");
  OFS_RETURN_IF_ERROR(RequireFloating(ctx, a.dtype(), "a_0"));
  LocalTensor& out = ctx.output(0);
  double beta = 0;
  if (ctx.has_input("_add_to_output")) {
    const LocalTensor& add = ctx.input("_add_to_output");
    OFS_RETURN_IF_ERROR(Launched(ctx, oneflow_sbp::cuda::Copy(out.raw_data(), add.raw_data(),
                                                              add.byte_size(), 0)));
    beta = 1;
  }
  const int64_t a_size = plan.m * plan.k, b_size = plan.k * plan.n, o_size = plan.m * plan.n;
  const int64_t bytes = ByteSizeOf(a.dtype());
  for (const MatmulRun& r : MatmulRuns(plan)) {
    OFS_RETURN_IF_ERROR(Launched(
        ctx, cuda::Gemm(Code(a.dtype()), ctx.Attr<bool>("transpose_a"),
                        ctx.Attr<bool>("transpose_b"), plan.m, plan.n, plan.k,
                        ctx.Attr<double>("alpha"),
                        static_cast<const char*>(a.raw_data()) + r.a_first * a_size * bytes,
                        r.a_step * a_size,
                        static_cast<const char*>(b.raw_data()) + r.b_first * b_size * bytes,
                        r.b_step * b_size, beta,
                        static_cast<char*>(out.raw_data()) + r.first * o_size * bytes, o_size,
                        r.count)));
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------------ norms --
//
// layer_norm, rms_norm and their grads (the CPU kernels' ops, attributes,
// blob order and saved statistics: kernels/cpu/norm_kernels.cc), with
// the CPU's layout checks (norm_layout.h). The launchers index a parameter
// by the column within the row (gamma[c]), which is the CPU's indexing
// exactly when the parameter covers the normalised dims and nothing else
// (begin_params_axis == begin_norm_axis; always so for rms_norm). Other
// parameter axes and empty normalised dims are kUnimplemented here.

// The dtype code of the nn launchers' call, as the CPU kernels dispatch:
// input `x` must be floating (kUnimplemented naming it otherwise, as the
// CPU's DispatchDtype); every other blob has x's dtype except the norm
// statistics (mean, inv_variance, inv_rms), which are f32 for f16/bf16 x
// (the CPU's StatsType). The rules give every blob these dtypes; a blob
// that differs is the CPU's UnsupportedDtype too.
absl::StatusOr<int> NnDtype(const KernelContext& ctx, int x) {
  const DataType t = ctx.input(x).dtype();
  OFS_RETURN_IF_ERROR(RequireFloating(ctx, t, ctx.input_bn(x)));
  const bool half = t == DataType::kFloat16 || t == DataType::kBFloat16;
  const int inputs = ctx.num_inputs();
  for (int b = 0; b < inputs + ctx.num_outputs(); ++b) {
    const std::string bn = b < inputs ? ctx.input_bn(b) : ctx.output_bn(b - inputs);
    const bool stats = absl::StartsWith(bn, "mean_") || absl::StartsWith(bn, "inv_variance_") ||
                       absl::StartsWith(bn, "inv_rms_");
    const DataType want = stats && half ? DataType::kFloat32 : t;
    const DataType got = ctx.layout(b).logical.dtype;
    if (got != want) return ctx.UnsupportedDtype(got, bn);
  }
  return Code(t);
}

// The parameter input `arg` (gamma, beta, weight) of x (input `x`) covers
// x's dims from p on; rows are x's first k dims. kUnimplemented unless
// p == k (see above); kInternal, as on the CPU, unless it then has x's
// local normalised dims.
absl::Status CheckColumnParam(const KernelContext& ctx, int x, absl::string_view arg, int p,
                              int k) {
  const LocalTensor& xt = ctx.input(x);
  const LocalTensor& pt = ctx.input(arg);
  const LocalDims cols(xt.dims().begin() + std::min(k, xt.rank()), xt.dims().end());
  if (p >= 0 && p != k) {
    return ctx.Unimplemented(absl::StrCat(
        arg, "_0 covers dims ", p, ".. of ", ctx.input_bn(x), " but rows are normalised from dim ",
        k, "; the CUDA ", ctx.op_type(),
        " kernel takes parameters over the normalised dims only (begin_params_axis == "
        "begin_norm_axis)"));
  }
  if (p < 0 || pt.dims() != cols) {
    return ctx.Internal(absl::StrCat("local ", arg, "_0 ", DimsToString(pt.dims()),
                                     " does not cover dims ", k, ".. of local ", ctx.input_bn(x),
                                     " ", DimsToString(xt.dims())));
  }
  return absl::OkStatus();
}

// The input `arg`'s device data, or nullptr if the call lacks it.
const void* OptionalInput(const KernelContext& ctx, const char* arg) {
  return arg != nullptr && ctx.has_input(arg) ? ctx.input(arg).raw_data() : nullptr;
}

// layer_norm (center: x, opt beta, opt gamma -> y, mean, inv_variance) or
// rms_norm (x, opt weight -> y, inv_rms), as the CPU's NormForward.
template <bool center>
absl::Status NormForwardKernel(KernelContext& ctx) {
  NormAxes axes;
  if (center) {
    OFS_ASSIGN_OR_RETURN(axes, LayerNormAxes(ctx));
  } else {
    axes = RmsNormAxes(ctx);
  }
  const int k = axes.k, p = axes.p;
  const char* scale_arg = center ? "gamma" : "weight";
  const char* shift_arg = center ? "beta" : nullptr;
  const LocalTensor& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(const NormRows rw, NormRowsOf(ctx, 0, k, /*whole=*/true));
  const LocalDims stats_dims(x.dims().begin(), x.dims().begin() + k);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  for (int o = 1; o < ctx.num_outputs(); ++o) {
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(o, stats_dims, ctx.output(1).dtype()));
  }
  for (const char* arg : {scale_arg, shift_arg}) {
    if (arg == nullptr || !ctx.has_input(arg)) continue;
    OFS_RETURN_IF_ERROR(CheckColumnParam(ctx, 0, arg, p, k));
  }
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 0));
  if (rw.rows > 0 && rw.n == 0) {
    return ctx.Unimplemented("empty normalised dims (statistics of no elements)");
  }
  return Launched(ctx, cuda::NormForward(dtype, !center, rw.rows, rw.n,
                                         ctx.Attr<double>("epsilon"), x.raw_data(),
                                         OptionalInput(ctx, scale_arg),
                                         OptionalInput(ctx, shift_arg), ctx.output(0).raw_data(),
                                         center ? ctx.output(1).raw_data() : nullptr,
                                         ctx.output(center ? 2 : 1).raw_data()));
}

// layer_norm_grad (center: dy, x, mean, inv_variance, opt gamma) or
// rms_norm_grad (dy, x, inv_rms, opt weight) -> dx, as the CPU's NormGrad.
template <bool center>
absl::Status NormGradKernel(KernelContext& ctx) {
  int k = 0;
  if (center) {
    OFS_ASSIGN_OR_RETURN(k, LayerNormGradRowDims(ctx));
  } else {
    k = ctx.input("inv_rms").rank();
  }
  const char* scale_arg = center ? "gamma" : "weight";
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(const NormRows rw, NormRowsOf(ctx, 1, k, /*whole=*/true));
  OFS_RETURN_IF_ERROR(CheckNormGradInputs(ctx, center, k));
  if (ctx.has_input(scale_arg)) {
    // The scale covers x's trailing dims (the forward's begin_params_axis).
    OFS_RETURN_IF_ERROR(
        CheckColumnParam(ctx, 1, scale_arg, x.rank() - ctx.input(scale_arg).rank(), k));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 1));
  return Launched(ctx, cuda::NormBackward(dtype, !center, rw.rows, rw.n, x.raw_data(),
                                          OptionalInput(ctx, scale_arg),
                                          center ? ctx.input(2).raw_data() : nullptr,
                                          ctx.input(center ? 3 : 2).raw_data(), dy.raw_data(),
                                          ctx.output(0).raw_data(), /*dgamma=*/nullptr,
                                          /*dbeta=*/nullptr));
}

// layer_norm_param_grad (center: gamma_diff, beta_diff) or
// rms_norm_param_grad (weight_grad): sums over x's local rows, as the
// CPU's NormParamGrad (a rank holding some rows gives addends; one holding
// some parameter columns whole sums for them).
template <bool center>
absl::Status NormParamGradKernel(KernelContext& ctx) {
  int p = 0;
  if (center) {
    OFS_ASSIGN_OR_RETURN(p, LayerNormParamAxis(ctx));
  } else {
    p = ctx.input("inv_rms").rank();
  }
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(const NormRows rw, CheckNormParamGrad(ctx, center, p));
  const int k = ctx.input(2).rank();
  if (p != k) {
    return ctx.Unimplemented(absl::StrCat(
        "parameters over dims ", p, ".. of x_0 with rows normalised from dim ", k,
        "; the CUDA kernel takes parameters over the normalised dims only"));
  }
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 1));
  if (rw.rows == 0) {
    // No rows: zero sums (the launcher writes nothing then).
    for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).SetZero();
    return absl::OkStatus();
  }
  return Launched(ctx, cuda::NormBackward(dtype, !center, rw.rows, rw.n, x.raw_data(),
                                          /*gamma=*/nullptr,
                                          center ? ctx.input(2).raw_data() : nullptr,
                                          ctx.input(center ? 3 : 2).raw_data(), dy.raw_data(),
                                          /*dx=*/nullptr, ctx.output(0).raw_data(),
                                          center ? ctx.output(1).raw_data() : nullptr));
}

// ------------------------------------------------------------ adam_update --

// adam_update(model!, model_diff, m!, v!; OneFlow's attributes) in place,
// as the CPU kernel (optimizer_kernels.cc): every operand has the same
// local dims and dtype (the rule gives them one layout), so the step is
// elementwise on the local shards. Every floating dtype; computes in
// double, as the CPU does (nn.cu).
absl::Status AdamUpdateKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameOperands(ctx));
  const double bc1 = ctx.Attr<double>("bias_correction1");
  const double bc2 = ctx.Attr<double>("bias_correction2");
  if (!(bc1 > 0) || !(bc2 > 0)) {
    return ctx.InvalidArgument(absl::StrCat("bias_correction1 ", bc1, " and bias_correction2 ",
                                            bc2, " must be > 0 (1 - beta^step)"));
  }
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 0));
  // Handles: writes through them reach the caller's tensors.
  LocalTensor w = ctx.input(0);
  LocalTensor m = ctx.input(2);
  LocalTensor v = ctx.input(3);
  return Launched(ctx, cuda::AdamUpdateCorrected(
                           dtype, w.elem_cnt(), ctx.Attr<double>("learning_rate"),
                           ctx.Attr<double>("beta1"), ctx.Attr<double>("beta2"),
                           ctx.Attr<double>("epsilon"), ctx.Attr<double>("weight_decay"),
                           ctx.Attr<double>("scale"), bc1, bc2, w.raw_data(), m.raw_data(),
                           v.raw_data(), ctx.input(1).raw_data()));
}

// -------------------------------------------------------------- attention --
//
// rotary_embedding(_grad) and scaled_dot_product_attention(_grad): the CPU
// kernels' ops, blob order, attributes and layout checks
// (kernels/common/attention_layout.h). Rotary indexes cos/sin by x's
// global sequence row relative to their slice; attention masks with the
// GLOBAL query row (shift = first local row + logical (Sk - Sq)) and the
// key_padding_mask at q's local batch row (the CPU's AttentionDims). The
// grad recomputes lse and dout . out (the CPU grad takes no saved tensors).
// Every floating dtype, with the CPU's arithmetic (nn.cu).

template <bool kGrad>
absl::Status RotaryKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int64_t row0, RotaryRowOffset(ctx));
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 0));
  const LocalTensor& x = ctx.input(0);
  if (x.dim(3) % 2 != 0) {
    return ctx.Unimplemented(absl::StrCat("head dim ", x.dim(3), " of ", ctx.input_bn(0),
                                          " is odd; the CUDA ", ctx.op_type(),
                                          " kernel takes even head dims only"));
  }
  return Launched(ctx, cuda::RotaryTable(dtype, kGrad, x.dim(0) * x.dim(1), x.dim(2), x.dim(3),
                                         row0, ctx.input(1).raw_data(), ctx.input(2).raw_data(),
                                         x.raw_data(), ctx.output(0).raw_data()));
}

// kUnimplemented for head dims the launchers cannot hold (kMaxHead, attention.cu).
absl::Status RequireHeadDims(const KernelContext& ctx, const AttentionDims& a) {
  constexpr int64_t kMaxHead = 256;
  if (a.d <= kMaxHead && a.dv <= kMaxHead) return absl::OkStatus();
  return ctx.Unimplemented(absl::StrCat("head dims ", a.d, " (query/key) and ", a.dv,
                                        " (value); the CUDA ", ctx.op_type(),
                                        " kernel takes head dims up to ", kMaxHead));
}

// The launchers' view of the call's key_padding_mask (none: data null).
cuda::KeyMask KeyMaskOf(const KernelContext& ctx, const AttentionDims& a) {
  cuda::KeyMask m;
  if (a.mask < 0) return m;
  m.data = ctx.input(a.mask).raw_data();
  m.dtype = static_cast<int>(ctx.input(a.mask).dtype());
  m.heads = a.heads;
  m.row0 = a.mask_row0;
  return m;
}

absl::Status AttentionKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const AttentionDims a, CheckAttention(ctx));
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 0));
  OFS_RETURN_IF_ERROR(RequireHeadDims(ctx, a));
  return Launched(ctx, cuda::Attention(dtype, a.bh, a.sq, a.sk, a.d, a.dv, a.scale, a.causal,
                                       ctx.input(0).raw_data(), ctx.input(1).raw_data(),
                                       ctx.input(2).raw_data(), ctx.output(0).raw_data(),
                                       /*lse=*/nullptr, a.row0 + a.shift, KeyMaskOf(ctx, a)));
}

absl::Status AttentionGradKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const AttentionDims a, CheckAttentionGrad(ctx));
  OFS_ASSIGN_OR_RETURN(const int dtype, NnDtype(ctx, 1));
  OFS_RETURN_IF_ERROR(RequireHeadDims(ctx, a));
  return Launched(ctx, cuda::AttentionGrad(dtype, a.bh, a.sq, a.sk, a.d, a.dv, a.scale, a.causal,
                                           ctx.input(1).raw_data(), ctx.input(2).raw_data(),
                                           ctx.input(3).raw_data(), ctx.input(0).raw_data(),
                                           ctx.output(0).raw_data(), ctx.output(1).raw_data(),
                                           ctx.output(2).raw_data(), a.row0 + a.shift,
                                           KeyMaskOf(ctx, a)));
}

// ----------------------------------------------------------- registration --

absl::Status RegisterCudaKernels(KernelRegistry& registry) {
  using U = cuda::UnaryCode;
  using B = cuda::BinaryCode;
  const std::vector<DataType> all = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                     DataType::kFloat64, DataType::kInt8,     DataType::kInt32,
                                     DataType::kInt64,   DataType::kUInt8,    DataType::kBool};
  std::vector<KernelDef> defs = {
      {"abs", UnaryKernel(U::kAbs, kSigned), kSigned},
      {"ceil", UnaryKernel(U::kCeil, kFloating), kFloating},
      {"cos", UnaryKernel(U::kCos, kFloating), kFloating},
      {"erf", UnaryKernel(U::kErf, kFloating), kFloating},
      {"exp", UnaryKernel(U::kExp, kFloating), kFloating},
      {"fast_gelu", UnaryKernel(U::kFastGelu, kFloating), kFloating},
      {"floor", UnaryKernel(U::kFloor, kFloating), kFloating},
      {"gelu", UnaryKernel(U::kGelu, kFloating), kFloating},
      {"log", UnaryKernel(U::kLog, kFloating), kFloating},
      {"mish", UnaryKernel(U::kMish, kFloating), kFloating},
      {"negative", UnaryKernel(U::kNegative, kSigned), kSigned},
      {"reciprocal", UnaryKernel(U::kReciprocal, kFloating), kFloating},
      {"relu", UnaryKernel(U::kRelu, kSigned), kSigned},
      {"round", UnaryKernel(U::kRound, kFloating), kFloating},
      {"rsqrt", UnaryKernel(U::kRsqrt, kFloating), kFloating},
      {"sigmoid", UnaryKernel(U::kSigmoid, kFloating), kFloating},
      {"sign", UnaryKernel(U::kSign, kSigned), kSigned},
      {"silu", UnaryKernel(U::kSilu, kFloating), kFloating},
      {"sin", UnaryKernel(U::kSin, kFloating), kFloating},
      {"softplus", UnaryKernel(U::kSoftplus, kFloating), kFloating},
      {"sqrt", UnaryKernel(U::kSqrt, kFloating), kFloating},
      {"square", UnaryKernel(U::kSquare, kSigned), kSigned},
      {"tanh", UnaryKernel(U::kTanh, kFloating), kFloating},
      {"copy", CopyKernel, all},
      {"identity", CopyKernel, all},
      {"broadcast_add", BinaryKernel(B::kAdd, kSigned), kSigned},
      {"broadcast_sub", BinaryKernel(B::kSub, kSigned), kSigned},
      {"broadcast_mul", BinaryKernel(B::kMul, kSigned), kSigned},
      {"broadcast_div", BinaryKernel(B::kDiv, kFloating), kFloating},
      {"broadcast_maximum", BinaryKernel(B::kMaximum, kSigned), kSigned},
      {"broadcast_minimum", BinaryKernel(B::kMinimum, kSigned), kSigned},
      {"broadcast_pow", BinaryKernel(B::kPow, kSigned), kSigned},
      {"bias_add", BiasAddKernel, kFloating},
      {"dropout", DropoutKernel, kFloating},
      {"dropout_grad", DropoutGradKernel, kFloating},
      {"softmax", SoftmaxKernel(false), kFloating},
      {"log_softmax", SoftmaxKernel(true), kFloating},
      {"softmax_grad", SoftmaxGradKernel(false), kFloating},
      {"log_softmax_grad", SoftmaxGradKernel(true), kFloating},
      {"matmul", MatmulKernel, kFloating},
      {"batch_matmul", MatmulKernel, kFloating},
      {"broadcast_matmul", MatmulKernel, kFloating},
      {"layer_norm", NormForwardKernel<true>, kFloating},
      {"layer_norm_grad", NormGradKernel<true>, kFloating},
      {"layer_norm_param_grad", NormParamGradKernel<true>, kFloating},
      {"rms_norm", NormForwardKernel<false>, kFloating},
      {"rms_norm_grad", NormGradKernel<false>, kFloating},
      {"rms_norm_param_grad", NormParamGradKernel<false>, kFloating},
      {"adam_update", AdamUpdateKernel, kFloating},
      {"rotary_embedding", RotaryKernel<false>, kFloating},
      {"rotary_embedding_grad", RotaryKernel<true>, kFloating},
      {"scaled_dot_product_attention", AttentionKernel, kFloating},
      {"scaled_dot_product_attention_grad", AttentionGradKernel, kFloating},
  };
  return RegisterKernels(registry, DeviceType::kCuda, defs);
}

OFS_REGISTER_KERNELS(RegisterCudaKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
