// CPU kernels of bias_add and conv2d (rules in ops/nn_ops.cc).
//
// bias_add(a, b; axis) -> out = a + b broadcast along `axis`. Local: the
// rank's b must hold exactly the entries of a's local extent at `axis`
// (a:S(axis) b:S(0) split alike; b:B with a unsplit at axis); a:P b:P
// gives addends a_r + b_r that sum to a + b.
//
// conv2d(in, weight, opt bias, opt _add_to_output; filters, kernel_size,
// strides, padding_before, dilation_rate, groups), NCHW:
//   out[n,f,y,x] = bias[f] + _add_to_output[n,f,y,x] +
//     sum_{c,i,j} in[n, g*Cg + c, y*s0 - p0 + i*d0, x*s1 - p1 + j*d1] * weight[f,c,i,j]
// with g = f / (F / groups), Cg = C / groups, zero padding (padding_before
// on both sides, as the shape function assumes). Computed per image and
// group as an im2col matrix [Cg*kh*kw, OH*OW] multiplied by the group's
// filters [F/groups, Cg*kh*kw] (gemm.h), straight into out. Everything
// is read from LOCAL extents: the batch split (in:S(0)) gives fewer
// images, the filter split (weight,bias:S(0), groups 1) fewer filters,
// the in-channel split (in,weight:S(1), groups 1) fewer channels and an
// addend of out, with bias and _add_to_output P so each is added once.
//
// Dtypes: bias_add f32 f64 f16 bf16 i32 i64 (integers wrap); conv2d f32
// f64 f16 bf16 (halves in float).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/conv_args.h"
#include "kernels/cpu/gemm.h"
#include "kernels/common/int_arith.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "ops/op_util.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;
using Numeric = DtypeConcat<FloatTypes, HalfTypes, IntTypes>;

absl::Status BiasAddKernel(KernelContext& ctx) {
  const LocalTensor& a = ctx.input(0);
  const LocalTensor& b = ctx.input(1);
  OFS_ASSIGN_OR_RETURN(int axis, ctx.Annotate(ops::NormalizeAxis(ctx.Attr<int64_t>("axis"),
                                                                 a.rank(), "attribute axis")));
  if (b.rank() != 1 || b.dim(0) != a.dim(axis)) {
    return ctx.Internal(absl::StrCat("local b_0 ", DimsToString(b.dims()), " does not match local a_0 ",
                                     DimsToString(a.dims()), " at axis ", axis));
  }
  if (b.dtype() != a.dtype()) return ctx.UnsupportedDtype(b.dtype(), "b_0");
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, a.dims(), a.dtype()));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= a.dim(d);
  for (int d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  const int64_t mid = a.dim(axis);
  return DispatchDtype<Numeric>(ctx, a.dtype(), "a_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = a.data<T>();
    const T* bias = b.data<T>();
    T* y = ctx.output(0).data<T>();
    if (inner == 1) {
      // Bias on the last axis (a Linear layer's): walk each row against
      // the bias, so the loop is long and vectorizes (the loop below
      // would run inner = 1 element per bias value).
      for (int64_t o = 0; o < outer; ++o) {
        const T* xr = x + o * mid;
        T* yr = y + o * mid;
        for (int64_t c = 0; c < mid; ++c) {
          yr[c] = ConvertElement<T>(WrapAdd(ConvertElement<C>(xr[c]), ConvertElement<C>(bias[c])));
        }
      }
      return absl::OkStatus();
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < mid; ++c) {
        const C v = ConvertElement<C>(bias[c]);
        const int64_t base = (o * mid + c) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          y[base + i] = ConvertElement<T>(WrapAdd(ConvertElement<C>(x[base + i]), v));
        }
      }
    }
    return absl::OkStatus();
  });
}

// col[(c*kh + i)*kw + j][y*ow + x] = in[c, y*sh - ph + i*dh, x*sw - pw + j*dw]
// for the cg channels at `image` (0 outside the image: padding).
template <typename C>
void Im2Col(const ConvGeometry& g, const C* image, C* col) {
  for (int64_t c = 0; c < g.cg; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        C* row = col + ((c * g.kh + i) * g.kw + j) * g.oh * g.ow;
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t iy = y * g.sh - g.ph + i * g.dh;
          C* dst = row + y * g.ow;
          if (iy < 0 || iy >= g.h) {
            std::fill(dst, dst + g.ow, C(0));
            continue;
          }
          const C* src = image + (c * g.h + iy) * g.w;
          for (int64_t x = 0; x < g.ow; ++x) {
            const int64_t ix = x * g.sw - g.pw + j * g.dw;
            dst[x] = ix >= 0 && ix < g.w ? src[ix] : C(0);
          }
        }
      }
    }
  }
}

absl::Status Conv2dKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const ConvGeometry g, CheckConv2d(ctx));
  const LocalTensor& in = ctx.input("in");
  const bool has_bias = ctx.has_input("bias");
  const bool has_add = ctx.has_input("_add_to_output");
  return DispatchDtype<Floating>(ctx, in.dtype(), "in_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const ComputeInput<T> x(in), w(ctx.input("weight"));
    ComputeOutput<T> out(ctx.output(0));
    const int64_t plane = g.oh * g.ow;
    const int64_t fg = g.f / g.groups, patch = g.cg * g.kh * g.kw;
    // out starts as _add_to_output plus the bias, then the products add.
    if (has_add) {
      const ComputeInput<T> add(ctx.input("_add_to_output"));
      std::copy(add.data(), add.data() + ctx.output(0).elem_cnt(), out.data());
    } else {
      std::fill(out.data(), out.data() + ctx.output(0).elem_cnt(), C(0));
    }
    if (has_bias) {
      const ComputeInput<T> bias(ctx.input("bias"));
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t f = 0; f < g.f; ++f) {
          C* p = out.data() + (n * g.f + f) * plane;
          for (int64_t i = 0; i < plane; ++i) p[i] += bias.data()[f];
        }
      }
    }
    std::vector<C> col(static_cast<size_t>(patch * plane));
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        Im2Col(g, x.data() + (n * g.c + gr * g.cg) * g.h * g.w, col.data());
        Gemm<C>(false, false, fg, plane, patch, C(1), w.data() + gr * fg * patch, col.data(),
                /*accumulate=*/true, out.data() + (n * g.f + gr * fg) * plane);
      }
    }
    out.Finish();
    return absl::OkStatus();
  });
}

absl::Status RegisterConvKernels(KernelRegistry& registry) {
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"bias_add", BiasAddKernel, DtypesOf(Numeric{})},
                          {"conv2d", Conv2dKernel, DtypesOf(Floating{})}});
}

OFS_REGISTER_KERNELS(RegisterConvKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
