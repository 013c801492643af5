// CPU kernels of the normalisations (rules in ops/norm_ops.cc), with
// OneFlow's definitions. x has rank r; its first k dims index "rows" (the
// statistics have shape x.shape[:k]), the rest are normalised over (n
// elements per row). Parameters (gamma, beta, weight) cover x's trailing
// dims from p on and broadcast over the others.
//
//   layer_norm(x, opt beta, opt gamma; begin_norm_axis = k,
//              begin_params_axis = p, epsilon) -> y, mean, inv_variance
//     mean = sum(x) / n, var = sum((x - mean)^2) / n (biased),
//     inv_variance = 1 / sqrt(var + epsilon),
//     y = (x - mean) * inv_variance * gamma + beta  (present inputs decide)
//   layer_norm_grad(dy, x, mean, inv_variance, opt gamma; k) -> dx
//     g = dy * gamma, xhat = (x - mean) * inv_variance,
//     dx = inv_variance * (g - mean_row(g) - xhat * mean_row(g * xhat))
//   layer_norm_param_grad(dy, x, mean, inv_variance; p) -> gamma_diff,
//     beta_diff = sums over x's dims before p of dy * xhat and of dy
//   rms_norm(x, opt weight; normalized_shape, epsilon) -> y, inv_rms
//     (k = r - len(normalized_shape), p = k)
//     inv_rms = 1 / sqrt(sum(x^2) / n + epsilon), y = x * inv_rms * weight
//   rms_norm_grad(dy, x, inv_rms, opt weight) -> dx  (k = rank(inv_rms))
//     g = dy * weight, dx = inv_rms * (g - x * inv_rms^2 * mean_row(g * x))
//   rms_norm_param_grad(dy, x, inv_rms) -> weight_grad = sum over the
//     row dims of dy * x * inv_rms
//
// Layouts: the rules split only row dims in the forward and the grads (so
// every rank holds whole rows: a split normalised dim is kInternal), and
// in the param grads either a dim before p (each rank sums its rows: a P
// addend) or a param dim (each rank holds whole sums for its params), with
// the statistics split alongside or whole. The kernels index everything
// by LOCAL extents and check that the statistics cover x's local rows and
// the parameters x's local trailing block.
//
// Dtypes: f32 f64 f16 bf16; statistics are f32 for f16/bf16 (as OneFlow)
// and accumulated in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/norm_layout.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

// The statistics' element type for x's T.
template <typename T>
using StatsType = std::conditional_t<kIsHalfType<T>, float, T>;

int64_t Product(const LocalDims& d, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= d[i];
  return p;
}

// Where x's local elements find their parameter (gamma, beta, weight):
// element j of local row r uses parameter element offset[r] + j % inner.
// A parameter covers x's dims from p on. Those from max(p, k) on are
// whole in x and must be whole in the parameter; those in [p, k) are row
// dims, which a rule may split in x while the parameter stays whole
// (layer_norm_grad's x:S(i) gamma:B for p <= i < k), so the offsets come
// from x's GLOBAL coordinates there, relative to the parameter's slice.
struct ParamIndex {
  std::vector<int64_t> offset;
  int64_t inner = 1;
};
absl::StatusOr<ParamIndex> IndexParams(const KernelContext& ctx, int x, absl::string_view arg,
                                       int p, int k) {
  const int param = ctx.op().InputBlob(arg, 0);
  const LocalTensor& xt = ctx.input(x);
  const LocalTensor& pt = ctx.input(param);
  const TensorSlice& xs = ctx.input_layout(x).slice;
  const TensorSlice& ps = ctx.input_layout(param).slice;
  const int r = xt.rank(), q = std::max(p, k);
  bool ok = p >= 0 && pt.rank() == r - p;
  for (int d = q; ok && d < r; ++d) ok = pt.dim(d - p) == xt.dim(d);
  for (int d = p; ok && d < k; ++d) {
    ok = xt.dim(d) == 0 || (xs.range(d).begin >= ps.range(d - p).begin &&
                            xs.range(d).end <= ps.range(d - p).end);
  }
  if (!ok) {
    return ctx.Internal(absl::StrCat("local ", ctx.input_bn(param), " ", DimsToString(pt.dims()),
                                     " (slice ", ps.ToString(), ") does not cover dims ", p,
                                     ".. of local ", ctx.input_bn(x), " ", DimsToString(xt.dims()),
                                     " (slice ", xs.ToString(), ")"));
  }
  ParamIndex index;
  index.inner = Product(xt.dims(), q, r);
  const int64_t rows = Product(xt.dims(), 0, k);
  LocalDims pstride(std::max(0, k - p), 0);
  int64_t s = index.inner;
  for (int d = k - 1; d >= p; --d) {
    pstride[d - p] = s;
    s *= pt.dim(d - p);
  }
  LocalDims idx(k, 0);
  index.offset.resize(rows);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = 0;
    for (int d = p; d < k; ++d) {
      off += (xs.range(d).begin + idx[d] - ps.range(d - p).begin) * pstride[d - p];
    }
    index.offset[row] = off;
    for (int d = k - 1; d >= 0; --d) {
      if (++idx[d] < xt.dim(d)) break;
      idx[d] = 0;
    }
  }
  return index;
}

