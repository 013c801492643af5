// A rank process for tests/runtime/gloo_comm_test.cc, started by the launcher
// library: joins the Gloo world from the environment (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), runs one scenario, and writes its outcome to
// <result_dir>/rank<RANK> as "<status code> <elapsed ms> <message>", where
// the elapsed time is that of the call under test.
//
//   comm_worker <scenario> <result_dir> <timeout_ms> [scenario args]
//
// Scenarios (the faulty rank is world rank 1):
//   collectives        every collective (tests/runtime/comm_scenarios.h)
//   mesh H0 H1 ...     every axis subset of the mesh, concurrently
//   exit_error         rank 1 returns from main with code 1 while the others
//                      wait in an all-reduce
//   abort_call         rank 1 calls Abort on its communicator and stays alive
//   die                rank 1 _exit(3)s while the others wait
//   crash_mid          rank 1 abort()s from another thread while a 16 MiB
//                      all-reduce is running
//   sleep              rank 1 sleeps 3 s, past the others' timeout
//   stop               rank 1 stops itself (SIGSTOP) while the others wait
//   soak SEED KIND RANK STEP
//                      one fault soak run (tests/runtime/fault_soak.h): the random
//                      boxing plan of SEED; rank RANK fails as KIND
//                      (none, return_error, abort_call, sleep, exit, crash)
//                      before step STEP
// COMM_WORKER_RANK1_JOIN_DELAY_MS=N makes rank 1 wait N ms before it joins.
// Exit code: 0 when the call under test succeeded, 1 otherwise, 2 when the
// world could not be joined.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "comm/launcher.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/runtime/comm_worker_results.h"
#include "tests/runtime/fault_soak.h"

