// SeededStream: deterministic pseudo-random values per (seed, name), the
// same on every rank and in every process, so that a tensor built from it
// is identical whatever the layout or the number of ranks. This is what
// makes a single-rank run a bit-for-bit reference for a distributed one
// (the demo's weights, the program runner's leaves).
//
// Not a statistical generator: FNV-1a of the name mixed with the seed,
// then xorshift64.
#ifndef ONEFLOW_SBP_VALUES_SEEDED_STREAM_H_
#define ONEFLOW_SBP_VALUES_SEEDED_STREAM_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace oneflow_sbp {

class SeededStream {
 public:
  SeededStream(uint64_t seed, absl::string_view name) : x_(1469598103934665603ull ^ seed) {
    for (char c : name) x_ = (x_ ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    if (x_ == 0) x_ = 1;  // xorshift's one fixed point
  }
  // Uniform in [-1, 1).
  double Next() {
    Advance();
    return static_cast<double>(x_ >> 11) / static_cast<double>(1ull << 53) * 2 - 1;
  }
  // In [0, bound); bound > 0.
  uint64_t NextInt(uint64_t bound) {
    Advance();
    return x_ % bound;
  }

 private:
  void Advance() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
  }
  uint64_t x_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_SEEDED_STREAM_H_
