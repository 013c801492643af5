// Sparse softmax cross-entropy and its grad on CUDA, in the CPU kernel's
// steps (kernels/cpu/cross_entropy_kernels.cc) so that the class-split
// layout of the _ms op can exchange row statistics between the steps:
// row maxima (RowMax), then row sums of exp(x - max) (RowSumExp), both in
// double in device buffers, which the glue all-reduces over the ranks that
// split the classes; then prob and the loss addend (SparseCrossEntropy).
// Labels arrive checked, as each row's LOCAL column (-1: another rank's
// class), uploaded once per call. A block per row, grid-striding; no
// atomics.
#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// Every kernel grid-strides over the rows (a block a row; the grid is
// capped at GridFor's 65536).
template <typename T>
__global__ void RowMaxKernel(int64_t rows, int64_t n, const T* x, double* mx) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    double m = -INFINITY;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) m = fmax(m, To<double>(row[c]));
    m = BlockMax(m);
    if (threadIdx.x == 0) mx[r] = m;
  }
}

template <typename T>
__global__ void RowSumExpKernel(int64_t rows, int64_t n, const T* x, const double* mx,
                                double* sum) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    const double m = mx[r];
    double s = 0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) s += exp(To<double>(row[c]) - m);
    s = BlockSum(s);
    if (threadIdx.x == 0) sum[r] = s;
  }
}

// prob = exp(x - max) / sum; loss = log(sum) + max - x[label] where the
// row's label is local, 0 elsewhere (the P addend).
template <typename T>
__global__ void XentFinish(int64_t rows, int64_t n, const T* x, const double* mx,
                           const double* sum, const int64_t* column, T* prob, T* loss) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    const double m = mx[r], inv = 1.0 / sum[r];
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
      prob[off + c] = To<T>(exp(To<double>(x[off + c]) - m) * inv);
    }
    if (threadIdx.x == 0) {
      const int64_t l = column[r];
      loss[r] = To<T>(l >= 0 ? log(sum[r]) + m - To<double>(x[off + l]) : 0.0);
    }
  }
}

// dx = (prob - onehot(label)) * dy in the compute type (the CPU's).
template <typename T>
__global__ void XentGrad(int64_t rows, int64_t n, const T* prob, const T* dy,
                         const int64_t* column, T* dx) {
  using C = ComputeT<T>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    const C g = To<C>(dy[r]);
    const int64_t l = column[r];
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
      dx[off + c] = To<T>((To<C>(prob[off + c]) - (c == l ? C(1) : C(0))) * g);
    }
  }
}

// Columns must lie in the row ([0, n) or -1): the glue's contract.
std::string ColumnsInRow(const char* kernel, int64_t rows, int64_t n, const int64_t* column) {
  for (int64_t r = 0; r < rows; ++r) {
    if (column[r] < -1 || column[r] >= n) {
      return std::string(kernel) + ": label column " + std::to_string(column[r]) + " of row " +
             std::to_string(r) + " is outside the " + std::to_string(n) + " local classes";
    }
  }
  return "";
}

}  // namespace

std::string RowMax(int dtype, int64_t rows, int64_t n, const void* x, double* mx) {
  if (rows == 0) return "";
  return DispatchFloating("row_max", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    RowMaxKernel<<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        rows, n, static_cast<const T*>(x), mx);
    return LaunchError("row_max");
  });
}

std::string RowSumExp(int dtype, int64_t rows, int64_t n, const void* x, const double* mx,
                      double* sum) {
  if (rows == 0) return "";
  return DispatchFloating("row_sum_exp", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    RowSumExpKernel<<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        rows, n, static_cast<const T*>(x), mx, sum);
    return LaunchError("row_sum_exp");
  });
}

// Checks each row's label column and copies the columns to the device.
std::string UploadColumns(const char* name, int64_t rows, int64_t n, const int64_t* column,
                          Upload* up) {
  std::string e = ColumnsInRow(name, rows, n, column);
  if (e.empty()) e = up->Allocate(rows * 8);
  if (e.empty()) e = up->Put(0, column, rows * 8);
  return e;
}

std::string SparseCrossEntropy(int dtype, int64_t rows, int64_t n, const void* x,
                               const double* mx, const double* sum, const int64_t* column,
                               void* prob, void* loss) {
  const char* name = "sparse_softmax_cross_entropy";
  if (rows == 0) return "";
  Upload up;
  std::string e = UploadColumns(name, rows, n, column, &up);
  if (!e.empty()) return std::string(name) + ": " + e;
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    XentFinish<<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        rows, n, static_cast<const T*>(x), mx, sum, up.at<int64_t>(0), static_cast<T*>(prob),
        static_cast<T*>(loss));
    return LaunchError(name);
  });
}

std::string SparseCrossEntropyGrad(int dtype, int64_t rows, int64_t n, const int64_t* column,
                                   const void* prob, const void* dy, void* dx) {
  const char* name = "sparse_softmax_cross_entropy_grad";
  if (rows == 0 || n == 0) return "";
  Upload up;
  std::string e = UploadColumns(name, rows, n, column, &up);
  if (!e.empty()) return std::string(name) + ": " + e;
  return DispatchFloating(name, dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    XentGrad<<<GridFor(rows, 1), kThreads, 0, Stream()>>>(
        rows, n, static_cast<const T*>(prob), static_cast<const T*>(dy), up.at<int64_t>(0),
        static_cast<T*>(dx));
    return LaunchError(name);
  });
}

}  // namespace oneflow_sbp::kernels::cuda
