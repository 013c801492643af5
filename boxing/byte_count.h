// Byte counts of boxing plans: saturating arithmetic, so that a plan whose
// sums exceed int64 is detected (and refused) instead of printing negative
// numbers. Every per-step and per-plan byte sum goes through these; a sum
// that reaches kSaturatedBytes means "does not fit", and the planner turns
// such a plan into kOutOfRange (CheckPlanBytes in boxing_plan.h).
#ifndef BOXING_BYTE_COUNT_H_
#define BOXING_BYTE_COUNT_H_

#include <cstdint>
#include <limits>

namespace oneflow_sbp::boxing {

inline constexpr int64_t kSaturatedBytes = std::numeric_limits<int64_t>::max();

// a + b for non-negative byte counts, clamped to kSaturatedBytes.
inline int64_t AddBytes(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return kSaturatedBytes;
  return sum;
}

// count * element_bytes, clamped to kSaturatedBytes.
inline int64_t MulBytes(int64_t count, int64_t element_bytes) {
  int64_t product = 0;
  if (__builtin_mul_overflow(count, element_bytes, &product)) return kSaturatedBytes;
  return product;
}

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_BYTE_COUNT_H_
