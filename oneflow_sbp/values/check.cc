#include "oneflow_sbp/values/check.h"

#include <cstdio>
#include <cstdlib>

namespace oneflow_sbp::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << file << ":" << line << ": internal invariant failed: " << condition
          << " ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace oneflow_sbp::internal
