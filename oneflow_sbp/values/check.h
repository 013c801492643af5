// OFS_CHECK: abort on a broken internal invariant (never on user input).
//
//   OFS_CHECK(axis < kMaxAxes) << "axis " << axis;
//
// Abseil 20220623 (Debian 12) predates absl/log, so this is our own minimal
// CHECK. User input must be validated into an absl::Status before it can
// reach an OFS_CHECK; tests exercise those paths.
#ifndef ONEFLOW_SBP_VALUES_CHECK_H_
#define ONEFLOW_SBP_VALUES_CHECK_H_

#include <sstream>

namespace oneflow_sbp::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Makes `cond ? (void)0 : CheckFailure(...).stream() << ...` type-check.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace oneflow_sbp::internal

#define OFS_CHECK(cond)                                       \
  (cond) ? (void)0                                            \
         : ::oneflow_sbp::internal::Voidify() &               \
               ::oneflow_sbp::internal::CheckFailure(__FILE__, \
                                                     __LINE__, #cond) \
                   .stream()

#endif  // ONEFLOW_SBP_VALUES_CHECK_H_
