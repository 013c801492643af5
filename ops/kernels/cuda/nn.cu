// Normalisation, optimizer, rotary and attention kernels on CUDA (f32).
// The norms, adam_update, rotary (RotaryTable) and attention are
// registered as kernels in cuda_kernels.cc; Rotary (angles from a base) is
// a launcher only (docs/GPU.md). Every result is deterministic: no float
// atomics; sums over rows run in a fixed order.
#include <cmath>

#include "ops/kernels/cuda/cuda_common.cuh"
#include "ops/kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxHead = 256;  // head dim limit of the attention kernels

// ------------------------------------------------------------ norms --

// mode 0: layer_norm, 1: rms_norm. One block per row.
__global__ void NormForwardKernel(int mode, int64_t cols, float eps, const float* x, const float* gamma,
                            const float* beta, float* y, float* mean_out, float* inv_out) {
  const float* row = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float mean = 0;
  if (mode == 0) {
    float s = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    mean = BlockSum(s) / cols;
  }
  float q = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) q += (row[c] - mean) * (row[c] - mean);
  const float inv = rsqrtf(BlockSum(q) / cols + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float v = (row[c] - mean) * inv;
    if (gamma != nullptr) v *= gamma[c];
    if (beta != nullptr) v += beta[c];
    out[c] = v;
  }
  if (threadIdx.x == 0) {
    if (mean_out != nullptr) mean_out[blockIdx.x] = mean;
    inv_out[blockIdx.x] = inv;
  }
}

// dx of a row: with h = (x - mean) * inv and g = gamma * dy,
// layer: dx = inv * (g - mean(g) - h * mean(g * h)); rms: mean(g) term absent.
__global__ void NormBackwardData(int mode, int64_t cols, const float* x, const float* gamma,
                                 const float* mean, const float* inv, const float* dy,
                                 float* dx) {
  const int64_t off = blockIdx.x * cols;
  const float mu = mode == 0 ? mean[blockIdx.x] : 0.f;
  const float r = inv[blockIdx.x];
  float sg = 0, sgh = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = dy[off + c] * (gamma != nullptr ? gamma[c] : 1.f);
    sg += g;
    sgh += g * (x[off + c] - mu) * r;
  }
  sg = BlockSum(sg) / cols;
  sgh = BlockSum(sgh) / cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = dy[off + c] * (gamma != nullptr ? gamma[c] : 1.f);
    const float h = (x[off + c] - mu) * r;
    dx[off + c] = r * (g - (mode == 0 ? sg : 0.f) - h * sgh);
  }
}

// dgamma[c] = sum_r dy * h, dbeta[c] = sum_r dy: one thread per column,
// rows in order (deterministic, coalesced across threads).
__global__ void NormBackwardParams(int mode, int64_t rows, int64_t cols, const float* x,
                                   const float* mean, const float* inv, const float* dy,
                                   float* dgamma, float* dbeta) {
  for (int64_t c = blockIdx.x * blockDim.x + threadIdx.x; c < cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sg = 0, sb = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float h = (x[r * cols + c] - (mode == 0 ? mean[r] : 0.f)) * inv[r];
      sg += dy[r * cols + c] * h;
      sb += dy[r * cols + c];
    }
    if (dgamma != nullptr) dgamma[c] = sg;
    if (dbeta != nullptr) dbeta[c] = sb;
  }
}

// -------------------------------------------------------------- adam --

struct AdamArgs {
  float lr, beta1, beta2, eps, weight_decay, scale, correction1, correction2;
};

__device__ __forceinline__ void AdamStep(const AdamArgs& a, float g, float& p, float& m,
                                         float& v) {
  g *= a.scale;
  m = a.beta1 * m + (1 - a.beta1) * g;
  v = a.beta2 * v + (1 - a.beta2) * g * g;
  const float update = (m / a.correction1) / (sqrtf(v / a.correction2) + a.eps);
  p -= a.lr * (update + a.weight_decay * p);
}