// The statistics inputs of the grads (inputs 2 on): mean (nullptr unless
// center) and inv_variance or inv_rms, as S.
template <typename S>
struct StatsInputs {
  const S* mean = nullptr;
  const S* inv = nullptr;
};
template <typename S>
absl::StatusOr<StatsInputs<S>> StatsOf(const KernelContext& ctx, bool center) {
  for (int s = 2; s < (center ? 4 : 3); ++s) {
    if (ctx.input(s).dtype() != kDataTypeOf<S>) {
      return ctx.UnsupportedDtype(ctx.input(s).dtype(), ctx.input_bn(s));
    }
  }
  return StatsInputs<S>{center ? ctx.input(2).data<S>() : nullptr,
                        ctx.input(center ? 3 : 2).data<S>()};
}

// The input named `arg` as T, or nullptr if the call lacks it.
template <typename T>
const T* Optional(const KernelContext& ctx, absl::string_view arg) {
  return ctx.has_input(arg) ? ctx.input(arg).data<T>() : nullptr;
}

template <typename T>
double D(T v) {
  return ConvertElement<double>(v);
}

// ---------------------------------------------------------------- forward

// layer_norm (center = true) or rms_norm (center = false): writes y and
// the statistics (mean only for layer_norm).
absl::Status NormForward(KernelContext& ctx, bool center, int k, int p, const char* scale_arg,
                         const char* shift_arg) {
  const LocalTensor& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(const NormRows rw, NormRowsOf(ctx, 0, k, /*whole=*/true));
  const LocalDims stats_dims(x.dims().begin(), x.dims().begin() + k);
  const DataType stats_dtype = ctx.output(1).dtype();
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  for (int o = 1; o < ctx.num_outputs(); ++o) {
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(o, stats_dims, stats_dtype));
  }
  // gamma and beta (weight) have the same shape, so one index serves.
  ParamIndex pi;
  for (const char* arg : {scale_arg, shift_arg}) {
    if (arg == nullptr || !ctx.has_input(arg)) continue;
    OFS_ASSIGN_OR_RETURN(pi, IndexParams(ctx, 0, arg, p, k));
  }
  const double eps = ctx.Attr<double>("epsilon");
  return DispatchDtype<Floating>(ctx, x.dtype(), "x_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = StatsType<T>;
    if (stats_dtype != kDataTypeOf<S>) return ctx.UnsupportedDtype(stats_dtype, ctx.output_bn(1));
    const T* in = x.data<T>();
    const T* gamma = scale_arg ? Optional<T>(ctx, scale_arg) : nullptr;
    const T* beta = shift_arg ? Optional<T>(ctx, shift_arg) : nullptr;
    T* y = ctx.output(0).data<T>();
    S* mean_out = center ? ctx.output(1).data<S>() : nullptr;
    S* inv_out = ctx.output(center ? 2 : 1).data<S>();
    for (int64_t r = 0; r < rw.rows; ++r) {
      const int64_t base = r * rw.n;
      double mean = 0, sq = 0;
      if (center) {
        for (int64_t j = 0; j < rw.n; ++j) mean += D(in[base + j]);
        mean /= static_cast<double>(rw.n);
      }
      for (int64_t j = 0; j < rw.n; ++j) {
        const double c = D(in[base + j]) - mean;
        sq += c * c;
      }
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(rw.n) + eps);
      if (center) mean_out[r] = static_cast<S>(mean);
      inv_out[r] = static_cast<S>(inv);
      for (int64_t j = 0; j < rw.n; ++j) {
        const int64_t i = base + j;
        double v = (D(in[i]) - mean) * inv;
        if (gamma != nullptr) v *= D(gamma[pi.offset[r] + j % pi.inner]);
        if (beta != nullptr) v += D(beta[pi.offset[r] + j % pi.inner]);
        y[i] = ConvertElement<T>(v);
      }
    }
    return absl::OkStatus();
  });
}

absl::Status LayerNormKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const NormAxes a, LayerNormAxes(ctx));
  return NormForward(ctx, /*center=*/true, a.k, a.p, "gamma", "beta");
}

absl::Status RmsNormKernel(KernelContext& ctx) {
  const NormAxes a = RmsNormAxes(ctx);
  return NormForward(ctx, /*center=*/false, a.k, a.p, "weight", nullptr);
}

// ------------------------------------------------------------- input grad

