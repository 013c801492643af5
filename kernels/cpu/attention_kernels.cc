// CPU kernels of the attention ops (rules in ops/attention_ops.cc):
//
//   rotary_embedding(x, cos, sin) -> y, x [B,H,S,D], cos/sin [S,D], h = D/2:
//     y[d]   = x[d] cos[d]     - x[d+h] sin[d]      (d < h)
//     y[d+h] = x[d+h] cos[d+h] + x[d] sin[d+h]
//   rotary_embedding_grad(dy, cos, sin) -> dx, the transpose:
//     dx[d]   = dy[d] cos[d]     + dy[d+h] sin[d+h]
//     dx[d+h] = dy[d+h] cos[d+h] - dy[d] sin[d]
//   scaled_dot_product_attention(q, k, v, opt key_padding_mask; causal,
//       scale) -> out
//     s = q k^T * scale (scale 0: 1/sqrt(D)), masked where j > i + Sk - Sq
//     (GLOBAL query row i, so a rank holding a slice of the query rows
//     masks the same keys as the single-rank run) and where the mask row
//     of the batch is 0, p = softmax(s) over the unmasked keys (masked
//     keys get p = 0 exactly), out = p v. A row with every key masked
//     (Sq > Sk, or every key padded) has no softmax: its out is 0.
//   scaled_dot_product_attention_grad(dout, q, k, v, opt mask) -> dq, dk,
//     dv recomputes p; dv = p^T dout; dp = dout v^T;
//     ds = p * (dp - rowsum(dp * p)); dq = scale ds k; dk = scale ds^T q
//     (a masked key has p = 0 in every row, so its dk and dv are 0).
//   tril(in; diagonal) -> out keeps (.., i, j) with j <= i + diagonal in
//     GLOBAL coordinates of the last two dims (the rule splits every dim).
//
// Layouts: rotary indexes cos and sin by x's global sequence row relative
// to their own slice (so x:S(2) with cos:S(0) and x:S(0) with cos:B both
// work) and checks that they cover x's rows; D must be whole. Attention
// needs whole keys and whole D on every rank (the rules split only batch,
// heads and query rows; a P value or dout is fine: both enter linearly);
// the key_padding_mask [B, Sk] is read at q's local batch row (it splits
// with the batch or is whole), as nonzero flags (mask_flags.h).
// Attention accumulates in double; f16/bf16 compute in double too.
//
// Dtypes: rotary and attention f32 f64 f16 bf16; tril every type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/attention_layout.h"
#include "kernels/cpu/mask_flags.h"
#include "kernels/common/select_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

template <typename T>
double D(T v) {
  return ConvertElement<double>(v);
}

// ---------------------------------------------------------------- rotary

// rotary_embedding (grad = false) or its transpose.
template <bool kGrad>
absl::Status RotaryKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const int64_t row0, RotaryRowOffset(ctx));
  const LocalTensor& x = ctx.input(0);
  const LocalTensor& cos = ctx.input(1);
  const LocalTensor& sin = ctx.input(2);
  const int64_t bh = x.dim(0) * x.dim(1), s = x.dim(2), d = x.dim(3), h = d / 2;
  return DispatchDtype<Floating>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* xp = x.data<T>();
    const T* cp = cos.data<T>();
    const T* sp = sin.data<T>();
    T* yp = ctx.output(0).data<T>();
    for (int64_t b = 0; b < bh; ++b) {
      for (int64_t r = 0; r < s; ++r) {
        const T* xi = xp + (b * s + r) * d;
        T* yi = yp + (b * s + r) * d;
        const T* c = cp + (row0 + r) * d;
        const T* sn = sp + (row0 + r) * d;
        for (int64_t j = 0; j < h; ++j) {
          const C lo = ConvertElement<C>(xi[j]), hi = ConvertElement<C>(xi[j + h]);
          const C cl = ConvertElement<C>(c[j]), ch = ConvertElement<C>(c[j + h]);
          const C sl = ConvertElement<C>(sn[j]), sh = ConvertElement<C>(sn[j + h]);
          if constexpr (!kGrad) {
            yi[j] = ConvertElement<T>(lo * cl - hi * sl);
            yi[j + h] = ConvertElement<T>(hi * ch + lo * sh);
          } else {
            yi[j] = ConvertElement<T>(lo * cl + hi * sh);
            yi[j + h] = ConvertElement<T>(hi * ch - lo * sl);
          }
        }
      }
    }
    return absl::OkStatus();
  });
}

