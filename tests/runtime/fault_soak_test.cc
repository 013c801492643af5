// Fault soak: a loop of random boxing plans on 4 to 6 ranks, in-process
// (threads) and over Gloo (processes), in which a random rank fails at a
// random point in one run out of 20 (tests/runtime/fault_soak.h). Every rank must
// return an error within the call timeout, the next run must succeed on
// fresh communicators, and no thread, file descriptor or child process may
// be left behind.
//
// Usage (Bazel passes these): fault_soak_test <comm_worker> <in-process runs>
// <Gloo runs>. The CI target runs a short loop; fault_soak_sweep_test (tag
// "sweep") a long one.
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "comm/inprocess_world.h"
#include "comm/launcher.h"
#include "gtest/gtest.h"
#include "tests/runtime/comm_worker_results.h"
#include "tests/runtime/fault_soak.h"

namespace oneflow_sbp::testing {
namespace {

using comm::testing::MakeResultDir;
using comm::testing::ReadWorkerResult;
using comm::testing::WorkerResult;

std::string* g_worker = nullptr;
int g_inprocess_runs = 60;
int g_gloo_runs = 20;

constexpr uint64_t kSeed = 20261123;
// Grace on top of the call timeout for a rank to notice and return.
constexpr absl::Duration kSlack = absl::Seconds(1);

// The fault of run `run`: in every block of 20 runs, one run (never the
// block's first, so a fault is always followed by a clean run) gets a
// fault at a random rank and step.
Fault ScheduleFault(int run, int world_size, int steps, const std::vector<FaultKind>& kinds) {
  std::mt19937_64 rng(kSeed + run / 20);
  const int faulty_run = 1 + static_cast<int>(rng() % 19);
  if (run % 20 != faulty_run) return Fault{};
  std::mt19937_64 pick(kSeed * 31 + run);
  Fault f;
  // Kinds take turns block by block, so a short loop sees each of them.
  f.kind = kinds[(run / 20) % kinds.size()];
  f.rank = static_cast<int>(pick() % world_size);
  f.step = static_cast<int>(pick() % (steps + 1));
  return f;
}

// Process resources that must come back to where they were. Sanitizer
// runtimes start a helper thread with the first thread a process creates
// (ThreadSanitizer's background thread), so one thread is started and
// joined before the first count.
// A joined thread can stay listed in /proc for a moment after join returns,
// so the count is read until two reads 20 ms apart agree.
int WarmThreads() {
  std::thread([] {}).join();
  int last = CountThreads();
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int now = CountThreads();
    if (now == last) break;
    last = now;
  }
  return last;
}

struct Resources {
  int threads = WarmThreads();
  int fds = CountOpenFds();
  int children = CountChildren();
  std::string ToString() const {
    return absl::StrCat(threads, " threads, ", fds, " fds, ", children, " children");
  }
};

struct Tally {
  int runs = 0;
  int faults = 0;
  std::map<std::string, int> by_kind;
  absl::Duration slowest_error;  // longest time a healthy rank took to fail
  void Print(const char* backend, const Resources& before, const Resources& after) const {
    std::string kinds;
    for (const auto& [k, n] : by_kind) absl::StrAppend(&kinds, " ", k, "=", n);
    std::printf("fault soak (%s): %d runs, %d faults (%s), slowest error on a healthy rank %s; "
                "before: %s; after: %s\n",
                backend, runs, faults, kinds.c_str(), absl::FormatDuration(slowest_error).c_str(),
                before.ToString().c_str(), after.ToString().c_str());
  }
};

TEST(FaultSoak, InProcessRanks) {
  const Resources before;
  const absl::Duration timeout = absl::Seconds(2);
  const std::vector<FaultKind> kinds = {FaultKind::kReturnError, FaultKind::kThrow,
                                        FaultKind::kAbort, FaultKind::kSleep};
  Tally tally;
  for (int run = 0; run < g_inprocess_runs; ++run) {
    const SoakCase c = RandomCase(kSeed + run);
    absl::StatusOr<boxing::BoxingPlan> plan = PlanFor(c);
    ASSERT_TRUE(plan.ok()) << c.ToString() << ": " << plan.status();
    const int n = c.world_size();
    const Fault fault = ScheduleFault(run, n, static_cast<int>(plan->steps.size()), kinds);
    auto inject = [&](comm::Communicator& world) -> absl::Status {
      switch (fault.kind) {
        case FaultKind::kThrow:
          throw std::runtime_error(absl::StrCat("rank ", world.rank(), " threw"));
        case FaultKind::kAbort:
          world.Abort(absl::InternalError(absl::StrCat("rank ", world.rank(), " gave up")));
          return world.health();
        case FaultKind::kSleep:
          std::this_thread::sleep_for(absl::ToChronoMilliseconds(timeout + absl::Milliseconds(300)));
          return absl::OkStatus();
        default:
          return absl::FailedPreconditionError(absl::StrCat("rank ", world.rank(), " gave up"));
      }
    };
    std::vector<absl::Duration> elapsed(n, absl::ZeroDuration());
    comm::InProcessOptions options;
    options.default_timeout = timeout;
    absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(
        n,
        [&](comm::Communicator& world) {
          const absl::Time start = absl::Now();
          absl::Status s = RunSoakRank(c, *plan, fault, world, inject);
          elapsed[world.rank()] = absl::Now() - start;
          return s;
        },
        options);
    ASSERT_TRUE(ran.ok()) << ran.status();
    const std::string what = absl::StrCat("run ", run, " (", c.ToString(), ", fault ",
                                          FaultKindName(fault.kind), " on rank ", fault.rank,
                                          " before step ", fault.step, ")");
    ++tally.runs;
    if (fault.kind == FaultKind::kNone) {
      for (int r = 0; r < n; ++r) ASSERT_TRUE((*ran)[r].ok()) << what << ": rank " << r << ": " << (*ran)[r];
      continue;
    }
    ++tally.faults;
    ++tally.by_kind[FaultKindName(fault.kind)];
    for (int r = 0; r < n; ++r) {
      EXPECT_FALSE((*ran)[r].ok()) << what << ": rank " << r << " returned OK";
      if (r == fault.rank) continue;
      EXPECT_LT(elapsed[r], timeout + kSlack) << what << ": rank " << r << ": " << (*ran)[r];
      tally.slowest_error = std::max(tally.slowest_error, elapsed[r]);
    }
  }
  const Resources after;
  tally.Print("in-process", before, after);
  EXPECT_EQ(after.threads, before.threads);
  EXPECT_EQ(after.fds, before.fds);
  EXPECT_EQ(after.children, before.children);
}

TEST(FaultSoak, GlooProcesses) {
  const Resources before;
  const int timeout_ms = 3000;
  // The deaths first: a short loop (40 runs) sees those two.
  const std::vector<FaultKind> kinds = {FaultKind::kCrash, FaultKind::kExit, FaultKind::kAbort,
                                        FaultKind::kReturnError, FaultKind::kSleep};
  Tally tally;
  for (int run = 0; run < g_gloo_runs; ++run) {
    const uint64_t seed = kSeed + 7919 * run;
    const SoakCase c = RandomCase(seed);
    absl::StatusOr<boxing::BoxingPlan> plan = PlanFor(c);
    ASSERT_TRUE(plan.ok()) << c.ToString() << ": " << plan.status();
    const int n = c.world_size();
    const Fault fault = ScheduleFault(run, n, static_cast<int>(plan->steps.size()), kinds);
    const std::string dir = MakeResultDir();
    ASSERT_FALSE(dir.empty());
    comm::LaunchOptions o;
    o.nproc = n;
    o.timeout = absl::Seconds(60);
    // Survivors exit on their own within about a timeout; let them record
    // how they failed before anyone is terminated.
    o.failure_grace = absl::Milliseconds(timeout_ms) + absl::Seconds(5);
    absl::StatusOr<comm::LaunchResult> launched =
        comm::Launch(o, {*g_worker, "soak", dir, std::to_string(timeout_ms), std::to_string(seed),
                         FaultKindName(fault.kind), std::to_string(fault.rank),
                         std::to_string(fault.step)});
    const std::string what = absl::StrCat("run ", run, " (", c.ToString(), ", fault ",
                                          FaultKindName(fault.kind), " on rank ", fault.rank,
                                          " before step ", fault.step, ")");
    ++tally.runs;
    EXPECT_EQ(CountChildren(), before.children) << what << ": rank processes left behind";
    if (fault.kind == FaultKind::kNone) {
      ASSERT_TRUE(launched.ok()) << what << ": " << launched.status();
      for (int r = 0; r < n; ++r) {
        const WorkerResult w = ReadWorkerResult(dir, r);
        ASSERT_TRUE(w.present && w.code == 0) << what << ": rank " << r << ": " << w.message;
      }
      continue;
    }
    ++tally.faults;
    ++tally.by_kind[FaultKindName(fault.kind)];
    EXPECT_FALSE(launched.ok()) << what;
    for (int r = 0; r < n; ++r) {
      const WorkerResult w = ReadWorkerResult(dir, r);
      if (r == fault.rank) {
        // A rank that exits or crashes writes nothing; the others say why.
        const bool dies = fault.kind == FaultKind::kExit || fault.kind == FaultKind::kCrash;
        EXPECT_EQ(w.present, !dies) << what;
        if (w.present) {
          EXPECT_NE(w.code, 0) << what;
        }
        continue;
      }
      ASSERT_TRUE(w.present) << what << ": rank " << r << " recorded nothing";
      EXPECT_NE(w.code, 0) << what << ": rank " << r << " returned OK";
      EXPECT_LT(w.elapsed_ms, timeout_ms + absl::ToInt64Milliseconds(kSlack))
          << what << ": rank " << r << ": " << w.message;
      tally.slowest_error = std::max(tally.slowest_error, absl::Milliseconds(w.elapsed_ms));
    }
  }
  const Resources after;
  tally.Print("gloo", before, after);
  EXPECT_EQ(after.threads, before.threads);
  EXPECT_EQ(after.fds, before.fds);
  EXPECT_EQ(after.children, before.children);
}

}  // namespace
}  // namespace oneflow_sbp::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 4 || !absl::SimpleAtoi(argv[2], &oneflow_sbp::testing::g_inprocess_runs) ||
      !absl::SimpleAtoi(argv[3], &oneflow_sbp::testing::g_gloo_runs)) {
    std::fprintf(stderr, "usage: fault_soak_test <comm_worker> <in-process runs> <gloo runs>\n");
    return 2;
  }
  oneflow_sbp::testing::g_worker = new std::string(argv[1]);
  return RUN_ALL_TESTS();
}