// 16-byte vectors over the first n / 4 * 4 elements; a scalar tail.
__global__ void AdamKernel(AdamArgs a, int64_t n, float* param, float* m, float* v,
                           const float* grad, bool vector) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t first_scalar = 0;
  if (vector) {
    const int64_t nv = n / 4;
    for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += stride) {
      float4 p4 = reinterpret_cast<float4*>(param)[i];
      float4 m4 = reinterpret_cast<float4*>(m)[i];
      float4 v4 = reinterpret_cast<float4*>(v)[i];
      const float4 g4 = reinterpret_cast<const float4*>(grad)[i];
      AdamStep(a, g4.x, p4.x, m4.x, v4.x);
      AdamStep(a, g4.y, p4.y, m4.y, v4.y);
      AdamStep(a, g4.z, p4.z, m4.z, v4.z);
      AdamStep(a, g4.w, p4.w, m4.w, v4.w);
      reinterpret_cast<float4*>(param)[i] = p4;
      reinterpret_cast<float4*>(m)[i] = m4;
      reinterpret_cast<float4*>(v)[i] = v4;
    }
    first_scalar = nv * 4;
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
__global__ void RotaryTableKernel(bool grad, int64_t total_pairs, int64_t seq, int64_t dim,
                                  int64_t row0, const float* cs, const float* sn, const float* x,
                                  float* y) {
  const int64_t half = dim / 2;
  for (int64_t t = blockIdx.x * blockDim.x + threadIdx.x; t < total_pairs;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t % half;
    const int64_t row = t / half;  // (b, s) flattened
    const float* c = cs + (row0 + row % seq) * dim;
    const float* s = sn + (row0 + row % seq) * dim;
    const float lo = x[row * dim + i], hi = x[row * dim + i + half];
    if (!grad) {
      y[row * dim + i] = lo * c[i] - hi * s[i];
      y[row * dim + i + half] = hi * c[i + half] + lo * s[i + half];
    } else {
      y[row * dim + i] = lo * c[i] + hi * s[i + half];
      y[row * dim + i + half] = hi * c[i + half] - lo * s[i];
    }
  }
}

// --------------------------------------------------------- attention --

// Causal: query row i sees keys j <= i + shift.
__device__ __forceinline__ bool Masked(bool causal, int64_t i, int64_t j, int64_t shift) {
  return causal && j > i + shift;
}

__device__ __forceinline__ float Dot(const float* a, const float* b, int64_t d) {
  float s = 0;
  for (int64_t e = 0; e < d; ++e) s += a[e] * b[e];
  return s;
}

// One thread per (batch-head, query row); online softmax over keys.
__global__ void AttentionForward(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                 float scale, bool causal, int64_t shift, const float* q, const float* k,
                                 const float* v, float* out, float* lse) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= bh * sq) return;
  const int64_t b = t / sq, i = t % sq;
  const float* qi = q + t * d;
  float acc[kMaxHead];
  for (int64_t e = 0; e < dv; ++e) acc[e] = 0;
  float m = -INFINITY, l = 0;
  for (int64_t j = 0; j < sk; ++j) {
    if (Masked(causal, i, j, shift)) break;
    const float s = scale * Dot(qi, k + (b * sk + j) * d, d);
    const float m2 = fmaxf(m, s);
    const float c = expf(m - m2), p = expf(s - m2);
    l = l * c + p;
    const float* vj = v + (b * sk + j) * dv;
    for (int64_t e = 0; e < dv; ++e) acc[e] = acc[e] * c + p * vj[e];
    m = m2;
  }
  for (int64_t e = 0; e < dv; ++e) out[t * dv + e] = l > 0 ? acc[e] / l : 0.f;
  lse[t] = l > 0 ? m + logf(l) : -INFINITY;
}

// delta_i = dout_i . out_i.
__global__ void AttentionDelta(int64_t rows, int64_t dv, const float* out, const float* dout,
                               float* delta) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t < rows) delta[t] = Dot(out + t * dv, dout + t * dv, dv);
}

