// CPU kernels of the optimizer updates and fills (rules in
// ops/optimizer_ops.cc), with OneFlow's formulas:
//
//   sgd_update(model!, model_diff; learning_rate, scale, weight_decay)
//     model -= learning_rate * (scale * model_diff + weight_decay * model)
//   adam_update(model!, model_diff, m!, v!; learning_rate, beta1, beta2,
//               epsilon, weight_decay, scale, bias_correction1/2)
//     g = scale * model_diff
//     m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//     model -= learning_rate * (m / bias_correction1) /
//              (sqrt(v / bias_correction2) + epsilon)
//              + learning_rate * weight_decay * model   (the old model)
//   fill(like; value, dtype) -> out = value (out's dtype)
//   zeros_like(like) -> out = 0
//
// The updates have no outputs: they write the mutable inputs in place,
// through the caller's handles (a LocalTensor copy shares its storage).
// Every operand has the same layout (the rule), so the update is
// elementwise on local shards; the kernels check that the local dims agree.
// Compute in double for every dtype (halves round once per element).
//
// Dtypes: updates f32 f64 f16 bf16; fill and zeros_like every type.
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/same_operands.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

absl::Status SgdKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameOperands(ctx));
  LocalTensor model = ctx.input(0);  // a handle: writes reach the caller
  const LocalTensor& diff = ctx.input(1);
  const double lr = ctx.Attr<double>("learning_rate");
  const double scale = ctx.Attr<double>("scale");
  const double wd = ctx.Attr<double>("weight_decay");
  return DispatchDtype<Floating>(ctx, model.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* w = model.data<T>();
    const T* g = diff.data<T>();
    for (int64_t i = 0; i < model.elem_cnt(); ++i) {
      const double wi = ConvertElement<double>(w[i]);
      w[i] = ConvertElement<T>(wi - lr * (scale * ConvertElement<double>(g[i]) + wd * wi));
    }
    return absl::OkStatus();
  });
}

absl::Status AdamKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameOperands(ctx));
  LocalTensor model = ctx.input(0);
  const LocalTensor& diff = ctx.input(1);
  LocalTensor m = ctx.input(2);
  LocalTensor v = ctx.input(3);
  const double lr = ctx.Attr<double>("learning_rate");
  const double beta1 = ctx.Attr<double>("beta1");
  const double beta2 = ctx.Attr<double>("beta2");
  const double eps = ctx.Attr<double>("epsilon");
  const double wd = ctx.Attr<double>("weight_decay");
  const double scale = ctx.Attr<double>("scale");
  const double bc1 = ctx.Attr<double>("bias_correction1");
  const double bc2 = ctx.Attr<double>("bias_correction2");
  if (!(bc1 > 0) || !(bc2 > 0)) {
    return ctx.InvalidArgument(absl::StrCat("bias_correction1 ", bc1, " and bias_correction2 ",
                                            bc2, " must be > 0 (1 - beta^step)"));
  }
  return DispatchDtype<Floating>(ctx, model.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* w = model.data<T>();
    const T* g = diff.data<T>();
    T* mp = m.data<T>();
    T* vp = v.data<T>();
    for (int64_t i = 0; i < model.elem_cnt(); ++i) {
      const double gi = scale * ConvertElement<double>(g[i]);
      const double mi = beta1 * ConvertElement<double>(mp[i]) + (1 - beta1) * gi;
      const double vi = beta2 * ConvertElement<double>(vp[i]) + (1 - beta2) * gi * gi;
      const double wi = ConvertElement<double>(w[i]);
      const double step = (mi / bc1) / (std::sqrt(vi / bc2) + eps);
      mp[i] = ConvertElement<T>(mi);
      vp[i] = ConvertElement<T>(vi);
      w[i] = ConvertElement<T>(wi - lr * step - lr * wd * wi);
    }
    return absl::OkStatus();
  });
}

// fill (value from the attribute) or zeros_like (value 0).
template <bool kZeros>
absl::Status FillKernel(KernelContext& ctx) {
  LocalTensor& out = ctx.output(0);
  // Only the dims come from `like`; out's dtype is the inferred one.
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, ctx.input(0).dims(), out.dtype()));
  const double value = kZeros ? 0.0 : ctx.Attr<double>("value");
  return DispatchDtype<AllTypes>(ctx, out.dtype(), ctx.output_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = ConvertElement<T>(value);
    T* y = out.data<T>();
    for (int64_t i = 0; i < out.elem_cnt(); ++i) y[i] = v;
    return absl::OkStatus();
  });
}

absl::Status RegisterOptimizerKernels(KernelRegistry& registry) {
  const std::vector<DataType> floating = DtypesOf(Floating{});
  const std::vector<DataType> all = DtypesOf(AllTypes{});
  return RegisterKernels(registry, DeviceType::kCpu,
                         {
                             {"adam_update", AdamKernel, floating},
                             {"fill", FillKernel<false>, all},
                             {"sgd_update", SgdKernel, floating},
                             {"zeros_like", FillKernel<true>, all},
                         });
}

OFS_REGISTER_KERNELS(RegisterOptimizerKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
