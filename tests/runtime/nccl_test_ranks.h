// NCCL worlds for the GPU tests: one rank per GPU as threads of this
// process (NCCL does not put two ranks of one communicator on one GPU).
#ifndef TESTS_RUNTIME_NCCL_TEST_RANKS_H_
#define TESTS_RUNTIME_NCCL_TEST_RANKS_H_

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/nccl_communicator.h"

namespace oneflow_sbp::comm::testing {

// Runs fn on ranks 0 .. n-1 of a fresh NCCL world (rank r on GPU r,
// rendezvous on localhost:`port`, 30 s call timeout); each rank's status.
// A rank that cannot connect reports that error.
inline std::vector<absl::Status> RunNcclRanks(int n, int port,
                                              const std::function<absl::Status(Communicator&)>& fn) {
  std::vector<absl::Status> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      NcclOptions o;
      o.rank = r;
      o.size = n;
      o.device = r;
      o.master_port = port;
      o.job_secret = "nccl-test-secret";
      o.default_timeout = absl::Seconds(30);
      absl::StatusOr<std::unique_ptr<NcclCommunicator>> world = ConnectNccl(o);
      results[r] = world.ok() ? fn(**world) : world.status();
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace oneflow_sbp::comm::testing

#endif  // TESTS_RUNTIME_NCCL_TEST_RANKS_H_
