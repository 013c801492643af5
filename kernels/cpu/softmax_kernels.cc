// CPU kernels of softmax, log_softmax (rules in ops/reduce_ops.cc) and
// their gradients softmax_grad, log_softmax_grad (ops/nn_ops.cc), and of
// the activation gradients relu_grad, gelu_grad, silu_grad.
//
// Softmax family, over the last dim ("rows"):
//   softmax(in) -> out = exp(x - max) / sum(exp(x - max))
//   log_softmax(in) -> prob = x - max - log(sum(exp(x - max)))
//     (OneFlow calls the output prob; it holds LOG probabilities)
//   softmax_grad(y, dy) -> dx = y * (dy - sum(dy * y))
//   log_softmax_grad(prob, dy) -> dx = dy - exp(prob) * sum(dy)
// The rules split only the other dims, so every rank holds whole rows; a
// row split along the last dim is a layout these kernels cannot compute
// (kInternal). A scalar is one row of one element. Row maxima and sums
// are taken in double, then each element is computed in ComputeType; a
// row's result depends only on the row.
//
// Activation gradients, elementwise (dy:P with the saved tensor whole is
// exact because each is linear in dy):
//   relu_grad(y, dy) -> dx = y > 0 ? dy : 0
//   gelu_grad(x, dy) -> dx = dy * (Phi(x) + x * phi(x))      (exact gelu)
//   silu_grad(x, dy) -> dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x)
//
// Dtypes: f32 f64 f16 bf16 (halves in float); relu_grad also i32 i64.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

// Rows of input `in`: kInternal unless the rank holds whole rows.
absl::StatusOr<int64_t> RowLength(const KernelContext& ctx, int in) {
  const LocalTensor& x = ctx.input(in);
  const BlobLayout& l = ctx.input_layout(in);
  if (x.rank() == 0) return 1;
  const int64_t local = x.dim(x.rank() - 1);
  const int64_t logical = l.logical.shape.dim(x.rank() - 1);
  if (local != logical) {
    return ctx.Internal(absl::StrCat("rank holds ", local, " of the ", logical,
                                     " entries of each row of ", ctx.input_bn(in), " ",
                                     l.logical.ToString(), " ", l.nd_sbp.ToString(),
                                     "; the last dim is reduced over and must be whole"));
  }
  return local;
}

// Inputs 0 and 1 (and the output) must have the same local dims.
absl::Status CheckPair(const KernelContext& ctx) {
  const LocalTensor& a = ctx.input(0);
  const LocalTensor& b = ctx.input(1);
  if (a.dims() != b.dims() || a.dtype() != b.dtype()) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(0), " ", DataTypeName(a.dtype()),
                                     DimsToString(a.dims()), " and ", ctx.input_bn(1), " ",
                                     DataTypeName(b.dtype()), DimsToString(b.dims()),
                                     " differ"));
  }
  return ctx.CheckOutput(0, a.dims(), a.dtype());
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax };

template <SoftmaxKind kKind, typename T>
void SoftmaxRows(const T* x, int64_t rows, int64_t n, T* y) {
  // One exp per element: the row's exp(x - max) are kept for the divide.
  std::vector<double> e(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, ConvertElement<double>(xr[i]));
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      e[i] = std::exp(ConvertElement<double>(xr[i]) - mx);
      sum += e[i];
    }
    if constexpr (kKind == SoftmaxKind::kSoftmax) {
      const double inv = 1.0 / sum;
      for (int64_t i = 0; i < n; ++i) yr[i] = ConvertElement<T>(e[i] * inv);
    } else {
      const double shift = mx + std::log(sum);
      for (int64_t i = 0; i < n; ++i) yr[i] = ConvertElement<T>(ConvertElement<double>(xr[i]) - shift);
    }
  }
}

template <SoftmaxKind kKind>
absl::Status SoftmaxKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_ASSIGN_OR_RETURN(const int64_t n, RowLength(ctx, 0));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  return DispatchDtype<Floating>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxRows<kKind, T>(x.data<T>(), n == 0 ? 0 : x.elem_cnt() / n, n,
                          ctx.output(0).data<T>());
    return absl::OkStatus();
  });
}

