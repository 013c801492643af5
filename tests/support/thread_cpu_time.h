// Time bounds in tests that catch blow-ups, not speed: CPU time of the
// calling thread (a loaded CI machine barely changes it), and whether this
// is a sanitizer build (3-40x slower), whose bounds a test scales by its
// own factor instead of skipping.
//
//   const absl::Duration start = testing::ThreadCpuNow();
//   Work();
//   EXPECT_LT(testing::ThreadCpuNow() - start,
//             absl::Seconds(2) * (testing::kSanitizerBuild ? 10 : 1));
#ifndef TESTS_SUPPORT_THREAD_CPU_TIME_H_
#define TESTS_SUPPORT_THREAD_CPU_TIME_H_

#include <time.h>

#include "absl/time/time.h"

namespace oneflow_sbp::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// CPU time this thread has used so far.
inline absl::Duration ThreadCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

// CPU time of the whole process so far (every thread: for work that
// prices on helper threads).
inline absl::Duration ProcessCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

}  // namespace oneflow_sbp::testing

#endif  // TESTS_SUPPORT_THREAD_CPU_TIME_H_
