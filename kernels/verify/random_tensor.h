// Seeded tensors with values that survive sharding exactly: the kernel
// tests and the soundness verifier (`sbp verify`) both draw from here, so
// a failure a test shows and one the verifier shows start from the same
// values.
//
//   absl::StatusOr<LocalTensor> x = GridValues(DataType::kFloat32, {5, 3}, 7);
//   // multiples of 1/8 in [-2, 2]
//
// Why multiples of 1/8: sums and products of a few of them are exact in
// f32 (and in f16/bf16 for |v| < 8), so the single-rank reference and a
// sharded run that adds partial sums in another order agree to the bit for
// linear ops; only transcendental kernels need the per-dtype tolerance.
// The engine is std::mt19937_64 (its sequence is fixed by the C++
// standard); the uniform distributions are the standard library's, so the
// values are fixed per seed for one standard library (libstdc++ here).
#ifndef KERNELS_VERIFY_RANDOM_TENSOR_H_
#define KERNELS_VERIFY_RANDOM_TENSOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/storage/local_tensor.h"

namespace oneflow_sbp::kernels {

// Integers in [lo, hi] (exact in every numeric dtype).
absl::StatusOr<LocalTensor> IntValues(DataType dtype, const std::vector<int64_t>& dims,
                                      uint64_t seed, int lo = -4, int hi = 4);
// Multiples of 1/8 in [lo, hi].
absl::StatusOr<LocalTensor> GridValues(DataType dtype, const std::vector<int64_t>& dims,
                                       uint64_t seed, double lo = -2, double hi = 2);
// Random bools.
absl::StatusOr<LocalTensor> BoolValues(const std::vector<int64_t>& dims, uint64_t seed);
// A keep mask: 0 or 1 (false or true) in any dtype, each row of the last
// dim with at least one 1 (a row drawn all 0 gets a 1 at a seeded place)
// and, where the row has room, at least one 0, so both kinds of element
// occur in every row. dims must be non-empty with a last extent >= 1.
absl::StatusOr<LocalTensor> MaskValues(DataType dtype, const std::vector<int64_t>& dims,
                                       uint64_t seed);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_VERIFY_RANDOM_TENSOR_H_
