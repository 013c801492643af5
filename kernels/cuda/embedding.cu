// Embedding (a gather of table rows) and its grad on CUDA. The ids arrive
// already checked and turned into LOCAL table rows on the host
// (kernels/common/index_args.h: the glue copies the ids once to check
// them against the logical vocab, as the CPU kernel does), so one upload of
// int64 rows serves i32 and i64 ids, vocab-parallel shards (a row outside
// the rank's slice is -1) and padding_idx alike. The grad is deterministic:
// a host counting sort, then one block per table row summing its positions
// in index order in double, with no FMA contraction, i.e. the CPU kernel's
// arithmetic in the CPU kernel's order.
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_launch.h"

namespace oneflow_sbp::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// out[o, j, :] = in[o, rows[j], :] for in [outer, mid, row] and out
// [outer, n, row], or zeros where rows[j] < 0; U is an unsigned unit of the
// row (bytes are copied: every dtype), as wide as the row and pointers
// allow (up to 16 bytes).
template <typename U>
__global__ void GatherRows(int64_t outer, int64_t mid, int64_t n, int64_t row,
                           const int64_t* rows, const U* in, U* out) {
  const int64_t total = outer * n * row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = i % row, j = (i / row) % n, o = i / (row * n);
    const int64_t r = rows[j];
    out[i] = r >= 0 ? in[(o * mid + r) * row + k] : U{};
  }
}

// A block per local table row v (grid-stride over the rows: the grid is
// capped, a vocab may exceed it): dtable[v, d] = sum over its positions p
// (CSR, in index order) of dout[p, d] * scale[p] (scale null: 1).
template <typename T>
__global__ void ScatterRows(int64_t vocab_rows, int64_t dim, const int64_t* row_start,
                            const int64_t* positions, const double* scale, const T* dout,
                            T* dtable) {
  for (int64_t v = blockIdx.x; v < vocab_rows; v += gridDim.x) {
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
      double s = 0;
      for (int64_t q = row_start[v]; q < row_start[v + 1]; ++q) {
        const int64_t p = positions[q];
        const double g = To<double>(dout[p * dim + d]);
        // _rn: no fused multiply-add, so the sum rounds as the CPU's does.
        s = __dadd_rn(s, scale != nullptr ? __dmul_rn(g, scale[p]) : g);
      }
      dtable[v * dim + d] = To<T>(s);
    }
  }
}

// Local rows at or above the table's are refused (the glue never passes
// them; a bad one would read out of bounds).
std::string RowsInTable(const char* kernel, int64_t n, const int64_t* rows, int64_t table_rows) {
  for (int64_t i = 0; i < n; ++i) {
    if (rows[i] >= table_rows) {
      return std::string(kernel) + ": row " + std::to_string(rows[i]) + " at position " +
             std::to_string(i) + " is outside the " + std::to_string(table_rows) + " local rows";
    }
  }
  return "";
}

}  // namespace

std::string Gather(int elem_bytes, int64_t outer, int64_t mid, int64_t inner, int64_t n,
                   const int64_t* rows, const void* in, void* out, const char* kernel) {
  if (outer == 0 || n == 0 || inner == 0) return "";
  std::string e = RowsInTable(kernel, n, rows, mid);
  if (!e.empty()) return e;
  Upload up;
  e = up.Allocate(n * 8);
  if (e.empty()) e = up.Put(0, rows, n * 8);
  if (!e.empty()) return std::string(kernel) + ": " + e;
  // The widest unit dividing the row's bytes and both pointers' alignment.
  const int64_t row_bytes = inner * elem_bytes;
  const uintptr_t align = reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out);
  int unit = 16;
  while (unit > 1 && (row_bytes % unit != 0 || align % unit != 0)) unit /= 2;
  auto launch = [&](auto tag) -> std::string {
    using U = decltype(tag);
    const int64_t row = row_bytes / static_cast<int64_t>(sizeof(U));
    GatherRows<U><<<GridFor(outer * n * row, kThreads), kThreads, 0, Stream()>>>(
        outer, mid, n, row, up.at<int64_t>(0), static_cast<const U*>(in), static_cast<U*>(out));
    return LaunchError(kernel);
  };
  if (unit == 16) return launch(uint4{});
  return DispatchBytes(kernel, unit, launch);
}

std::string Embedding(int elem_bytes, int64_t table_rows, int64_t dim, int64_t n,
                      const int64_t* rows, const void* table, void* out) {
  return Gather(elem_bytes, 1, table_rows, dim, n, rows, table, out, "embedding");
}

std::string EmbeddingGrad(int dtype, int64_t vocab_rows, int64_t dim, int64_t n,
                          const int64_t* rows, const double* scale, const void* dout,
                          void* dtable) {
  if (vocab_rows == 0 || dim == 0) return "";
  std::string e = RowsInTable("embedding_grad", n, rows, vocab_rows);
  if (!e.empty()) return e;
  // CSR of the positions per local row, in index order (a counting sort);
  // rows < 0 are skipped.
  std::vector<int64_t> start(vocab_rows + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (rows[i] >= 0) ++start[rows[i] + 1];
  }
  for (int64_t v = 0; v < vocab_rows; ++v) start[v + 1] += start[v];
  const int64_t kept = start[vocab_rows];
  std::vector<int64_t> positions(kept);
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    if (rows[i] >= 0) positions[fill[rows[i]]++] = i;
  }
  // [start | positions | scale]
  const int64_t pos_at = (vocab_rows + 1) * 8, scale_at = pos_at + kept * 8;
  Upload up;
  e = up.Allocate(scale_at + (scale != nullptr ? n * 8 : 0));
  if (e.empty()) e = up.Put(0, start.data(), pos_at);
  if (e.empty()) e = up.Put(pos_at, positions.data(), kept * 8);
  if (e.empty() && scale != nullptr) e = up.Put(scale_at, scale, n * 8);
  if (!e.empty()) return "embedding_grad: " + e;
  return DispatchFloating("embedding_grad", dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    const unsigned blocks = static_cast<unsigned>(vocab_rows < 65536 ? vocab_rows : 65536);
    ScatterRows<<<blocks, kThreads, 0, Stream()>>>(
        vocab_rows, dim, up.at<int64_t>(0), up.at<int64_t>(pos_at),
        scale != nullptr ? up.at<double>(scale_at) : nullptr, static_cast<const T*>(dout),
        static_cast<T*>(dtable));
    return LaunchError("embedding_grad");
  });
}

}  // namespace oneflow_sbp::kernels::cuda