// ------------------------------------------------------------- attention

// The softmax row p[0..sk) of query row `r` of head `b`; false if every
// key is masked (p is then all zero). `keep` is the batch's mask row (1 =
// attend), or null without a key_padding_mask.
template <typename T>
bool SoftmaxRow(const AttentionDims& a, const T* q, const T* k, const uint8_t* keep, int64_t b,
                int64_t r, std::vector<double>& p) {
  const T* qi = q + (b * a.sq + r) * a.d;
  const int64_t last = a.causal ? std::min(a.sk, a.row0 + r + a.shift + 1) : a.sk;
  double mx = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (int64_t j = 0; j < a.sk; ++j) {
    if (j >= last || (keep != nullptr && keep[j] == 0)) {
      p[j] = 0;
      continue;
    }
    any = true;
    const T* kj = k + (b * a.sk + j) * a.d;
    double s = 0;
    for (int64_t c = 0; c < a.d; ++c) s += D(qi[c]) * D(kj[c]);
    p[j] = s * a.scale;
    mx = std::max(mx, p[j]);
  }
  // No key to attend to: no softmax (0, never the NaN of exp(-inf - -inf)).
  if (!any) return false;
  double sum = 0;
  for (int64_t j = 0; j < last; ++j) {
    if (keep == nullptr || keep[j] != 0) sum += p[j] = std::exp(p[j] - mx);
  }
  for (int64_t j = 0; j < last; ++j) p[j] /= sum;
  return true;
}

// The flags of the call's key_padding_mask (empty without one) and the
// mask row of local batch-head b.
std::vector<uint8_t> KeyFlags(const KernelContext& ctx, const AttentionDims& a) {
  return a.mask >= 0 ? NonzeroFlags(ctx.input(a.mask)) : std::vector<uint8_t>();
}
const uint8_t* KeyRow(const std::vector<uint8_t>& flags, const AttentionDims& a, int64_t b) {
  return a.mask < 0 ? nullptr : flags.data() + (b / a.heads + a.mask_row0) * a.sk;
}

absl::Status AttentionKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const AttentionDims a, CheckAttention(ctx));
  const LocalTensor& q = ctx.input(0);
  const DataType dt = q.dtype();
  const std::vector<uint8_t> flags = KeyFlags(ctx, a);
  return DispatchDtype<Floating>(ctx, dt, ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* qp = q.data<T>();
    const T* kp = ctx.input(1).data<T>();
    const T* vp = ctx.input(2).data<T>();
    T* out = ctx.output(0).data<T>();
    std::vector<double> p(a.sk), acc(a.dv);
    for (int64_t b = 0; b < a.bh; ++b) {
      const uint8_t* keep = KeyRow(flags, a, b);
      for (int64_t r = 0; r < a.sq; ++r) {
        SoftmaxRow(a, qp, kp, keep, b, r, p);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < a.sk; ++j) {
          if (p[j] == 0) continue;
          const T* vj = vp + (b * a.sk + j) * a.dv;
          for (int64_t c = 0; c < a.dv; ++c) acc[c] += p[j] * D(vj[c]);
        }
        T* o = out + (b * a.sq + r) * a.dv;
        for (int64_t c = 0; c < a.dv; ++c) o[c] = ConvertElement<T>(acc[c]);
      }
    }
    return absl::OkStatus();
  });
}