namespace oneflow_sbp::comm {
namespace {

constexpr int kFaulty = 1;

void WriteResult(const std::string& dir, int rank, const absl::Status& s, absl::Duration elapsed) {
  testing::WriteWorkerResult(dir, rank, s, elapsed);
}

// Two all-reduces; between them `fault` runs on the faulty rank, which
// then returns `fault`'s error instead of taking part in the second, if it
// gives one. Returns this rank's status; `start` is reset to the start of
// the second all-reduce.
absl::Status AllReduceAfterFault(Communicator& world, const std::function<absl::Status()>& fault,
                                 absl::Time* start) {
  std::vector<float> x(1024, 1.0f);
  // One good collective first, so the fault happens on a live world.
  absl::Status s = world.AllReduce(x.data(), x.data(), x.size(), DataType::kFloat32);
  if (!s.ok()) return s;
  if (world.rank() == kFaulty) {
    if (absl::Status f = fault(); !f.ok()) return f;
  }
  *start = absl::Now();
  return world.AllReduce(x.data(), x.data(), x.size(), DataType::kFloat32);
}

namespace soak = ::oneflow_sbp::testing;

// One fault soak run (tests/runtime/fault_soak.h): argv[4..7] are the case seed,
// the fault kind, the faulty rank and the step it fails before.
absl::Status Soak(Communicator& comm, int argc, char** argv, absl::Duration timeout) {
  uint64_t seed = 0;
  soak::Fault fault;
  if (argc < 8 || !absl::SimpleAtoi(argv[4], &seed) || !absl::SimpleAtoi(argv[6], &fault.rank) ||
      !absl::SimpleAtoi(argv[7], &fault.step)) {
    return absl::InvalidArgumentError("soak needs <seed> <fault kind> <fault rank> <fault step>");
  }
  absl::StatusOr<soak::FaultKind> kind = soak::ParseFaultKind(argv[5]);
  if (!kind.ok()) return kind.status();
  fault.kind = *kind;
  const soak::SoakCase c = soak::RandomCase(seed);
  absl::StatusOr<boxing::BoxingPlan> plan = soak::PlanFor(c);
  if (!plan.ok()) return plan.status();
  auto inject = [&](Communicator& world) -> absl::Status {
    switch (fault.kind) {
      case soak::FaultKind::kAbort:
        world.Abort(absl::InternalError(absl::StrCat("rank ", world.rank(), " gave up")));
        // Stay alive: the peers must learn of it from the abort itself.
        std::this_thread::sleep_for(std::chrono::seconds(2));
        return world.health();
      case soak::FaultKind::kSleep:
        std::this_thread::sleep_for(absl::ToChronoMilliseconds(timeout) +
                                    std::chrono::milliseconds(500));
        return absl::OkStatus();
      case soak::FaultKind::kExit:
        _exit(3);
      case soak::FaultKind::kCrash: {
        const rlimit no_core = {0, 0};  // the crash is the point, not its dump
        setrlimit(RLIMIT_CORE, &no_core);
        std::abort();
      }
      default:
        // Returning from main destroys the communicator, which closes its
        // connections.
        return absl::FailedPreconditionError(
            absl::StrCat("rank ", world.rank(), " gave up before step ", fault.step));
    }
  };
  return soak::RunSoakRank(c, *plan, fault, comm, inject);
}

int Main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: comm_worker <scenario> <result_dir> <timeout_ms> [args]\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const std::string dir = argv[2];
  int timeout_ms = 0;
  if (!absl::SimpleAtoi(argv[3], &timeout_ms)) return 2;
  const char* rank_env = std::getenv("RANK");
  const int rank = rank_env == nullptr ? -1 : std::atoi(rank_env);
  // Holds the job's store open for a known time: rank 0 serves it until
  // every rank joined, so a late rank 1 keeps it listening.
  if (const char* delay = std::getenv("COMM_WORKER_RANK1_JOIN_DELAY_MS");
      delay != nullptr && rank == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(delay)));
  }
  absl::StatusOr<std::unique_ptr<Communicator>> world =
      ConnectFromEnvironment(absl::Milliseconds(timeout_ms));
  if (!world.ok()) {
    WriteResult(dir, rank, world.status(), absl::ZeroDuration());
    std::fprintf(stderr, "rank %d: %s\n", rank, world.status().ToString().c_str());
    return 2;
  }
  Communicator& comm = **world;

  absl::Time start = absl::Now();
  absl::Status s;
  if (scenario == "collectives") {
    s = testing::CheckEveryCollective(comm);
    // Messages of several wire segments, where the Gloo transport reduces
    // piece by piece; megabytes per rank, so not on the largest worlds.
    if (s.ok() && comm.size() <= 4) s = testing::CheckMultiSegmentCollectives(comm);
  } else if (scenario == "mesh") {
    std::vector<int64_t> hierarchy;
    for (int i = 4; i < argc; ++i) hierarchy.push_back(std::atoll(argv[i]));
    s = testing::CheckMeshSubGroups(comm, hierarchy, /*concurrent=*/true);
  } else if (scenario == "exit_error") {
    // Returning from Main destroys the communicator, which closes its
    // connections in an orderly way.
    s = AllReduceAfterFault(
        comm, [] { return absl::FailedPreconditionError("rank 1 gave up"); }, &start);
  } else if (scenario == "abort_call") {
    s = AllReduceAfterFault(
        comm,
        [&] {
          comm.Abort(absl::InternalError("rank 1 gave up"));
          std::this_thread::sleep_for(std::chrono::seconds(3));
          return absl::OkStatus();
        },
        &start);
  } else if (scenario == "die") {
    s = AllReduceAfterFault(
        comm, []() -> absl::Status { _exit(3); }, &start);
  } else if (scenario == "crash_mid") {
    std::vector<float> big(4 << 20, 1.0f);
    std::thread killer;
    if (comm.rank() == kFaulty) {
      // No core file: the crash is the point, not its dump.
      const rlimit no_core = {0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      killer = std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::abort();
      });
    }
    // Several rounds, so the crash lands inside one of them.
    // The call under test is the round the crash lands in: time each round
    // on its own, or slow rounds before the crash (under a sanitizer) would
    // count as time spent noticing it.
    for (int i = 0; i < 50 && s.ok(); ++i) {
      start = absl::Now();
      s = comm.AllReduce(big.data(), big.data(), big.size(), DataType::kFloat32);
    }
    if (killer.joinable()) killer.join();
  } else if (scenario == "sleep") {
    s = AllReduceAfterFault(
        comm,
        [] {
          std::this_thread::sleep_for(std::chrono::seconds(3));
          return absl::OkStatus();
        },
        &start);
  } else if (scenario == "stop") {
    s = AllReduceAfterFault(
        comm,
        [] {
          raise(SIGSTOP);
          return absl::OkStatus();
        },
        &start);
  } else if (scenario == "soak") {
    start = absl::Now();
    s = Soak(comm, argc, argv, absl::Milliseconds(timeout_ms));
  } else {
    s = absl::InvalidArgumentError(absl::StrCat("unknown scenario ", scenario));
  }
  const absl::Duration elapsed = absl::Now() - start;
  WriteResult(dir, rank, s, elapsed);
  if (!s.ok()) std::fprintf(stderr, "rank %d: %s\n", rank, s.ToString().c_str());
  return s.ok() ? 0 : 1;
}

}  // namespace
}  // namespace oneflow_sbp::comm

int main(int argc, char** argv) { return oneflow_sbp::comm::Main(argc, argv); }
