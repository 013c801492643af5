// Normalisation, optimizer and rotary kernels on CUDA (attention is in
// attention.cu), templated on the storage type T (f32 f64 f16 bf16,
// DispatchFloating) with the CPU kernels' arithmetic: the norms accumulate
// in double (norm_kernels.cc), adam computes in double like
// optimizer_kernels.cc, rotary in ComputeT<T> (float for halves). The norms,
// adam_update and rotary (RotaryTable) are registered as kernels in
// cuda_kernels.cc; Rotary (angles from a base, f32) is a launcher only
// (docs/GPU.md). Every result is deterministic: no float atomics; sums over
// rows run in a fixed order.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// ------------------------------------------------------------ norms --
//
// T is the storage type; C = ComputeT<T> (float for halves) is the
// statistics' type only (the CPU's StatsType: mean, inv_std are f32 for
// f16/bf16, else x's dtype). Everything else is in double with the CPU
// kernels' formulas (norm_kernels.cc): sums, and each element's value,
// rounded to T once. The forward normalises with the unrounded double
// mean and inv_std, as the CPU does; the grads read the saved (rounded)
// statistics, as the CPU does.

// Products rounded on their own: nvcc would fuse a * b + c into one fma,
// which the CPU build (x86-64, no FMA) never does.
__device__ __forceinline__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

// mode 0: layer_norm, 1: rms_norm. One block per row, grid-stride over
// rows (the grid is capped; rows may exceed gridDim.x's range).
template <typename T>
__global__ void NormForwardKernel(int mode, int64_t rows, int64_t cols, double eps, const T* x,
                                  const T* gamma, const T* beta, T* y, ComputeT<T>* mean_out,
                                  ComputeT<T>* inv_out) {
  using C = ComputeT<T>;
  for (int64_t rw = blockIdx.x; rw < rows; rw += gridDim.x) {
    const T* row = x + rw * cols;
    T* out = y + rw * cols;
    double mean = 0;
    if (mode == 0) {
      double s = 0;
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += To<double>(row[c]);
      mean = BlockSum(s) / static_cast<double>(cols);
    }
    double q = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double d = To<double>(row[c]) - mean;
      q += MulRn(d, d);
    }
    const double inv = 1.0 / sqrt(BlockSum(q) / static_cast<double>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      double v = MulRn(To<double>(row[c]) - mean, inv);
      if (gamma != nullptr) v = MulRn(v, To<double>(gamma[c]));
      if (beta != nullptr) v += To<double>(beta[c]);
      out[c] = To<T>(v);
    }
    if (threadIdx.x == 0) {
      if (mean_out != nullptr) mean_out[rw] = static_cast<C>(mean);
      inv_out[rw] = static_cast<C>(inv);
    }
  }
}

// dx of a row, as the CPU's NormGrad: with g = gamma * dy and iv the saved
// inv_std, layer: xs = (x - mean) * iv, dx = iv * (g - sum(g)/n - xs *
// sum(g xs)/n); rms: xs = x, dx = iv * (g - xs * iv * iv * sum(g xs)/n).
template <typename T>
__global__ void NormBackwardData(int mode, int64_t rows, int64_t cols, const T* x,
                                 const T* gamma, const ComputeT<T>* mean,
                                 const ComputeT<T>* inv, const T* dy, T* dx) {
  const double n = static_cast<double>(cols);
  for (int64_t rw = blockIdx.x; rw < rows; rw += gridDim.x) {
    const int64_t off = rw * cols;
    const double mu = mode == 0 ? static_cast<double>(mean[rw]) : 0.0;
    const double iv = static_cast<double>(inv[rw]);
    auto g_at = [&](int64_t c) {
      const double g = To<double>(dy[off + c]);
      return gamma != nullptr ? MulRn(g, To<double>(gamma[c])) : g;
    };
    auto xs_at = [&](int64_t c) {
      return mode == 0 ? MulRn(To<double>(x[off + c]) - mu, iv) : To<double>(x[off + c]);
    };
    double sg = 0, sgx = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double g = g_at(c);
      sg += g;
      sgx += MulRn(g, xs_at(c));
    }
    const double sum_g = BlockSum(sg), sum_gx = BlockSum(sgx);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double g = g_at(c), xs = xs_at(c);
      const double v = mode == 0 ? iv * (g - sum_g / n - MulRn(xs, sum_gx) / n)
                                 : iv * (g - MulRn(MulRn(MulRn(xs, iv), iv), sum_gx) / n);
      dx[off + c] = To<T>(v);
    }
  }
}

