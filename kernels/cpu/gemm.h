// Dense matrix products for the CPU kernels (matmul family, conv2d), and
// views of local tensors in their compute type.
//
// Example (out[m,n] = 2 * a[k,m]^T * b[k,n], all row-major floats):
//   Gemm<float>(/*ta=*/true, /*tb=*/false, m, n, k, 2.0f, a, b,
//               /*accumulate=*/false, out);
//
//   ComputeInput<Eigen::half> x(tensor);    // float copy of a half tensor
//   ComputeOutput<Eigen::half> y(out);      // float scratch ...
//   ... y.data()[i] = ...;
//   y.Finish();                             // ... rounded into `out` once
//
// Gemm is, for float on a CPU with AVX-512 or AVX2+FMA, sgemm_simd.h's
// kernel (chosen at run time), else Eigen's GEMM (blocked, vectorized for the
// build's SSE2, single-threaded) on Eigen::Map views of the raw buffers:
// no copy. f16 and bf16 tensors are
// multiplied in float (converted once on the way in and out), as their
// sums need float accumulators to be useful.
#ifndef KERNELS_CPU_GEMM_H_
#define KERNELS_CPU_GEMM_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "oneflow_sbp/storage/element_type.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "kernels/cpu/sgemm_simd.h"

namespace oneflow_sbp::kernels {

// out[m,n] (=|+=) alpha * op(a) * op(b), row-major and contiguous: a is
// [m,k] ([k,m] when ta), b is [k,n] ([n,k] when tb). `accumulate` adds to
// what `out` holds; otherwise `out` is overwritten (zeros when k == 0).
// C is float or double.
template <typename C>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, C alpha, const C* a, const C* b,
          bool accumulate, C* out) {
  if constexpr (std::is_same_v<C, float>) {
    if (Sgemm(ta, tb, m, n, k, alpha, a, b, accumulate, out)) return;
  }
  using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const Mat>;
  Eigen::Map<Mat> o(out, m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) o.setZero();
    return;
  }
  const ConstMap am(a, ta ? k : m, ta ? m : k);
  const ConstMap bm(b, tb ? n : k, tb ? k : n);
  // Each branch is a separate instantiation so Eigen picks the GEMM
  // kernel for the storage order of every operand.
  auto run = [&](const auto& x, const auto& y) {
    if (accumulate) {
      o.noalias() += alpha * x * y;
    } else {
      o.noalias() = alpha * x * y;
    }
  };
  if (!ta && !tb) run(am, bm);
  if (!ta && tb) run(am, bm.transpose());
  if (ta && !tb) run(am.transpose(), bm);
  if (ta && tb) run(am.transpose(), bm.transpose());
}

// A local tensor's elements as ComputeType<T>: its own buffer when T is
// the compute type, else a converted copy.
template <typename T>
class ComputeInput {
 public:
  using C = ComputeType<T>;
  explicit ComputeInput(const LocalTensor& t) {
    if constexpr (std::is_same_v<T, C>) {
      data_ = t.data<T>();
    } else {
      const T* p = t.data<T>();
      copy_.resize(static_cast<size_t>(t.elem_cnt()));
      for (int64_t i = 0; i < t.elem_cnt(); ++i) copy_[i] = static_cast<C>(p[i]);
      data_ = copy_.data();
    }
  }
  const C* data() const { return data_; }

 private:
  const C* data_ = nullptr;
  std::vector<C> copy_;
};

// Where a kernel writes a local output in ComputeType<T>: the output's
// own buffer, or float scratch that Finish() rounds into the output.
template <typename T>
class ComputeOutput {
 public:
  using C = ComputeType<T>;
  explicit ComputeOutput(LocalTensor& t) : out_(t) {
    if constexpr (std::is_same_v<T, C>) {
      data_ = t.data<T>();
    } else {
      scratch_.resize(static_cast<size_t>(t.elem_cnt()));
      data_ = scratch_.data();
    }
  }
  C* data() { return data_; }
  void Finish() {
    if constexpr (!std::is_same_v<T, C>) {
      T* p = out_.data<T>();
      for (size_t i = 0; i < scratch_.size(); ++i) p[i] = T(scratch_[i]);
    }
  }

 private:
  LocalTensor& out_;
  C* data_ = nullptr;
  std::vector<C> scratch_;
};

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_CPU_GEMM_H_