// dq_i = scale * sum_j p_ij (dout_i . v_j - delta_i) k_j; thread per query.
__global__ void AttentionBackwardQ(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                   float scale, bool causal, int64_t shift, const float* q, const float* k,
                                   const float* v, const float* dout, const float* lse,
                                   const float* delta, float* dq) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= bh * sq) return;
  const int64_t b = t / sq, i = t % sq;
  float acc[kMaxHead];
  for (int64_t e = 0; e < d; ++e) acc[e] = 0;
  for (int64_t j = 0; j < sk; ++j) {
    if (Masked(causal, i, j, shift)) break;
    const float* kj = k + (b * sk + j) * d;
    const float p = expf(scale * Dot(q + t * d, kj, d) - lse[t]);
    const float ds = p * (Dot(dout + t * dv, v + (b * sk + j) * dv, dv) - delta[t]);
    for (int64_t e = 0; e < d; ++e) acc[e] += ds * kj[e];
  }
  for (int64_t e = 0; e < d; ++e) dq[t * d + e] = scale * acc[e];
}

// dk_j = scale * sum_i ds_ij q_i, dv_j = sum_i p_ij dout_i; thread per key.
__global__ void AttentionBackwardKV(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                    float scale, bool causal, int64_t shift, const float* q, const float* k,
                                    const float* v, const float* dout, const float* lse,
                                    const float* delta, float* dk, float* dvv) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= bh * sk) return;
  const int64_t b = t / sk, j = t % sk;
  float ak[kMaxHead], av[kMaxHead];
  for (int64_t e = 0; e < d; ++e) ak[e] = 0;
  for (int64_t e = 0; e < dv; ++e) av[e] = 0;
  for (int64_t i = 0; i < sq; ++i) {
    if (Masked(causal, i, j, shift)) continue;
    const int64_t row = b * sq + i;
    const float* qi = q + row * d;
    const float* gi = dout + row * dv;
    const float p = expf(scale * Dot(qi, k + t * d, d) - lse[row]);
    const float ds = p * (Dot(gi, v + t * dv, dv) - delta[row]);
    for (int64_t e = 0; e < d; ++e) ak[e] += ds * qi[e];
    for (int64_t e = 0; e < dv; ++e) av[e] += p * gi[e];
  }
  for (int64_t e = 0; e < d; ++e) dk[t * d + e] = scale * ak[e];
  for (int64_t e = 0; e < dv; ++e) dvv[t * dv + e] = av[e];
}

unsigned Blocks(int64_t n) { return GridFor(n, kThreads); }

}  // namespace

std::string NormForward(bool rms, int64_t rows, int64_t cols, double eps, const float* x,
                        const float* gamma, const float* beta, float* y, float* mean,
                        float* inv_std) {
  if (rows == 0 || cols == 0) return "";
  NormForwardKernel<<<static_cast<unsigned>(rows), kThreads, 0, Stream()>>>(
      rms ? 1 : 0, cols, static_cast<float>(eps), x, gamma, rms ? nullptr : beta, y,
      rms ? nullptr : mean, inv_std);
  return LaunchError("norm_forward");
}

std::string NormBackward(bool rms, int64_t rows, int64_t cols, const float* x,
                         const float* gamma, const float* mean, const float* inv_std,
                         const float* dy, float* dx, float* dgamma, float* dbeta) {
  if (rows == 0 || cols == 0) return "";
  const int mode = rms ? 1 : 0;
  if (dx != nullptr) {
    NormBackwardData<<<static_cast<unsigned>(rows), kThreads, 0, Stream()>>>(
        mode, cols, x, gamma, mean, inv_std, dy, dx);
  }
  if (dgamma != nullptr || dbeta != nullptr) {
    NormBackwardParams<<<Blocks(cols), kThreads, 0, Stream()>>>(mode, rows, cols, x, mean,
                                                                inv_std, dy, dgamma, dbeta);
  }
  return LaunchError("norm_backward");
}

std::string AdamUpdate(int64_t n, int64_t step, double lr, double beta1, double beta2,
                       double eps, double weight_decay, float* param, float* m, float* v,
                       const float* grad) {
  if (step < 1) return "adam_update: step " + std::to_string(step) + " is below 1";
  return AdamUpdateCorrected(n, lr, beta1, beta2, eps, weight_decay, /*scale=*/1.0,
                             1 - std::pow(beta1, static_cast<double>(step)),
                             1 - std::pow(beta2, static_cast<double>(step)), param, m, v, grad);
}

