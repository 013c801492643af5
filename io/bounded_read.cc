#include "io/bounded_read.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::io {

absl::StatusOr<std::string> ReadBounded(std::FILE* f, absl::string_view what,
                                        size_t max_bytes) {
  std::string data;
  char buf[1 << 16];
  while (true) {
    // One byte past the cap tells "exactly at the cap" from "over it".
    const size_t want = std::min(sizeof(buf), max_bytes + 1 - data.size());
    const size_t n = std::fread(buf, 1, want, f);
    data.append(buf, n);
    if (data.size() > max_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, " is larger than ", max_bytes >> 20, " MiB (", max_bytes,
          " bytes); is it the right file?"));
    }
    if (n < want) break;
  }
  if (std::ferror(f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", what, ": ", std::strerror(errno)));
  }
  return data;
}

}  // namespace oneflow_sbp::io