// dgamma[c] = sum_r dy * h, dbeta[c] = sum_r dy: one thread per column,
// rows in order (deterministic, coalesced across threads), double sums.
template <typename T>
__global__ void NormBackwardParams(int mode, int64_t rows, int64_t cols, const T* x,
                                   const ComputeT<T>* mean, const ComputeT<T>* inv, const T* dy,
                                   T* dgamma, T* dbeta) {
  using C = ComputeT<T>;
  for (int64_t c = blockIdx.x * blockDim.x + threadIdx.x; c < cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sg = 0, sb = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const double h = MulRn(
          To<double>(x[r * cols + c]) - (mode == 0 ? static_cast<double>(mean[r]) : 0.0),
          static_cast<double>(inv[r]));
      const double g = To<double>(dy[r * cols + c]);
      sg += MulRn(g, h);
      sb += g;
    }
    if (dgamma != nullptr) dgamma[c] = To<T>(sg);
    if (dbeta != nullptr) dbeta[c] = To<T>(sb);
  }
}

// -------------------------------------------------------------- adam --
//
// Elementwise in double for every dtype, in the CPU kernel's order
// (optimizer_kernels.cc), rounding m, v and the parameter to T once per
// step: the update is memory-bound, so double costs no time on the GPUs we
// target. Products are rounded on their own (MulRn: no fma, as on the
// CPU), so the two devices agree bit for bit.

template <typename C>
struct AdamArgs {
  C lr, beta1, beta2, eps, weight_decay, scale, correction1, correction2;
};

template <typename T>
__device__ __forceinline__ void AdamStep(const AdamArgs<double>& a, T gt, T& pt, T& mt, T& vt) {
  const double g = a.scale * To<double>(gt);
  const double m = MulRn(a.beta1, To<double>(mt)) + MulRn(1 - a.beta1, g);
  const double v = MulRn(a.beta2, To<double>(vt)) + MulRn(MulRn(1 - a.beta2, g), g);
  const double p = To<double>(pt);
  const double update = (m / a.correction1) / (sqrt(v / a.correction2) + a.eps);
  mt = To<T>(m);
  vt = To<T>(v);
  pt = To<T>(p - MulRn(a.lr, update) - MulRn(MulRn(a.lr, a.weight_decay), p));
}

// 16-byte packs over the first n / kN * kN elements; a scalar tail.
template <typename T>
__global__ void AdamKernel(AdamArgs<double> a, int64_t n, T* param, T* m, T* v,
                           const T* grad, bool vector) {
  using P = Pack<T>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t first_scalar = 0;
  if (vector) {
    const int64_t packs = n / P::kN;
    for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < packs; i += stride) {
      P p = reinterpret_cast<P*>(param)[i];
      P mp = reinterpret_cast<P*>(m)[i];
      P vp = reinterpret_cast<P*>(v)[i];
      const P g = reinterpret_cast<const P*>(grad)[i];
#pragma unroll
      for (int j = 0; j < P::kN; ++j) AdamStep(a, g.v[j], p.v[j], mp.v[j], vp.v[j]);
      reinterpret_cast<P*>(param)[i] = p;
      reinterpret_cast<P*>(m)[i] = mp;
      reinterpret_cast<P*>(v)[i] = vp;
    }
    first_scalar = packs * P::kN;
  }
  for (int64_t i = first_scalar + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    AdamStep(a, grad[i], param[i], m[i], v[i]);
  }
}

