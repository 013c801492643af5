// The in-process world's device seam (comm/buffer_ops.h) on the
// CPU, so CI covers it without a GPU: the shared communicator scenarios
// and boxing round trips on a world whose payload copies, reductions and
// staging go through DeviceOps (the CPU backend, wrapped to count calls
// and inject faults) instead of memcpy; faults; and the clean error for a
// device world without a backend. The same checks on a GPU are in
// cuda_boxing_test.cc.
#include <atomic>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/status_macros.h"
#include "comm/inprocess_world.h"
#include "tests/runtime/boxing_round_trip.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

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
    absl::StatusOr<void*> p = cpu_->Allocate(bytes);
    if (p.ok()) {
      absl::MutexLock lock(&mu_);
      owned_.insert(*p);
    }
    return p;
  }
  void Free(void* data, int64_t bytes) override {
    {
      absl::MutexLock lock(&mu_);
      owned_.erase(data);
    }
    cpu_->Free(data, bytes);
  }
  // With `only_own_memory`, only this backend's allocations are "device"
  // memory, as on a GPU; otherwise every pointer is (the CPU backend).
  bool Holds(const void* p) const override {
    if (!only_own_memory.load()) return true;
    absl::MutexLock lock(&mu_);
    return owned_.count(p) > 0;
  }
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
  std::atomic<bool> only_own_memory{false};

 private:
  DeviceOps* const cpu_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<const void*> owned_ ABSL_GUARDED_BY(mu_);
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

// A device world also takes calls on plain host buffers (the demo's
// counters, a kernel's per-row statistics), as NCCL's backend does: they
// run on the host path and never reach the device backend, while calls on
// device buffers in the same world still go through it.
TEST(DeviceWorld, CallsOnHostBuffersTakeTheHostPath) {
  CountingOps ops;
  ops.only_own_memory = true;
  ExpectAllOk(RunRanks(
      3,
      [&](Communicator& comm) -> absl::Status {
        std::vector<double> sums = {1.0 * comm.rank(), 2.0, 3.0};
        OFS_RETURN_IF_ERROR(comm.AllReduce(sums.data(), sums.data(), 3, DataType::kFloat64));
        if (sums != std::vector<double>{3.0, 6.0, 9.0}) {
          return absl::InternalError(absl::StrCat("host all-reduce gave ", sums[0]));
        }
        std::vector<int64_t> mine = {comm.rank()};
        std::vector<int64_t> all(3, -1);
        const std::vector<int64_t> counts = {1, 1, 1};
        OFS_RETURN_IF_ERROR(comm.AllGatherV(mine.data(), all.data(), counts, DataType::kInt64));
        if (all != std::vector<int64_t>{0, 1, 2}) return absl::InternalError("host all-gather");
        OFS_RETURN_IF_ERROR(comm.Barrier());
        if (ops.copies.load() + ops.adds.load() + ops.allocations.load() != 0) {
          return absl::InternalError("a host-buffer call went through the device backend");
        }
        OFS_RETURN_IF_ERROR(comm.Barrier());
        // Device buffers of the same world still use the backend.
        OFS_ASSIGN_OR_RETURN(void* dev, ops.Allocate(sizeof(float)));
        const float one = 1.0f;
        OFS_RETURN_IF_ERROR(ops.Copy(dev, &one, sizeof(float), CopyDirection::kHostToDevice));
        OFS_RETURN_IF_ERROR(comm.AllReduce(dev, dev, 1, DataType::kFloat32));
        float got = 0;
        OFS_RETURN_IF_ERROR(ops.Copy(&got, dev, sizeof(float), CopyDirection::kDeviceToHost));
        ops.Free(dev, sizeof(float));
        if (got != 3.0f) return absl::InternalError(absl::StrCat("device all-reduce gave ", got));
        return absl::OkStatus();
      },
      Through(&ops)));
  EXPECT_GT(ops.adds.load(), 0);
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
  EXPECT_THAT((*ran)[0], StatusIs(absl::StatusCode::kAborted)) << (*ran)[0];
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
  EXPECT_THAT(ran, StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_THAT(std::string(ran.status().message()), HasSubstr("--config=cuda"));
  EXPECT_THAT(std::string(ran.status().message()), HasSubstr("in-process world"));
  EXPECT_FALSE(ran_fn);
  EXPECT_THAT(InProcessWorld::Create(2, InProcessOptions::OnDevice(DeviceType::kCuda))
                .status()
                ,
            StatusIs(absl::StatusCode::kUnimplemented));
}

}  // namespace
}  // namespace oneflow_sbp::comm
