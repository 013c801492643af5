// The NCCL backend (GPU only). Without a GPU, connecting is a clean
// kFailedPrecondition and the device tests are skipped; main() prints
// "SKIPPED: no CUDA device" (a skip is not a pass; docs/GPU.md).
#include <functional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "comm/nccl_communicator.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/runtime/nccl_test_ranks.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::comm {
namespace {

bool HasDevice() { return cuda::DeviceCount() > 0; }

TEST(NcclCommunicatorTest, BadOptionsAreInvalidArgument) {
  NcclOptions o;
  o.rank = 2;
  o.size = 2;
  o.master_port = 29611;
  EXPECT_THAT(ConnectNccl(o), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(NcclCommunicatorTest, NoDeviceIsFailedPrecondition) {
  if (HasDevice()) GTEST_SKIP() << "a CUDA device is present";
  NcclOptions o;
  o.master_port = 29612;
  EXPECT_THAT(ConnectNccl(o), StatusIs(absl::StatusCode::kFailedPrecondition));
}

// One rank per visible GPU.
std::vector<absl::Status> RunOnEveryGpu(int port,
                                        const std::function<absl::Status(Communicator&)>& fn) {
  return testing::RunNcclRanks(cuda::DeviceCount(), port, fn);
}

TEST(NcclCommunicatorTest, CollectivesOnDeviceBuffers) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  const int n = cuda::DeviceCount();
  std::vector<absl::Status> results = RunOnEveryGpu(29613, [n](Communicator& world) {
    const int r = world.rank();
    // AllReduce of (rank + 1) over n elements: n (n + 1) / 2 everywhere.
    LocalTensor x = *LocalTensor::Full(DataType::kFloat32, {n}, r + 1);
    LocalTensor d = *x.CopyTo(DeviceType::kCuda);
    absl::Status s = world.AllReduce(d.raw_data(), d.raw_data(), n, DataType::kFloat32);
    if (s.ok() && d.CopyTo(DeviceType::kCpu)->ToDoubles() !=
                      std::vector<double>(n, n * (n + 1) / 2.0)) {
      s = absl::InternalError("AllReduce value");
    }
    // Uneven all-gather: member j contributes j + 1 elements of value j.
    std::vector<int64_t> counts;
    int64_t total = 0;
    for (int j = 0; j < n; ++j) counts.push_back(j + 1), total += j + 1;
    LocalTensor mine =
        *LocalTensor::Full(DataType::kFloat32, {r + 1}, r)->CopyTo(DeviceType::kCuda);
    // Poisoned (-1), so a segment left unwritten shows.
    LocalTensor all =
        *LocalTensor::Full(DataType::kFloat32, {total}, -1)->CopyTo(DeviceType::kCuda);
    if (s.ok()) s = world.AllGatherV(mine.raw_data(), all.raw_data(), counts, DataType::kFloat32);
    std::vector<double> want;
    for (int j = 0; j < n; ++j) want.insert(want.end(), j + 1, j);
    if (s.ok() && all.CopyTo(DeviceType::kCpu)->ToDoubles() != want) {
      s = absl::InternalError("AllGatherV value");
    }
    if (s.ok()) s = world.Barrier();
    if (s.ok() && world.total_traffic().bytes_sent == 0 && n > 1) {
      s = absl::InternalError("no traffic counted");
    }
    if (s.ok()) {
      absl::StatusOr<std::shared_ptr<Communicator>> self = world.ForMeshAxes({n}, 0);
      s = self.ok() ? ((*self)->size() == 1 ? absl::OkStatus()
                                            : absl::InternalError("split size"))
                    : self.status();
    }
    return s;
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(results[r].ok()) << "rank " << r << ": " << results[r];
}

// The shared scenarios of every backend (tests/runtime/comm_scenarios.h) on NCCL:
// values, dtypes, reduce ops, uneven counts, byte counters (host buffers,
// staged through the device), and the mesh sub-groups of a [2, n/2] mesh.
TEST(NcclCommunicatorTest, SharedScenarios) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  const int n = cuda::DeviceCount();
  std::vector<absl::Status> results = RunOnEveryGpu(29614, [n](Communicator& world) {
    absl::Status s = testing::CheckEveryCollective(world);
    if (s.ok() && n % 2 == 0 && n >= 4) {
      const std::vector<int64_t> mesh = {2, n / 2};
      s = testing::CheckMeshSubGroups(world, mesh, /*concurrent=*/false);
    }
    return s;
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(results[r].ok()) << "rank " << r << ": " << results[r];
}

// A group asked for by its members only (as the boxing executor does).
// A rank that never joins a collective: the waiting rank's call ends at its
// timeout with kDeadlineExceeded (the communicator aborts), its next call
// is kAborted at once, and the absent rank's own later call fails instead
// of hanging. Nothing waits past its timeout.
TEST(NcclCommunicatorTest, AnAbsentRankTimesOutAndAborts) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  const int n = cuda::DeviceCount();
  if (n < 2) GTEST_SKIP() << "needs 2 GPUs, have " << n;
  absl::Notification rank0_done;
  std::vector<absl::Status> results = RunOnEveryGpu(29616, [&](Communicator& world) {
    CallOptions quick;
    quick.timeout = absl::Seconds(3);
    LocalTensor d = *LocalTensor::Full(DataType::kFloat32, {16}, 1)->CopyTo(DeviceType::kCuda);
    if (world.rank() != 0) {
      if (!rank0_done.WaitForNotificationWithTimeout(absl::Seconds(60))) {
        return absl::DeadlineExceededError("rank 0 never finished");
      }
      const absl::Time start = absl::Now();
      absl::Status late = world.AllReduce(d.raw_data(), d.raw_data(), 16, DataType::kFloat32,
                                          quick);
      if (late.ok()) return absl::InternalError("a call after the peer aborted succeeded");
      if (absl::Now() - start > absl::Seconds(10)) {
        return absl::InternalError(absl::StrCat("late call took ", absl::FormatDuration(
                                                                       absl::Now() - start)));
      }
      return absl::OkStatus();
    }
    const absl::Time start = absl::Now();
    absl::Status s = world.AllReduce(d.raw_data(), d.raw_data(), 16, DataType::kFloat32, quick);
    const absl::Duration took = absl::Now() - start;
    absl::Status next = world.Barrier();
    rank0_done.Notify();
    if (s.code() != absl::StatusCode::kDeadlineExceeded) {
      return absl::InternalError(absl::StrCat("first call: ", s.ToString()));
    }
    if (took > absl::Seconds(10)) {
      return absl::InternalError(absl::StrCat("timeout took ", absl::FormatDuration(took)));
    }
    if (next.code() != absl::StatusCode::kAborted) {
      return absl::InternalError(absl::StrCat("call after abort: ", next.ToString()));
    }
    return absl::OkStatus();
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(results[r].ok()) << "rank " << r << ": " << results[r];
}

TEST(NcclCommunicatorTest, SubGroupOfSomeMembers) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  const int n = cuda::DeviceCount();
  if (n < 3) GTEST_SKIP() << "needs 3 GPUs, have " << n;
  std::vector<absl::Status> results = RunOnEveryGpu(29615, [](Communicator& world) {
    if (world.rank() == 0) return absl::OkStatus();
    absl::StatusOr<std::shared_ptr<Communicator>> pair = world.SubGroup({2, 1});
    if (!pair.ok()) return pair.status();
    return testing::CheckAllReduce(**pair, 5, DataType::kInt32, ReduceOp::kSum, 3,
                                   /*in_place=*/true);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(results[r].ok()) << "rank " << r << ": " << results[r];
}

}  // namespace
}  // namespace oneflow_sbp::comm
