// FuzzInput: reads typed values from a fuzzer's byte string, the same way
// under libFuzzer and under the gcc replay driver (clang's
// FuzzedDataProvider is not on gcc's include path). Reads past the end
// return zeros, so every input decodes to something.
#ifndef FUZZ_FUZZ_INPUT_H_
#define FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace oneflow_sbp::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bool() { return Byte() & 1; }
  // Uniform enough in [lo, hi] (inclusive); lo when out of bytes.
  int64_t Range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    uint64_t v = 0;
    for (uint64_t s = span - 1; s != 0; s >>= 8) v = (v << 8) | Byte();
    return span == 0 ? lo + static_cast<int64_t>(v) : lo + static_cast<int64_t>(v % span);
  }
  // Up to the next '\n' (consumed) or the end.
  absl::string_view Line() {
    const size_t start = pos_;
    while (pos_ < size_ && data_[pos_] != '\n') ++pos_;
    absl::string_view out(reinterpret_cast<const char*>(data_) + start, pos_ - start);
    if (pos_ < size_) ++pos_;
    return out;
  }
  // Everything not yet read.
  absl::string_view Rest() {
    absl::string_view out(reinterpret_cast<const char*>(data_) + pos_, size_ - pos_);
    pos_ = size_;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace oneflow_sbp::fuzz

// Defines the libFuzzer entry point of a target as `fn(FuzzInput&)`.
#define OFS_FUZZ_TARGET(fn)                                             \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    ::oneflow_sbp::fuzz::FuzzInput in(data, size);                      \
    fn(in);                                                             \
    return 0;                                                           \
  }

#endif  // FUZZ_FUZZ_INPUT_H_