// ------------------------------------------------------------ rotary --

// x: [rows, seq, dim] (rows = batch*heads flattened outside seq) with the
// rotate-half pairing (i, i + dim/2); angle = (offset + s) * base^(-2i/dim);
// sign -1 rotates back (the gradient).
__global__ void RotaryKernel(int64_t total_pairs, int64_t seq, int64_t dim, int64_t offset,
                             float base, float sign, const float* x, float* y) {
  const int64_t half = dim / 2;
  for (int64_t t = blockIdx.x * blockDim.x + threadIdx.x; t < total_pairs;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t % half;
    const int64_t row = t / half;  // (r, s) flattened
    const int64_t s = row % seq;
    const float angle =
        static_cast<float>(offset + s) * powf(base, -2.f * static_cast<float>(i) / dim);
    float sn, cs;
    sincosf(angle, &sn, &cs);
    sn *= sign;
    const float x1 = x[row * dim + i], x2 = x[row * dim + i + half];
    y[row * dim + i] = x1 * cs - x2 * sn;
    y[row * dim + i + half] = x2 * cs + x1 * sn;
  }
}

// The registry's rotary_embedding(_grad) with cos/sin tables [*, dim]:
// row (b, s) of x uses table row row0 + s; pairs (i, i + h):
//   forward: y[i] = x[i] c[i] - x[i+h] s[i]; y[i+h] = x[i+h] c[i+h] + x[i] s[i+h]
//   grad:    y[i] = x[i] c[i] + x[i+h] s[i+h]; y[i+h] = x[i+h] c[i+h] - x[i] s[i]
// In ComputeT<T>, as the CPU kernel (its ComputeType), with no fma (MulRn).
template <typename T>
__global__ void RotaryTableKernel(bool grad, int64_t total_pairs, int64_t seq, int64_t dim,
                                  int64_t row0, const T* cs, const T* sn, const T* x, T* y) {
  using C = ComputeT<T>;
  const int64_t half = dim / 2;
  for (int64_t t = blockIdx.x * blockDim.x + threadIdx.x; t < total_pairs;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t % half;
    const int64_t row = t / half;  // (b, s) flattened
    const T* c = cs + (row0 + row % seq) * dim;
    const T* s = sn + (row0 + row % seq) * dim;
    const C lo = To<C>(x[row * dim + i]), hi = To<C>(x[row * dim + i + half]);
    const C cl = To<C>(c[i]), ch = To<C>(c[i + half]);
    const C sl = To<C>(s[i]), sh = To<C>(s[i + half]);
    if (!grad) {
      y[row * dim + i] = To<T>(MulRn(lo, cl) - MulRn(hi, sl));
      y[row * dim + i + half] = To<T>(MulRn(hi, ch) + MulRn(lo, sh));
    } else {
      y[row * dim + i] = To<T>(MulRn(lo, cl) + MulRn(hi, sh));
      y[row * dim + i + half] = To<T>(MulRn(hi, ch) - MulRn(lo, sl));
    }
  }
}

unsigned Blocks(int64_t n) { return GridFor(n, kThreads); }

}  // namespace

std::string NormForward(int dtype, bool rms, int64_t rows, int64_t cols, double eps,
                        const void* x, const void* gamma, const void* beta, void* y, void* mean,
                        void* inv_std) {
  if (rows == 0 || cols == 0) return "";
  return DispatchFloating("norm_forward", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    using C = ComputeT<T>;
    NormForwardKernel<T><<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        rms ? 1 : 0, rows, cols, eps, static_cast<const T*>(x), static_cast<const T*>(gamma),
        rms ? nullptr : static_cast<const T*>(beta), static_cast<T*>(y),
        rms ? nullptr : static_cast<C*>(mean), static_cast<C*>(inv_std));
    return LaunchError("norm_forward");
  });
}

