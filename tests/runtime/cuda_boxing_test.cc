// Collectives and boxing on DEVICE memory (GPU only):
//   * the in-process world on one GPU: N rank threads sharing the device,
//     every message a device-to-device copy (InProcessOptions::OnDevice):
//     the shared communicator scenarios over device buffers, mesh
//     sub-groups, boxing round trips for every ordered layout pair of
//     {S(0), S(1), B, P} on [2], [2,2] and [2,3] (bit-exact against the
//     host tensor, measured bytes == the plan's), and a failing rank;
//   * the same round trips over NcclCommunicator, one rank per GPU, on the
//     meshes that fit the machine's GPUs (>= 2).
// Without a device every test skips and main() prints "SKIPPED: no CUDA
// device"; a skip is not a pass (docs/GPU.md).
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "comm/inprocess_world.h"
#include "comm/nccl_communicator.h"
#include "tests/runtime/boxing_round_trip.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/runtime/nccl_test_ranks.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::comm {
namespace {

using ::testing::HasSubstr;

bool HasDevice() { return cuda::DeviceCount() > 0; }

// The scenarios' buffers are cuda memory while one lives.
class ScopedCudaScenarioBuffers {
 public:
  ScopedCudaScenarioBuffers() { testing::SetScenarioBufferOps(*GetDeviceOps(DeviceType::kCuda)); }
  ~ScopedCudaScenarioBuffers() { testing::SetScenarioBufferOps(nullptr); }
};

InProcessOptions OneGpu(absl::Duration timeout = absl::Seconds(60)) {
  InProcessOptions o = InProcessOptions::OnDevice(DeviceType::kCuda);
  o.default_timeout = timeout;
  return o;
}

void ExpectAllOk(const absl::StatusOr<std::vector<absl::Status>>& results) {
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t r = 0; r < results->size(); ++r) {
    EXPECT_TRUE((*results)[r].ok()) << "rank " << r << ": " << (*results)[r];
  }
}

TEST(CudaInProcessWorld, IsACudaWorld) {
  absl::StatusOr<std::shared_ptr<InProcessWorld>> w = InProcessWorld::Create(2, OneGpu());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->device(), DeviceType::kCuda);
}

class CudaSharedScenarios : public ::testing::TestWithParam<int> {};

TEST_P(CudaSharedScenarios, EveryCollectiveOnDeviceBuffers) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  ScopedCudaScenarioBuffers buffers;
  ExpectAllOk(RunRanks(
      GetParam(), [](Communicator& comm) { return testing::CheckEveryCollective(comm); },
      OneGpu()));
}

INSTANTIATE_TEST_SUITE_P(RankThreadsOnOneGpu, CudaSharedScenarios, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("n", info.param);
                         });

TEST(CudaInProcessWorld, MeshSubGroupsOnDeviceBuffers) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  ScopedCudaScenarioBuffers buffers;
  const std::vector<int64_t> mesh = {2, 3};
  ExpectAllOk(RunRanks(
      6, [&](Communicator& w) { return testing::CheckMeshSubGroups(w, mesh, /*concurrent=*/true); },
      OneGpu()));
}

boxing::testing::RoundTripWorld OneGpuWorld() {
  boxing::testing::RoundTripWorld w;
  w.device = DeviceType::kCuda;
  w.run = [](int n, const std::function<absl::Status(Communicator&)>& fn) {
    return RunRanks(n, fn, OneGpu());
  };
  return w;
}

TEST(CudaBoxingOneGpu, EveryPairOnTwoRanks) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  boxing::testing::EveryPair("cuda:0-1", {Shape{4, 6}, Shape{5, 3}, Shape{1, 3}}, 1,
                             OneGpuWorld());
}

TEST(CudaBoxingOneGpu, EveryPairOn2x2) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  boxing::testing::EveryPair("cuda:0-3 [2,2]", {Shape{8, 6}, Shape{5, 7}, Shape{3, 1}}, 1,
                             OneGpuWorld());
}

TEST(CudaBoxingOneGpu, EveryPairOn2x3) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  boxing::testing::EveryPair("cuda:0-5 [2,3]", {Shape{12, 6}, Shape{7, 5}, Shape{2, 2}}, 1,
                             OneGpuWorld());
}

// A rank that fails before its collectives: the others return promptly
// with kAborted, long before their 60 s timeout.
TEST(CudaInProcessWorld, AFailingRankFailsTheOthersPromptly) {
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device";
  ScopedCudaScenarioBuffers buffers;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<absl::Status>> ran = RunRanks(
      4,
      [](Communicator& comm) -> absl::Status {
        if (comm.rank() == 2) return absl::InternalError("rank 2 gives up");
        return testing::CheckEveryCollective(comm);
      },
      OneGpu());
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  for (int r = 0; r < 4; ++r) EXPECT_FALSE((*ran)[r].ok()) << r;
  EXPECT_THAT((*ran)[0], StatusIs(absl::StatusCode::kAborted)) << (*ran)[0];
  EXPECT_THAT(std::string((*ran)[0].message()), HasSubstr("rank 2 gives up"));
}

// A fresh port per NCCL world so that worlds never meet.
absl::StatusOr<std::vector<absl::Status>> RunNcclRanks(
    int n, const std::function<absl::Status(Communicator&)>& fn) {
  static std::atomic<int> next_port{29720};
  return testing::RunNcclRanks(n, next_port.fetch_add(1), fn);
}

void NcclEveryPair(const std::string& placement, int ranks, const std::vector<Shape>& shapes) {
  const int gpus = cuda::DeviceCount();
  if (gpus < 2) GTEST_SKIP() << "NCCL boxing needs >= 2 GPUs, have " << gpus;
  if (gpus < ranks) GTEST_SKIP() << placement << " needs " << ranks << " GPUs, have " << gpus;
  boxing::testing::RoundTripWorld w;
  w.device = DeviceType::kCuda;
  w.run = RunNcclRanks;
  boxing::testing::EveryPair(placement, shapes, 1, w);
}

TEST(CudaBoxingNccl, EveryPairOnTwoRanks) {
  NcclEveryPair("cuda:0-1", 2, {Shape{4, 6}, Shape{5, 3}});
}

TEST(CudaBoxingNccl, EveryPairOn2x2) { NcclEveryPair("cuda:0-3 [2,2]", 4, {Shape{8, 6}, Shape{5, 7}}); }

TEST(CudaBoxingNccl, EveryPairOn2x3) { NcclEveryPair("cuda:0-5 [2,3]", 6, {Shape{12, 6}, Shape{7, 5}}); }

}  // namespace
}  // namespace oneflow_sbp::comm