absl::Status AttentionGradKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const AttentionDims a, CheckAttentionGrad(ctx));
  const LocalTensor& dout = ctx.input(0);
  const LocalTensor& q = ctx.input(1);
  const DataType dt = q.dtype();
  const std::vector<uint8_t> flags = KeyFlags(ctx, a);
  return DispatchDtype<Floating>(ctx, dt, ctx.input_bn(1), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gp = dout.data<T>();
    const T* qp = q.data<T>();
    const T* kp = ctx.input(2).data<T>();
    const T* vp = ctx.input(3).data<T>();
    // dk and dv sum over every query row: accumulate in double.
    std::vector<double> dq(a.d), dk(a.sk * a.d), dv(a.sk * a.dv), p(a.sk), ds(a.sk);
    T* dqp = ctx.output(0).data<T>();
    T* dkp = ctx.output(1).data<T>();
    T* dvp = ctx.output(2).data<T>();
    for (int64_t b = 0; b < a.bh; ++b) {
      const uint8_t* keep = KeyRow(flags, a, b);
      std::fill(dk.begin(), dk.end(), 0.0);
      std::fill(dv.begin(), dv.end(), 0.0);
      for (int64_t r = 0; r < a.sq; ++r) {
        const bool any = SoftmaxRow(a, qp, kp, keep, b, r, p);
        const T* g = gp + (b * a.sq + r) * a.dv;
        const T* qi = qp + (b * a.sq + r) * a.d;
        double dot = 0;
        for (int64_t j = 0; any && j < a.sk; ++j) {
          if (p[j] == 0) {
            ds[j] = 0;
            continue;
          }
          const T* vj = vp + (b * a.sk + j) * a.dv;
          double dp = 0;
          for (int64_t c = 0; c < a.dv; ++c) {
            dp += D(g[c]) * D(vj[c]);
            dv[j * a.dv + c] += p[j] * D(g[c]);
          }
          ds[j] = dp;
          dot += dp * p[j];
        }
        std::fill(dq.begin(), dq.end(), 0.0);
        for (int64_t j = 0; any && j < a.sk; ++j) {
          if (p[j] == 0) continue;
          const double w = p[j] * (ds[j] - dot) * a.scale;
          const T* kj = kp + (b * a.sk + j) * a.d;
          for (int64_t c = 0; c < a.d; ++c) {
            dq[c] += w * D(kj[c]);
            dk[j * a.d + c] += w * D(qi[c]);
          }
        }
        T* dqi = dqp + (b * a.sq + r) * a.d;
        for (int64_t c = 0; c < a.d; ++c) dqi[c] = ConvertElement<T>(dq[c]);
      }
      for (int64_t i = 0; i < a.sk * a.d; ++i) dkp[b * a.sk * a.d + i] = ConvertElement<T>(dk[i]);
      for (int64_t i = 0; i < a.sk * a.dv; ++i) dvp[b * a.sk * a.dv + i] = ConvertElement<T>(dv[i]);
    }
    return absl::OkStatus();
  });
}

// ------------------------------------------------------------------ tril

absl::Status TrilKernel(KernelContext& ctx) {
  const LocalTensor& in = ctx.input(0);
  // Checks and the kept-column offset shared with CUDA (select_args.h).
  OFS_ASSIGN_OR_RETURN(const int64_t lead, CheckTril(ctx));
  const int r = in.rank();
  const int64_t rows = in.dim(r - 2), cols = in.dim(r - 1);
  const int64_t mats = rows * cols == 0 ? 0 : in.elem_cnt() / (rows * cols);
  return DispatchDtype<AllTypes>(ctx, in.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = ctx.output(0).data<T>();
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t base = (m * rows + i) * cols;
        // Columns [0, keep) are kept.
        const int64_t keep = std::clamp<int64_t>(i + lead + 1, 0, cols);
        std::copy(x + base, x + base + keep, y + base);
        std::fill(y + base + keep, y + base + cols, ConvertElement<T>(0.0));
      }
    }
    return absl::OkStatus();
  });
}

absl::Status RegisterAttentionKernels(KernelRegistry& registry) {
  const std::vector<DataType> floating = DtypesOf(Floating{});
  return RegisterKernels(
      registry, DeviceType::kCpu,
      {
          {"rotary_embedding", RotaryKernel<false>, floating},
          {"rotary_embedding_grad", RotaryKernel<true>, floating},
          {"scaled_dot_product_attention", AttentionKernel, floating},
          {"scaled_dot_product_attention_grad", AttentionGradKernel, floating},
          {"tril", TrilKernel, DtypesOf(AllTypes{})},
      });
}

OFS_REGISTER_KERNELS(RegisterAttentionKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
