// The in-process world's device seam (boxing/comm/buffer_ops.h) on the
// CPU, so CI covers it without a GPU: the shared communicator scenarios
// and boxing round trips on a world whose payload copies, reductions and
// staging go through DeviceOps (the CPU backend, wrapped to count calls
// and inject faults) instead of memcpy; faults; and the clean error for a
// device world without a backend. The same checks on a GPU are in
// cuda_boxing_test.cc.
#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "boxing/comm/inprocess_world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/device_ops.h"
#include "tests/boxing_round_trip.h"
#include "tests/comm_scenarios.h"

namespace oneflow_sbp::comm {
namespace {

using ::testing::HasSubstr;

// The CPU backend, counting calls; Copy fails once `fail_after` copies
// have been made (negative: never).
class CountingOps final : public DeviceOps {
 public:
  CountingOps() : cpu_(*GetDeviceOps(DeviceType::kCpu)) {}

  DeviceType device() const override { return DeviceType::kCpu; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override {
    allocations.fetch_add(1);
    return cpu_->Allocate(bytes);
  }
  void Free(void* data, int64_t bytes) override { cpu_->Free(data, bytes); }
  absl::Status Copy(void* dst, const void* src, int64_t bytes, CopyDirection dir) override {
    const int64_t made = copies.fetch_add(1);
    const int64_t limit = fail_after.load();
    if (limit >= 0 && made >= limit) return absl::InternalError("injected copy failure");
    return cpu_->Copy(dst, src, bytes, dir);
  }
  absl::Status Zero(void* dst, int64_t bytes) override { return cpu_->Zero(dst, bytes); }
  absl::Status CopyBox(DataType dtype, const StridedBox& box, const void* src, void* dst,
                       bool add) override {
    if (add) adds.fetch_add(1);
    return cpu_->CopyBox(dtype, box, src, dst, add);
  }
  absl::Status Synchronize() override {
    syncs.fetch_add(1);
    return cpu_->Synchronize();
  }

  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> copies{0};
  std::atomic<int64_t> adds{0};
  std::atomic<int64_t> syncs{0};
  std::atomic<int64_t> fail_after{-1};

 private:
  DeviceOps* const cpu_;
};

// The scenarios' buffers come from `ops` while one lives.
class ScopedScenarioBuffers {
 public:
  explicit ScopedScenarioBuffers(DeviceOps* ops) { testing::SetScenarioBufferOps(ops); }
  ~ScopedScenarioBuffers() { testing::SetScenarioBufferOps(nullptr); }
};

InProcessOptions Through(DeviceOps* ops, absl::Duration timeout = absl::Seconds(20)) {
  InProcessOptions o;
  o.default_timeout = timeout;
  o.through = ops;
  return o;
}

void ExpectAllOk(const absl::StatusOr<std::vector<absl::Status>>& results) {
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t r = 0; r < results->size(); ++r) {
    EXPECT_TRUE((*results)[r].ok()) << "rank " << r << ": " << (*results)[r];
  }
}

class SeamScenarios : public ::testing::TestWithParam<int> {};

TEST_P(SeamScenarios, EveryCollectiveThroughDeviceOps) {
  CountingOps ops;
  ScopedScenarioBuffers buffers(&ops);
  const int n = GetParam();
  ExpectAllOk(RunRanks(
      n, [](Communicator& comm) { return testing::CheckEveryCollective(comm); }, Through(&ops)));
  // The seam was really used: messages and own chunks are DeviceOps
  // copies, sums are CopyBox adds, and ranks synchronise before posting.
  EXPECT_GT(ops.copies.load(), 0);
  EXPECT_GT(ops.allocations.load(), 0);
  if (n > 1) {
    EXPECT_GT(ops.adds.load(), 0);
    EXPECT_GT(ops.syncs.load(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(GroupSizes, SeamScenarios, ::testing::Values(1, 2, 3, 5),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("n", info.param);
                         });

TEST(DeviceWorld, MeshSubGroupsThroughDeviceOps) {
  CountingOps ops;
  ScopedScenarioBuffers buffers(&ops);
  const std::vector<int64_t> mesh = {2, 3};
  ExpectAllOk(RunRanks(
      6, [&](Communicator& w) { return testing::CheckMeshSubGroups(w, mesh, /*concurrent=*/true); },
      Through(&ops)));
}

TEST(DeviceWorld, ReportsItsDevice) {
  CountingOps ops;
  absl::StatusOr<std::shared_ptr<InProcessWorld>> host = InProcessWorld::Create(2);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ((*host)->device(), DeviceType::kCpu);
  absl::StatusOr<std::shared_ptr<InProcessWorld>> seam = InProcessWorld::Create(2, Through(&ops));
  ASSERT_TRUE(seam.ok());
  EXPECT_EQ((*seam)->device(), DeviceType::kCpu);
}

// Boxing round trips (every ordered layout pair) with every collective's
// payload going through the seam.
boxing::testing::RoundTripWorld SeamWorld(CountingOps* ops) {
  boxing::testing::RoundTripWorld w;
  w.run = [ops](int n, const std::function<absl::Status(Communicator&)>& fn) {
    return RunRanks(n, fn, Through(ops));
  };
  return w;
}

TEST(DeviceWorld, BoxingEveryPairOnTwoRanks) {
  CountingOps ops;
  boxing::testing::EveryPair("cpu:0-1", {Shape{4, 6}, Shape{5, 3}}, 1, SeamWorld(&ops));
  EXPECT_GT(ops.copies.load(), 0);
}

TEST(DeviceWorld, BoxingEveryPairOn2x2) {
  CountingOps ops;
  boxing::testing::EveryPair("cpu:0-3 [2,2]", {Shape{8, 6}, Shape{5, 7}}, 1, SeamWorld(&ops));
}

TEST(DeviceWorld, BoxingEveryPairOn2x3) {
  CountingOps ops;
  boxing::testing::EveryPair("cpu:0-5 [2,3]", {Shape{12, 6}, Shape{7, 5}}, 1, SeamWorld(&ops));
}

// A rank that fails before its collective: the others fail promptly (by
// the abort, long before their 30 s timeout).
TEST(DeviceWorld, AFailingRankFailsTheOthersPromptly) {
  CountingOps ops;
  ScopedScenarioBuffers buffers(&ops);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<absl::Status>> ran = RunRanks(
      4,
      [](Communicator& comm) -> absl::Status {
        if (comm.rank() == 1) return absl::InternalError("rank 1 gives up");
        return testing::CheckEveryCollective(comm);
      },
      Through(&ops, absl::Seconds(30)));
  ASSERT_TRUE(ran.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  for (int r = 0; r < 4; ++r) EXPECT_FALSE((*ran)[r].ok()) << r;
  EXPECT_EQ((*ran)[0].code(), absl::StatusCode::kAborted) << (*ran)[0];
  EXPECT_THAT(std::string((*ran)[0].message()), HasSubstr("rank 1 gives up"));
}

// A failed device copy is an error on every rank, never a hang and never
// an OK exchange with missing bytes.
TEST(DeviceWorld, AFailedCopyFailsEveryRank) {
  CountingOps ops;
  ops.fail_after = 3;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<absl::Status>> ran = RunRanks(
      3,
      [](Communicator& comm) -> absl::Status {
        std::vector<float> x(64, 1.0f);
        for (int i = 0; i < 10; ++i) {
          absl::Status s = comm.AllReduce(x.data(), x.data(), 64, DataType::kFloat32);
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
      },
      Through(&ops, absl::Seconds(30)));
  ASSERT_TRUE(ran.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  bool named = false;
  for (const absl::Status& s : *ran) {
    EXPECT_FALSE(s.ok());
    named = named || absl::StrContains(s.message(), "injected copy failure");
  }
  EXPECT_TRUE(named);
}

// Without a CUDA backend linked (the default build), a cuda world is a
// clean kUnimplemented naming the build option.
TEST(DeviceWorld, CudaWithoutBackendIsUnimplemented) {
  if (GetDeviceOps(DeviceType::kCuda).ok()) GTEST_SKIP() << "a cuda backend is linked";
  bool ran_fn = false;
  absl::StatusOr<std::vector<absl::Status>> ran = RunRanks(
      2,
      [&](Communicator&) {
        ran_fn = true;
        return absl::OkStatus();
      },
      InProcessOptions::OnDevice(DeviceType::kCuda));
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(ran.status().message()), HasSubstr("--config=cuda"));
  EXPECT_THAT(std::string(ran.status().message()), HasSubstr("in-process world"));
  EXPECT_FALSE(ran_fn);
  EXPECT_EQ(InProcessWorld::Create(2, InProcessOptions::OnDevice(DeviceType::kCuda))
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace oneflow_sbp::comm