// layer_norm_grad (center) or rms_norm_grad: inputs dy, x, then the
// statistics (mean and inv_variance, or inv_rms), then the optional scale.
absl::Status NormGrad(KernelContext& ctx, bool center, int k, const char* scale_arg) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(const NormRows rw, NormRowsOf(ctx, 1, k, /*whole=*/true));
  OFS_RETURN_IF_ERROR(CheckNormGradInputs(ctx, center, k));
  ParamIndex pi;
  if (ctx.has_input(scale_arg)) {
    // The scale covers x's trailing dims (the forward's begin_params_axis).
    OFS_ASSIGN_OR_RETURN(
        pi, IndexParams(ctx, 1, scale_arg, x.rank() - ctx.input(scale_arg).rank(), k));
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  return DispatchDtype<Floating>(ctx, x.dtype(), "x_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = StatsType<T>;
    OFS_ASSIGN_OR_RETURN(const StatsInputs<S> stats, StatsOf<S>(ctx, center));
    const T* g = dy.data<T>();
    const T* in = x.data<T>();
    const T* scale = Optional<T>(ctx, scale_arg);
    T* dx = ctx.output(0).data<T>();
    const double n = static_cast<double>(rw.n);
    std::vector<double> gs(rw.n), xs(rw.n);
    for (int64_t r = 0; r < rw.rows; ++r) {
      const int64_t base = r * rw.n;
      const double iv = D(stats.inv[r]);
      const double mu = center ? D(stats.mean[r]) : 0.0;
      double sum_g = 0, sum_gx = 0;
      for (int64_t j = 0; j < rw.n; ++j) {
        const int64_t i = base + j;
        gs[j] = D(g[i]) * (scale != nullptr ? D(scale[pi.offset[r] + j % pi.inner]) : 1.0);
        // layer_norm: xhat; rms_norm: x itself.
        xs[j] = center ? (D(in[i]) - mu) * iv : D(in[i]);
        sum_g += gs[j];
        sum_gx += gs[j] * xs[j];
      }
      for (int64_t j = 0; j < rw.n; ++j) {
        const double v = center ? iv * (gs[j] - sum_g / n - xs[j] * sum_gx / n)
                                : iv * (gs[j] - xs[j] * iv * iv * sum_gx / n);
        dx[base + j] = ConvertElement<T>(v);
      }
    }
    return absl::OkStatus();
  });
}

absl::Status LayerNormGradKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int k, LayerNormGradRowDims(ctx));
  return NormGrad(ctx, /*center=*/true, k, "gamma");
}

absl::Status RmsNormGradKernel(KernelContext& ctx) {
  return NormGrad(ctx, /*center=*/false, ctx.input("inv_rms").rank(), "weight");
}

// ------------------------------------------------------------- param grad

// layer_norm_param_grad (center: outputs gamma_diff, beta_diff) or
// rms_norm_param_grad (weight_grad): sums over x's dims before p.
absl::Status NormParamGrad(KernelContext& ctx, bool center, int p) {
  const LocalTensor& dy = ctx.input("dy");
  const LocalTensor& x = ctx.input("x");
  OFS_ASSIGN_OR_RETURN(const NormRows rw, CheckNormParamGrad(ctx, center, p));
  const int64_t params = Product(x.dims(), p, x.rank());
  return DispatchDtype<Floating>(ctx, x.dtype(), "x_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = StatsType<T>;
    OFS_ASSIGN_OR_RETURN(const StatsInputs<S> stats, StatsOf<S>(ctx, center));
    const T* g = dy.data<T>();
    const T* in = x.data<T>();
    std::vector<double> scale_sum(params, 0.0), shift_sum(params, 0.0);
    for (int64_t i = 0; i < x.elem_cnt(); ++i) {
      const int64_t r = i / rw.n;
      const double xhat = (D(in[i]) - (center ? D(stats.mean[r]) : 0.0)) * D(stats.inv[r]);
      scale_sum[i % params] += D(g[i]) * xhat;
      shift_sum[i % params] += D(g[i]);
    }
    T* scale_out = ctx.output(0).data<T>();
    for (int64_t j = 0; j < params; ++j) scale_out[j] = ConvertElement<T>(scale_sum[j]);
    if (center) {
      T* shift_out = ctx.output(1).data<T>();
      for (int64_t j = 0; j < params; ++j) shift_out[j] = ConvertElement<T>(shift_sum[j]);
    }
    return absl::OkStatus();
  });
}

absl::Status LayerNormParamGradKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int p, LayerNormParamAxis(ctx));
  return NormParamGrad(ctx, /*center=*/true, p);
}

absl::Status RmsNormParamGradKernel(KernelContext& ctx) {
  return NormParamGrad(ctx, /*center=*/false, ctx.input("inv_rms").rank());
}

absl::Status RegisterNormKernels(KernelRegistry& registry) {
  const std::vector<DataType> dtypes = DtypesOf(Floating{});
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"layer_norm", LayerNormKernel, dtypes},
                          {"layer_norm_grad", LayerNormGradKernel, dtypes},
                          {"layer_norm_param_grad", LayerNormParamGradKernel, dtypes},
                          {"rms_norm", RmsNormKernel, dtypes},
                          {"rms_norm_grad", RmsNormGradKernel, dtypes},
                          {"rms_norm_param_grad", RmsNormParamGradKernel, dtypes}});
}

OFS_REGISTER_KERNELS(RegisterNormKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