// dx for one row: softmax_grad (saved = y) or log_softmax_grad (saved =
// log probabilities).
template <SoftmaxKind kKind>
absl::Status SoftmaxGradKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckPair(ctx));
  OFS_ASSIGN_OR_RETURN(const int64_t n, RowLength(ctx, 0));
  const LocalTensor& saved = ctx.input(0);
  const LocalTensor& dy = ctx.input(1);
  return DispatchDtype<Floating>(ctx, dy.dtype(), ctx.input_bn(1), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* s = saved.data<T>();
    const T* g = dy.data<T>();
    T* dx = ctx.output(0).data<T>();
    const int64_t rows = n == 0 ? 0 : dy.elem_cnt() / n;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * n;
      double dot = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double gi = ConvertElement<C>(g[base + i]);
        dot += kKind == SoftmaxKind::kSoftmax ? gi * ConvertElement<C>(s[base + i]) : gi;
      }
      for (int64_t i = 0; i < n; ++i) {
        const double si = ConvertElement<C>(s[base + i]);
        const double gi = ConvertElement<C>(g[base + i]);
        dx[base + i] = ConvertElement<T>(kKind == SoftmaxKind::kSoftmax ? si * (gi - dot)
                                                                        : gi - std::exp(si) * dot);
      }
    }
    return absl::OkStatus();
  });
}

// ------------------------------------------------------ activation grads

struct ReluGrad {
  template <typename C> C operator()(C y, C dy) const { return y > C(0) ? dy : C(0); }
};
struct GeluGrad {
  template <typename C> C operator()(C x, C dy) const {
    const C cdf = C(0.5) * (C(1) + std::erf(x * C(M_SQRT1_2)));
    const C pdf = std::exp(C(-0.5) * x * x) * C(0.3989422804014327);  // 1 / sqrt(2 pi)
    return dy * (cdf + x * pdf);
  }
};
struct SiluGrad {
  template <typename C> C operator()(C x, C dy) const {
    const C s = C(1) / (C(1) + std::exp(-x));
    return dy * s * (C(1) + x * (C(1) - s));
  }
};

template <typename Fn, typename Types>
absl::Status ActivationGradKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckPair(ctx));
  const LocalTensor& saved = ctx.input(0);
  const LocalTensor& dy = ctx.input(1);
  return DispatchDtype<Types>(ctx, dy.dtype(), ctx.input_bn(1), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* s = saved.data<T>();
    const T* g = dy.data<T>();
    T* dx = ctx.output(0).data<T>();
    const Fn fn;
    for (int64_t i = 0; i < dy.elem_cnt(); ++i) {
      dx[i] = ConvertElement<T>(fn(ConvertElement<C>(s[i]), ConvertElement<C>(g[i])));
    }
    return absl::OkStatus();
  });
}

absl::Status RegisterSoftmaxKernels(KernelRegistry& registry) {
  using WithInts = DtypeConcat<Floating, IntTypes>;
  const std::vector<DataType> floating = DtypesOf(Floating{});
  return RegisterKernels(
      registry, DeviceType::kCpu,
      {
          {"gelu_grad", ActivationGradKernel<GeluGrad, Floating>, floating},
          {"log_softmax", SoftmaxKernel<SoftmaxKind::kLogSoftmax>, floating},
          {"log_softmax_grad", SoftmaxGradKernel<SoftmaxKind::kLogSoftmax>, floating},
          {"relu_grad", ActivationGradKernel<ReluGrad, WithInts>, DtypesOf(WithInts{})},
          {"silu_grad", ActivationGradKernel<SiluGrad, Floating>, floating},
          {"softmax", SoftmaxKernel<SoftmaxKind::kSoftmax>, floating},
          {"softmax_grad", SoftmaxGradKernel<SoftmaxKind::kSoftmax>, floating},
      });
}

OFS_REGISTER_KERNELS(RegisterSoftmaxKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
