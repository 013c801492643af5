// How a rank process of tests/runtime/comm_worker_main.cc reports its outcome to the
// test that launched it: one file per rank, <dir>/rank<RANK>, holding
// "<status code> <elapsed ms> <message>", where the elapsed time is that of
// the call (or run) under test.
#ifndef TESTS_RUNTIME_COMM_WORKER_RESULTS_H_
#define TESTS_RUNTIME_COMM_WORKER_RESULTS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace oneflow_sbp::comm::testing {

struct WorkerResult {
  bool present = false;
  int code = -1;
  int64_t elapsed_ms = 0;
  std::string message;
};

// Worker side.
void WriteWorkerResult(const std::string& dir, int rank, const absl::Status& s,
                       absl::Duration elapsed);
// Test side: what rank `rank` wrote (present == false if nothing).
WorkerResult ReadWorkerResult(const std::string& dir, int rank);

// A fresh directory under $TEST_TMPDIR (or /tmp); "" if it cannot be made.
std::string MakeResultDir();

}  // namespace oneflow_sbp::comm::testing

#endif  // TESTS_RUNTIME_COMM_WORKER_RESULTS_H_
