// ReadBounded: reads a stream to its end, but never more than a cap, so a
// flag pointed at /dev/zero, /dev/urandom or an endless pipe fails fast
// instead of reading until memory runs out (docs/RELIABILITY.md, "Limits").
#ifndef IO_BOUNDED_READ_H_
#define IO_BOUNDED_READ_H_

#include <cstddef>
#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp::io {

// The most any file flag (--request, --program) may hold: 16 MiB, far
// above any real request or program (a 96-layer GPT program is ~1 MiB).
inline constexpr size_t kMaxFlagFileBytes = size_t{16} << 20;

// All of `f` if it holds at most `max_bytes`; otherwise kResourceExhausted
// naming `what` and the cap, after reading max_bytes + 1 bytes at most.
// kInvalidArgument if reading fails (a directory, say).
absl::StatusOr<std::string> ReadBounded(std::FILE* f, absl::string_view what,
                                        size_t max_bytes = kMaxFlagFileBytes);

}  // namespace oneflow_sbp::io
#endif  // IO_BOUNDED_READ_H_
