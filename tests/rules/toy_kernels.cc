#include "tests/rules/toy_kernels.h"

#include <algorithm>

#include "kernels/dtype_dispatch.h"

namespace oneflow_sbp::testing::toy {
namespace {

// y[i] = f(x[i], attr) for f32 and f64; other dtypes are kUnimplemented
// naming the op and x_0.
template <typename F>
absl::Status Elementwise(kernels::KernelContext& ctx, double attr, F f) {
  const LocalTensor& x = ctx.input("x");
  LocalTensor& y = ctx.output("y");
  return kernels::DispatchDtype<kernels::FloatTypes>(ctx, x.dtype(), "x_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < x.elem_cnt(); ++i) {
      y.data<T>()[i] = f(x.data<T>()[i], static_cast<T>(attr));
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::Status ToyScaleKernel(kernels::KernelContext& ctx) {
  return Elementwise(ctx, ctx.Attr<double>("factor"), [](auto x, auto factor) { return factor * x; });
}

absl::Status ToyClampMinKernel(kernels::KernelContext& ctx) {
  return Elementwise(ctx, ctx.Attr<double>("low"), [](auto x, auto low) { return std::max(x, low); });
}

}  // namespace oneflow_sbp::testing::toy
