// In-process faults and argument checks: a rank that returns an error,
// throws, sleeps past the timeout, aborts, or issues a different call; every
// other rank must fail promptly (well within its timeout) and never hang,
// and a fresh world must work afterwards. Bad arguments are
// kInvalidArgument and leave the communicator usable.
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::comm {
namespace {

using ::testing::HasSubstr;

// Per rank: the status of the collective under test and how long it took.
struct Outcome {
  absl::Status status;
  absl::Duration elapsed;
};

// Runs `fn` on n ranks with a `timeout` default; fn records its own outcome.
std::vector<absl::Status> RunWorld(int n, absl::Duration timeout,
                              const std::function<absl::Status(Communicator&)>& fn) {
  InProcessOptions options;
  options.default_timeout = timeout;
  absl::StatusOr<std::vector<absl::Status>> r = RunRanks(n, fn, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<absl::Status>(n, absl::UnknownError("RunRanks failed"));
}

// A 4 KiB all-reduce whose outcome is recorded per rank.
absl::Status TimedAllReduce(Communicator& comm, std::vector<Outcome>& outcomes) {
  std::vector<float> x(1024, 1.0f);
  const absl::Time start = absl::Now();
  absl::Status s = comm.AllReduce(x.data(), x.data(), x.size(), DataType::kFloat32);
  outcomes[comm.rank()] = {s, absl::Now() - start};
  return s;
}

void ExpectFreshWorldWorks() {
  std::vector<absl::Status> r =
      RunWorld(4, absl::Seconds(20), [](Communicator& c) { return testing::CheckEveryCollective(c); });
  for (const absl::Status& s : r) EXPECT_TRUE(s.ok()) << s;
}

TEST(CommFaults, RankReturnsErrorOthersAbortPromptly) {
  std::vector<Outcome> out(4);
  std::vector<absl::Status> r = RunWorld(4, absl::Seconds(5), [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 2) return absl::FailedPreconditionError("rank 2 gave up");
    return TimedAllReduce(comm, out);
  });
  EXPECT_THAT(r[2], StatusIs(absl::StatusCode::kFailedPrecondition));
  for (int k : {0, 1, 3}) {
    EXPECT_THAT(out[k].status, StatusIs(absl::StatusCode::kAborted)) << out[k].status;
    EXPECT_THAT(out[k].status.message(), HasSubstr("rank 2 gave up"));
    EXPECT_THAT(out[k].status.message(), HasSubstr("AllReduce on rank"));
    EXPECT_LT(out[k].elapsed, absl::Seconds(1)) << "rank " << k;
  }
  ExpectFreshWorldWorks();
}

TEST(CommFaults, RankThrowsOthersAbortPromptly) {
  std::vector<Outcome> out(3);
  std::vector<absl::Status> r = RunWorld(3, absl::Seconds(5), [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 1) {
      // Let the others enter the collective first.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      throw std::runtime_error("kernel exploded");
    }
    return TimedAllReduce(comm, out);
  });
  EXPECT_THAT(r[1], StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(r[1].message(), HasSubstr("rank 1 threw: kernel exploded"));
  for (int k : {0, 2}) {
    EXPECT_THAT(out[k].status, StatusIs(absl::StatusCode::kAborted)) << out[k].status;
    EXPECT_THAT(out[k].status.message(), HasSubstr("kernel exploded"));
    EXPECT_LT(out[k].elapsed, absl::Seconds(1));
  }
  ExpectFreshWorldWorks();
}

TEST(CommFaults, RankSleepsPastTheTimeout) {
  std::vector<Outcome> out(4);
  const absl::Time start = absl::Now();
  std::vector<absl::Status> r = RunWorld(4, absl::Seconds(1), [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 3) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return TimedAllReduce(comm, out);
  });
  // The first rank to time out aborts the world; the others see kAborted
  // or their own timeout, all about one timeout after they started.
  for (int k : {0, 1, 2}) {
    EXPECT_TRUE(out[k].status.code() == absl::StatusCode::kDeadlineExceeded ||
                out[k].status.code() == absl::StatusCode::kAborted)
        << out[k].status;
    EXPECT_LT(out[k].elapsed, absl::Milliseconds(1800)) << "rank " << k;
  }
  // The sleeper finds the world aborted as soon as it calls.
  EXPECT_THAT(out[3].status, StatusIs(absl::StatusCode::kAborted)) << out[3].status;
  EXPECT_LT(out[3].elapsed, absl::Milliseconds(100));
  EXPECT_THAT(out[3].status.message(), HasSubstr("deadline passed waiting for"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  ExpectFreshWorldWorks();
}

TEST(CommFaults, ShortTimeoutOnOneRankAbortsTheOthers) {
  std::vector<Outcome> out(4);
  RunWorld(4, absl::Seconds(5), [&](Communicator& comm) -> absl::Status {
    std::vector<float> x(64, 1.0f);
    CallOptions options;
    if (comm.rank() == 1) {
      options.timeout = absl::Milliseconds(50);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const absl::Time start = absl::Now();
    absl::Status s = comm.AllReduce(x.data(), x.data(), x.size(), DataType::kFloat32, options);
    out[comm.rank()] = {s, absl::Now() - start};
    return s;
  });
  EXPECT_THAT(out[1].status, StatusIs(absl::StatusCode::kDeadlineExceeded)) << out[1].status;
  EXPECT_THAT(out[1].status.message(), HasSubstr("AllReduce on rank 1 of 4"));
  EXPECT_THAT(out[1].status.message(), HasSubstr("rank 0"));  // names a peer it waited for
  for (int k : {0, 2, 3}) {
    EXPECT_THAT(out[k].status, StatusIs(absl::StatusCode::kAborted)) << out[k].status;
    EXPECT_LT(out[k].elapsed, absl::Milliseconds(100));
  }
}

TEST(CommFaults, AbortFromOneRankWakesTheWaitingOthers) {
  std::vector<Outcome> out(3);
  RunWorld(3, absl::Seconds(5), [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      comm.Abort(absl::CancelledError("operator pressed stop"));
      return comm.health();
    }
    absl::StatusOr<std::shared_ptr<Communicator>> pair = comm.SubGroup({1, 2});
    if (!pair.ok()) return pair.status();
    // Waits inside a sub-group: the world's abort reaches it too.
    std::vector<int32_t> a(8, 1);
    std::vector<int32_t> b(8);
    const absl::Time start = absl::Now();
    // Ranks 1 and 2 disagree (Send vs Send) so both wait until the abort.
    absl::Status s = (*pair)->Send(a.data(), 8, DataType::kInt32, 1 - (*pair)->rank());
    out[comm.rank()] = {s, absl::Now() - start};
    return s;
  });
  for (int k : {1, 2}) {
    EXPECT_THAT(out[k].status, StatusIs(absl::StatusCode::kAborted)) << out[k].status;
    EXPECT_THAT(out[k].status.message(), HasSubstr("operator pressed stop"));
    EXPECT_THAT(out[k].status.message(), HasSubstr("Send on rank"));
    EXPECT_LT(out[k].elapsed, absl::Seconds(1));
  }
}

TEST(CommFaults, DisagreeingCallsTimeOutWithoutCorruption) {
  // Different counts on one rank: tags differ, nothing is copied, and the
  // call fails at the timeout instead of overrunning a buffer.
  std::vector<Outcome> out(3);
  RunWorld(3, absl::Milliseconds(500), [&](Communicator& comm) -> absl::Status {
    const int64_t count = comm.rank() == 0 ? 10 : 12;
    std::vector<float> x(count, 1.0f);
    std::vector<float> guard(64, 7.0f);  // would be hit by an overrun of x
    const absl::Time start = absl::Now();
    absl::Status s = comm.AllReduce(x.data(), x.data(), count, DataType::kFloat32);
    out[comm.rank()] = {s, absl::Now() - start};
    for (float g : guard) {
      if (g != 7.0f) return absl::InternalError("guard overwritten");
    }
    return s;
  });
  for (int k = 0; k < 3; ++k) {
    EXPECT_FALSE(out[k].status.ok()) << "rank " << k;
    EXPECT_LT(out[k].elapsed, absl::Seconds(2));
  }
  // Different collectives on different ranks fail the same way.
  std::vector<absl::Status> r = RunWorld(2, absl::Milliseconds(300), [](Communicator& comm) {
    if (comm.rank() == 0) return comm.Barrier();
    int32_t v = 0;
    return comm.Broadcast(&v, 1, DataType::kInt32, 1);
  });
  for (const absl::Status& s : r) EXPECT_FALSE(s.ok());
}

TEST(CommFaults, RankThatSkipsACallLeavesOthersTimingOut) {
  std::vector<Outcome> out(3);
  RunWorld(3, absl::Milliseconds(400), [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 2) return absl::OkStatus();  // returns OK without calling
    return TimedAllReduce(comm, out);
  });
  for (int k : {0, 1}) {
    EXPECT_FALSE(out[k].status.ok());
    EXPECT_LT(out[k].elapsed, absl::Seconds(1));
  }
}

TEST(CommArguments, BadArgumentsAreInvalidAndAbortNothing) {
  std::vector<absl::Status> r = RunWorld(3, absl::Seconds(10), [](Communicator& comm) -> absl::Status {
    std::vector<float> a(16);
    std::vector<float> b(16);
    const std::vector<int64_t> two = {1, 1};
    const std::vector<int64_t> neg = {1, -1, 1};
    const std::vector<int64_t> ok3 = {1, 1, 1};
    CallOptions negative;
    negative.timeout = absl::Seconds(-1);
    const std::vector<std::pair<std::string, absl::Status>> cases = {
        {"wrong count size", comm.AllGatherV(a.data(), b.data(), two, DataType::kFloat32)},
        {"negative count", comm.ReduceScatterV(a.data(), b.data(), neg, DataType::kFloat32)},
        {"null send", comm.AllReduce(nullptr, b.data(), 4, DataType::kFloat32)},
        {"null recv ok when empty", comm.AllReduce(nullptr, nullptr, 0, DataType::kFloat32)},
        {"partial overlap", comm.AllReduce(a.data(), a.data() + 1, 4, DataType::kFloat32)},
        {"root", comm.Broadcast(a.data(), 4, DataType::kFloat32, 3)},
        {"self peer", comm.Send(a.data(), 1, DataType::kFloat32, comm.rank())},
        {"peer range", comm.Recv(a.data(), 1, DataType::kFloat32, -1)},
        {"negative timeout", comm.Barrier(negative)},
        {"a2a overlap", comm.AllToAllV(a.data(), ok3, a.data() + 1, ok3, DataType::kFloat32)},
        {"negative count", comm.Send(a.data(), -2, DataType::kFloat32, (comm.rank() + 1) % 3)},
    };
    for (const auto& [what, s] : cases) {
      const bool want_ok = what == "null recv ok when empty";
      if (want_ok != s.ok() || (!s.ok() && s.code() != absl::StatusCode::kInvalidArgument)) {
        return absl::InternalError(absl::StrCat(what, ": ", s.ToString()));
      }
    }
    if (absl::Status s = comm.AllGatherV(a.data(), b.data(), two, DataType::kFloat32);
        s.message().find("AllGatherV on rank") == std::string::npos ||
        s.message().find("counts has 2 entries; the group has 3") == std::string::npos) {
      return absl::InternalError(s.ToString());
    }
    const std::vector<std::vector<int>> bad_groups = {{}, {0, 0, comm.rank()}, {5}, {-1}};
    for (const std::vector<int>& g : bad_groups) {
      if (comm.SubGroup(g).status().code() != absl::StatusCode::kInvalidArgument) {
        return absl::InternalError("bad sub-group accepted");
      }
    }
    const int other = (comm.rank() + 1) % 3;
    if (comm.SubGroup({other}).status().code() != absl::StatusCode::kInvalidArgument ||
        comm.ForMeshAxes({2, 2}, AxisBit(0)).status().code() !=
            absl::StatusCode::kInvalidArgument ||
        comm.ForMeshAxes({3}, AxisBit(1)).status().code() != absl::StatusCode::kInvalidArgument) {
      return absl::InternalError("bad sub-group or mesh accepted");
    }
    // Nothing was aborted and no sequence number was consumed: the group
    // still runs everything.
    if (!comm.health().ok()) return comm.health();
    return testing::CheckEveryCollective(comm);
  });
  for (const absl::Status& s : r) EXPECT_TRUE(s.ok()) << s;
}

TEST(CommArguments, WorldsAndRunRanks) {
  EXPECT_THAT(InProcessWorld::Create(0), StatusIs(absl::StatusCode::kInvalidArgument));
  InProcessOptions zero;
  zero.default_timeout = absl::ZeroDuration();
  EXPECT_THAT(InProcessWorld::Create(2, zero), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(RunRanks(0, [](Communicator&) { return absl::OkStatus(); }).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::shared_ptr<InProcessWorld>> world = InProcessWorld::Create(2);
  ASSERT_TRUE(world.ok());
  EXPECT_TRUE((*world)->Connect(0).ok());
  EXPECT_THAT((*world)->Connect(0), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT((*world)->Connect(2), StatusIs(absl::StatusCode::kInvalidArgument));
  // A world of one needs no peers.
  absl::StatusOr<std::vector<absl::Status>> one =
      RunRanks(1, [](Communicator& c) { return testing::CheckEveryCollective(c); });
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE((*one)[0].ok()) << (*one)[0];
}

}  // namespace
}  // namespace oneflow_sbp::comm