std::string NormBackward(int dtype, bool rms, int64_t rows, int64_t cols, const void* x,
                         const void* gamma, const void* mean, const void* inv_std,
                         const void* dy, void* dx, void* dgamma, void* dbeta) {
  if (rows == 0 || cols == 0) return "";
  const int mode = rms ? 1 : 0;
  return DispatchFloating("norm_backward", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    using C = ComputeT<T>;
    const T* xt = static_cast<const T*>(x);
    const T* dyt = static_cast<const T*>(dy);
    const C* mu = static_cast<const C*>(mean);
    const C* inv = static_cast<const C*>(inv_std);
    if (dx != nullptr) {
      NormBackwardData<T><<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
          mode, rows, cols, xt, static_cast<const T*>(gamma), mu, inv, dyt, static_cast<T*>(dx));
    }
    if (dgamma != nullptr || dbeta != nullptr) {
      NormBackwardParams<T><<<Blocks(cols), kThreads, 0, Stream()>>>(
          mode, rows, cols, xt, mu, inv, dyt, static_cast<T*>(dgamma), static_cast<T*>(dbeta));
    }
    return LaunchError("norm_backward");
  });
}

std::string AdamUpdate(int dtype, int64_t n, int64_t step, double lr, double beta1,
                       double beta2, double eps, double weight_decay, void* param, void* m,
                       void* v, const void* grad) {
  if (step < 1) return "adam_update: step " + std::to_string(step) + " is below 1";
  return AdamUpdateCorrected(dtype, n, lr, beta1, beta2, eps, weight_decay, /*scale=*/1.0,
                             1 - std::pow(beta1, static_cast<double>(step)),
                             1 - std::pow(beta2, static_cast<double>(step)), param, m, v, grad);
}

std::string AdamUpdateCorrected(int dtype, int64_t n, double lr, double beta1, double beta2,
                                double eps, double weight_decay, double scale,
                                double correction1, double correction2, void* param, void* m,
                                void* v, const void* grad) {
  if (n == 0) return "";
  return DispatchFloating("adam_update", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const AdamArgs<double> a{lr, beta1, beta2, eps, weight_decay, scale, correction1, correction2};
    const bool vector = Aligned16(param) && Aligned16(m) && Aligned16(v) && Aligned16(grad);
    const int64_t items = vector ? n / Pack<T>::kN + 1 : n;
    AdamKernel<T><<<Blocks(items), kThreads, 0, Stream()>>>(
        a, n, static_cast<T*>(param), static_cast<T*>(m), static_cast<T*>(v),
        static_cast<const T*>(grad), vector);
    return LaunchError("adam_update");
  });
}

std::string Rotary(bool backward, int64_t rows, int64_t seq, int64_t dim, int64_t offset,
                   double base, const float* x, float* y) {
  if (dim % 2 != 0) return "rotary_embedding: head dim " + std::to_string(dim) + " is odd";
  const int64_t pairs = rows * seq * (dim / 2);
  if (pairs == 0) return "";
  RotaryKernel<<<Blocks(pairs), kThreads, 0, Stream()>>>(pairs, seq, dim, offset,
                                                         static_cast<float>(base),
                                                         backward ? -1.f : 1.f, x, y);
  return LaunchError("rotary_embedding");
}

std::string RotaryTable(int dtype, bool grad, int64_t bh, int64_t seq, int64_t dim,
                        int64_t row0, const void* cos, const void* sin, const void* x, void* y) {
  const char* name = grad ? "rotary_embedding_grad" : "rotary_embedding";
  if (dim % 2 != 0) return std::string(name) + ": head dim " + std::to_string(dim) + " is odd";
  const int64_t pairs = bh * seq * (dim / 2);
  if (pairs == 0) return "";
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    RotaryTableKernel<T><<<Blocks(pairs), kThreads, 0, Stream()>>>(
        grad, pairs, seq, dim, row0, static_cast<const T*>(cos), static_cast<const T*>(sin),
        static_cast<const T*>(x), static_cast<T*>(y));
    return LaunchError(name);
  });
}

}  // namespace oneflow_sbp::kernels::cuda
