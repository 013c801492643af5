#include "kernels/verify/random_tensor.h"
#include "oneflow_sbp/values/status_macros.h"

#include <random>
#include <utility>

namespace oneflow_sbp::kernels {
namespace {

template <typename Gen>
absl::StatusOr<LocalTensor> Generate(DataType dtype, const std::vector<int64_t>& dims,
                                     Gen&& gen) {
  OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Empty(dtype, dims));
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, gen());
  return t;
}

}  // namespace

absl::StatusOr<LocalTensor> IntValues(DataType dtype, const std::vector<int64_t>& dims,
                                      uint64_t seed, int lo, int hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(lo, hi);
  return Generate(dtype, dims, [&] { return static_cast<double>(pick(rng)); });
}

absl::StatusOr<LocalTensor> GridValues(DataType dtype, const std::vector<int64_t>& dims,
                                       uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, static_cast<int64_t>((hi - lo) * 8));
  return Generate(dtype, dims, [&] { return lo + static_cast<double>(pick(rng)) / 8; });
}

absl::StatusOr<LocalTensor> BoolValues(const std::vector<int64_t>& dims, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919);
  return Generate(DataType::kBool, dims, [&] { return static_cast<double>(rng() % 2); });
}

absl::StatusOr<LocalTensor> MaskValues(DataType dtype, const std::vector<int64_t>& dims,
                                       uint64_t seed) {
  OFS_ASSIGN_OR_RETURN(LocalTensor t, IntValues(dtype, dims, seed, 0, 1));
  std::mt19937_64 rng(seed * 104729);
  const int64_t n = dims.back();
  for (int64_t row = 0; n > 0 && row < t.elem_cnt() / n; ++row) {
    int64_t kept = 0;
    for (int64_t j = 0; j < n; ++j) kept += t.GetDouble(row * n + j) != 0;
    const int64_t at = row * n + static_cast<int64_t>(rng() % n);
    if (kept == 0) t.SetDouble(at, 1);
    if (kept == n && n > 1) t.SetDouble(at, 0);
  }
  return t;
}

}  // namespace oneflow_sbp::kernels