std::string AdamUpdateCorrected(int64_t n, double lr, double beta1, double beta2, double eps,
                                double weight_decay, double scale, double correction1,
                                double correction2, float* param, float* m, float* v,
                                const float* grad) {
  if (n == 0) return "";
  AdamArgs a{static_cast<float>(lr),          static_cast<float>(beta1),
             static_cast<float>(beta2),       static_cast<float>(eps),
             static_cast<float>(weight_decay), static_cast<float>(scale),
             static_cast<float>(correction1), static_cast<float>(correction2)};
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vector = aligned(param) && aligned(m) && aligned(v) && aligned(grad);
  AdamKernel<<<Blocks(vector ? n / 4 + 1 : n), kThreads, 0, Stream()>>>(a, n, param, m, v, grad,
                                                                        vector);
  return LaunchError("adam_update");
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

std::string RotaryTable(bool grad, int64_t bh, int64_t seq, int64_t dim, int64_t row0,
                        const float* cos, const float* sin, const float* x, float* y) {
  const char* name = grad ? "rotary_embedding_grad" : "rotary_embedding";
  if (dim % 2 != 0) return std::string(name) + ": head dim " + std::to_string(dim) + " is odd";
  const int64_t pairs = bh * seq * (dim / 2);
  if (pairs == 0) return "";
  RotaryTableKernel<<<Blocks(pairs), kThreads, 0, Stream()>>>(grad, pairs, seq, dim, row0, cos,
                                                              sin, x, y);
  return LaunchError(name);
}

std::string Attention(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv, double scale,
                      bool causal, const float* q, const float* k, const float* v, float* out,
                      float* lse, int64_t shift) {
  if (shift == kShiftSkMinusSq) shift = sk - sq;
  if (d > kMaxHead || dv > kMaxHead) {
    return "scaled_dot_product_attention: head dims " + std::to_string(d) + ", " +
           std::to_string(dv) + " above " + std::to_string(kMaxHead);
  }
  if (bh * sq == 0) return "";
  AttentionForward<<<Blocks(bh * sq), kThreads, 0, Stream()>>>(
      bh, sq, sk, d, dv, static_cast<float>(scale), causal, shift, q, k, v, out, lse);
  return LaunchError("scaled_dot_product_attention");
}

std::string AttentionGrad(int64_t bh, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                          double scale, bool causal, const float* q, const float* k,
                          const float* v, const float* out, const float* lse, const float* dout,
                          float* dq, float* dk, float* dvv, int64_t shift) {
  if (d > kMaxHead || dv > kMaxHead) return "scaled_dot_product_attention_grad: head dim";
  if (shift == kShiftSkMinusSq) shift = sk - sq;
  if (bh == 0) return "";
  void* delta = nullptr;
  std::string e = ::oneflow_sbp::cuda::Malloc(&delta, std::max<int64_t>(bh * sq, 1) * 4);
  if (!e.empty()) return "scaled_dot_product_attention_grad: " + e;
  float* dl = static_cast<float*>(delta);
  const float s = static_cast<float>(scale);
  AttentionDelta<<<Blocks(bh * sq), kThreads, 0, Stream()>>>(bh * sq, dv, out, dout, dl);
  AttentionBackwardQ<<<Blocks(bh * sq), kThreads, 0, Stream()>>>(bh, sq, sk, d, dv, s, causal,
                                                                 shift, q, k, v, dout, lse, dl, dq);
  AttentionBackwardKV<<<Blocks(bh * sk), kThreads, 0, Stream()>>>(bh, sq, sk, d, dv, s, causal,
                                                                  shift, q, k, v, dout, lse, dl, dk,
                                                                  dvv);
  e = LaunchError("scaled_dot_product_attention_grad");
  if (e.empty()) e = ::oneflow_sbp::cuda::Synchronize();
  ::oneflow_sbp::cuda::Free(delta);
  return e;
}

}  // namespace oneflow_sbp::kernels::cuda
