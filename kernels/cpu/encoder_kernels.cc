// CPU kernels of the sentence-encoder head (rules and formulas in
// ops/encoder_ops.cc):
//
//   masked_mean_pool(x [B,S,H], mask [B,S]) -> y [B,H]
//     y[b, :] = sum over kept s of x[b, s, :] / max(count[b], 1e-9)
//   masked_mean_pool_grad(dy [B,H], mask [B,S]) -> dx [B,S,H]
//     dx[b, s, :] = kept ? dy[b, :] / max(count[b], 1e-9) : 0
//   l2_normalize(x; axis, epsilon) -> y = x / max(n, epsilon), n = ||x||
//   l2_normalize_grad(dy, x; axis, epsilon) -> dx
//     n >= epsilon: y = x / n, dx = (dy - y * sum(dy * y)) / n
//     n <  epsilon: dx = dy / epsilon
//
// kept = mask != 0 (NonzeroFlags, any mask dtype). A masked position is
// skipped, not multiplied by 0, so an inf or NaN there stays out of the
// mean. Sums, norms and each element's value are in double, rounded to
// the storage type once (f16/bf16 too).
//
// Layouts (encoder_args.h): the pooled sequence and the normalised axis
// are whole on every rank; the mask is indexed by the data's batch row
// relative to its own slice (it splits with the batch or is whole). Under
// x:P (dy:P) each rank pools (normalises the grad of) its addend with the
// whole row's count (norm), which sums to the result: both are linear.
//
// Dtypes: f32 f64 f16 bf16 for x, dy, y, dx; the mask any dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/encoder_args.h"
#include "kernels/cpu/mask_flags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

template <typename T>
double D(T v) {
  return ConvertElement<double>(v);
}

// What masked_mean_pool divides by: the kept positions of the mask row,
// at least 1e-9 (sentence-transformers' clamp), so a row with none gives 0.
double PoolDivisor(const uint8_t* keep, int64_t s) {
  double count = 0;
  for (int64_t j = 0; j < s; ++j) count += keep[j];
  return std::max(count, 1e-9);
}

absl::Status MaskedMeanPoolKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const PoolDims p, CheckMaskedMeanPool(ctx));
  const std::vector<uint8_t> keep = NonzeroFlags(ctx.input(1));
  const LocalTensor& x = ctx.input(0);
  return DispatchDtype<Floating>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    T* yp = ctx.output(0).data<T>();
    std::vector<double> acc(p.h);
    for (int64_t b = 0; b < p.b; ++b) {
      const uint8_t* k = keep.data() + (b + p.mask_row0) * p.s;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t s = 0; s < p.s; ++s) {
        if (k[s] == 0) continue;
        const T* row = xp + (b * p.s + s) * p.h;
        for (int64_t c = 0; c < p.h; ++c) acc[c] += D(row[c]);
      }
      const double div = PoolDivisor(k, p.s);
      for (int64_t c = 0; c < p.h; ++c) yp[b * p.h + c] = ConvertElement<T>(acc[c] / div);
    }
    return absl::OkStatus();
  });
}

absl::Status MaskedMeanPoolGradKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const PoolDims p, CheckMaskedMeanPoolGrad(ctx));
  const std::vector<uint8_t> keep = NonzeroFlags(ctx.input(1));
  const LocalTensor& dy = ctx.input(0);
  return DispatchDtype<Floating>(ctx, dy.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gp = dy.data<T>();
    T* dx = ctx.output(0).data<T>();
    for (int64_t b = 0; b < p.b; ++b) {
      const uint8_t* k = keep.data() + (b + p.mask_row0) * p.s;
      const double div = PoolDivisor(k, p.s);
      for (int64_t s = 0; s < p.s; ++s) {
        T* out = dx + (b * p.s + s) * p.h;
        for (int64_t c = 0; c < p.h; ++c) {
          out[c] = ConvertElement<T>(k[s] != 0 ? D(gp[b * p.h + c]) / div : 0.0);
        }
      }
    }
    return absl::OkStatus();
  });
}

// l2_normalize (kGrad false: y from x) or its grad (dx from dy and x).
template <bool kGrad>
absl::Status L2NormalizeKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const L2Dims d, CheckL2Normalize(ctx));
  const LocalTensor& x = ctx.input(kGrad ? 1 : 0);
  return DispatchDtype<Floating>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const T* gp = kGrad ? ctx.input(0).data<T>() : nullptr;
    T* out = ctx.output(0).data<T>();
    for (int64_t o = 0; o < d.outer; ++o) {
      for (int64_t i = 0; i < d.inner; ++i) {
        // Element k of this vector is at base + k * inner.
        const int64_t base = o * d.n * d.inner + i;
        double ss = 0;
        for (int64_t k = 0; k < d.n; ++k) {
          const double v = D(xp[base + k * d.inner]);
          ss += v * v;
        }
        const double norm = std::sqrt(ss);
        if constexpr (!kGrad) {
          const double div = std::max(norm, d.epsilon);
          for (int64_t k = 0; k < d.n; ++k) {
            out[base + k * d.inner] = ConvertElement<T>(D(xp[base + k * d.inner]) / div);
          }
        } else if (norm >= d.epsilon) {
          double dot = 0;  // sum(dy * y)
          for (int64_t k = 0; k < d.n; ++k) {
            dot += D(gp[base + k * d.inner]) * (D(xp[base + k * d.inner]) / norm);
          }
          for (int64_t k = 0; k < d.n; ++k) {
            const int64_t at = base + k * d.inner;
            out[at] = ConvertElement<T>((D(gp[at]) - D(xp[at]) / norm * dot) / norm);
          }
        } else {
          for (int64_t k = 0; k < d.n; ++k) {
            const int64_t at = base + k * d.inner;
            out[at] = ConvertElement<T>(D(gp[at]) / d.epsilon);
          }
        }
      }
    }
    return absl::OkStatus();
  });
}

absl::Status RegisterEncoderKernels(KernelRegistry& registry) {
  const std::vector<DataType> floating = DtypesOf(Floating{});
  return RegisterKernels(registry, DeviceType::kCpu,
                         {
                             {"l2_normalize", L2NormalizeKernel<false>, floating},
                             {"l2_normalize_grad", L2NormalizeKernel<true>, floating},
                             {"masked_mean_pool", MaskedMeanPoolKernel, floating},
                             {"masked_mean_pool_grad", MaskedMeanPoolGradKernel, floating},
                         });
}

OFS_REGISTER_KERNELS(RegisterEncoderKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
