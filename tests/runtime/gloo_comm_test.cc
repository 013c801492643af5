// The Gloo backend, the rendezvous store and the launcher: 2 to 6 rank
// processes on 127.0.0.1 (tests/runtime/comm_worker_main.cc) run every collective
// and mesh sub-groups with the byte counters checked, and a rank that
// exits with an error, aborts, dies between or inside collectives, or
// sleeps past the timeout makes every other rank fail within about a
// second; a fresh world works afterwards.
//
// Usage (Bazel passes the worker): gloo_comm_test <path to comm_worker>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "comm/gloo_communicator.h"
#include "comm/kv_store.h"
#include "comm/launcher.h"
#include "comm/net.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/runtime/comm_worker_results.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::comm {
namespace {

using ::testing::HasSubstr;

std::string* g_worker = nullptr;

using testing::MakeResultDir;
using testing::ReadWorkerResult;
using testing::WorkerResult;

std::string MakeTempDir() {
  std::string dir = MakeResultDir();
  if (dir.empty()) ADD_FAILURE() << "mkdtemp failed";
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

WorkerResult ReadResult(const std::string& dir, int rank) { return ReadWorkerResult(dir, rank); }

absl::StatusOr<LaunchResult> LaunchWorkers(int n, const std::string& scenario,
                                           const std::string& dir, int timeout_ms,
                                           const std::vector<std::string>& extra = {}) {
  LaunchOptions o;
  o.nproc = n;
  o.timeout = absl::Seconds(40);
  // Survivors of a fault exit on their own within about a second; give
  // them time to record how they failed before anyone is terminated.
  o.failure_grace = absl::Seconds(6);
  std::vector<std::string> argv = {*g_worker, scenario, dir, std::to_string(timeout_ms)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Launch(o, argv);
}

void ExpectWorldWorks(int n, const std::string& scenario, const std::vector<std::string>& extra) {
  const std::string dir = MakeTempDir();
  const absl::Time start = absl::Now();
  absl::StatusOr<LaunchResult> r = LaunchWorkers(n, scenario, dir, 20000, extra);
  EXPECT_TRUE(r.ok()) << r.status();
  for (int k = 0; k < n; ++k) {
    const WorkerResult w = ReadResult(dir, k);
    EXPECT_TRUE(w.present && w.code == 0) << "rank " << k << ": " << w.message;
  }
  std::printf("gloo %s on %d processes: %s\n", scenario.c_str(), n,
              absl::FormatDuration(absl::Now() - start).c_str());
}

// ---------------------------------------------------------------- store --

const char kSecret[] = "gloo-comm-test-secret";

KvStoreOptions StoreOptions(int world_size) {
  KvStoreOptions o;
  o.secret = kSecret;
  o.world_size = world_size;
  return o;
}

TEST(KvStore, SetGetWaitAndTimeouts) {
  absl::StatusOr<std::unique_ptr<KvStoreServer>> server =
      KvStoreServer::Start("127.0.0.1", 0, StoreOptions(2));
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  auto a = KvStoreClient::Connect("127.0.0.1", (*server)->port(), kSecret, 0, deadline);
  auto b = KvStoreClient::Connect("127.0.0.1", (*server)->port(), kSecret, 1, deadline);
  ASSERT_TRUE(a.ok() && b.ok());
  // b waits for a key that a sets later.
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE((*a)->Set("k", std::string("v\0w", 3), deadline).ok());
  });
  absl::StatusOr<std::string> v = (*b)->Get("k", deadline);
  setter.join();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, std::string("v\0w", 3));
  const std::vector<std::string> keys = {"k", "missing"};
  const absl::Time start = absl::Now();
  absl::Status s = (*a)->Wait(keys, absl::Now() + absl::Milliseconds(200));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDeadlineExceeded)) << s;
  EXPECT_THAT(s.message(), HasSubstr("'missing'"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // Stopping the server fails a pending wait instead of hanging it.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server->reset();
  });
  s = (*b)->Wait(keys, absl::Now() + absl::Seconds(5));
  stopper.join();
  EXPECT_FALSE(s.ok());
}

TEST(KvStore, ClientRetriesUntilTheServerListens) {
  absl::StatusOr<int> port = net::PickFreePort("127.0.0.1");
  ASSERT_TRUE(port.ok());
  std::unique_ptr<KvStoreServer> server;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto s = KvStoreServer::Start("127.0.0.1", *port, StoreOptions(1));
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) server = *std::move(s);
  });
  auto c = KvStoreClient::Connect("127.0.0.1", *port, kSecret, 0, absl::Now() + absl::Seconds(5));
  later.join();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE((*c)->Set("x", "1", absl::Now() + absl::Seconds(1)).ok());
  // Nobody listening: a bounded failure.
  absl::StatusOr<int> dead = net::PickFreePort("127.0.0.1");
  auto none = KvStoreClient::Connect("127.0.0.1", *dead, kSecret, 0,
                                     absl::Now() + absl::Milliseconds(200));
  EXPECT_THAT(none, StatusIs(absl::StatusCode::kDeadlineExceeded));
}

// ------------------------------------------------------------- launcher --

LaunchOptions Shell(int n) {
  LaunchOptions o;
  o.nproc = n;
  o.timeout = absl::Seconds(20);
  o.term_timeout = absl::Seconds(2);
  return o;
}

TEST(Launcher, SetsTheTorchrunEnvironment) {
  const std::string dir = MakeTempDir();
  LaunchOptions o = Shell(3);
  o.env = {{"EXTRA", "x y"}};
  absl::StatusOr<LaunchResult> r = Launch(
      o, {"sh", "-c",
          "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT "
          "$EXTRA\" > " + dir + "/$RANK"});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranks.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(ReadFile(absl::StrCat(dir, "/", k)),
              absl::StrCat(k, " 3 ", k, " 3 127.0.0.1 ", r->master_port, " x y\n"));
    EXPECT_EQ(r->ranks[k].exit_code, 0);
  }
}

// The job secret reaches every rank through the environment, the same in
// all, and never on a command line.
TEST(Launcher, HandsTheJobSecretThroughTheEnvironment) {
  const std::string dir = MakeTempDir();
  unsetenv("OFS_JOB_SECRET");
  absl::StatusOr<LaunchResult> r =
      Launch(Shell(2), {"sh", "-c", "echo \"$OFS_JOB_SECRET\" > " + dir + "/$RANK"});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string s0 = ReadFile(dir + "/0");
  EXPECT_EQ(s0.size(), 65u) << s0;  // 64 hex digits and a newline
  EXPECT_EQ(ReadFile(dir + "/1"), s0);
  // A fresh one per job.
  r = Launch(Shell(1), {"sh", "-c", "echo \"$OFS_JOB_SECRET\" > " + dir + "/again"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(ReadFile(dir + "/again"), s0);
  // Several nodes need one given by the user.
  LaunchOptions two = Shell(1);
  two.nnodes = 2;
  two.master_port = 1234;
  EXPECT_THAT(Launch(two, {"true"}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Launcher, AFailingRankTerminatesTheOthersAndIsNamed) {
  const absl::Time start = absl::Now();
  absl::StatusOr<LaunchResult> r =
      Launch(Shell(3), {"sh", "-c", "if [ $RANK = 1 ]; then sleep 0.2; exit 3; fi; sleep 30"});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(r.status().message(), HasSubstr("rank 1 (pid "));
  EXPECT_THAT(r.status().message(), HasSubstr("exited with code 3"));
  EXPECT_THAT(r.status().message(), HasSubstr("terminated ranks 0,2"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));

  r = Launch(Shell(3), {"sh", "-c", "if [ $RANK = 2 ]; then kill -ABRT $$; fi; sleep 30"});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(r.status().message(), HasSubstr("rank 2"));
  EXPECT_THAT(r.status().message(), HasSubstr("killed by signal 6"));

  // A rank that ignores SIGTERM is killed after term_timeout.
  LaunchOptions o = Shell(2);
  o.term_timeout = absl::Milliseconds(300);
  const absl::Time t0 = absl::Now();
  r = Launch(o, {"sh", "-c", "if [ $RANK = 0 ]; then exit 5; fi; trap '' TERM; sleep 5"});
  EXPECT_THAT(r.status().message(), HasSubstr("exited with code 5"));
  EXPECT_LT(absl::Now() - t0, absl::Seconds(4));
}

TEST(Launcher, TimeoutAndBadCommands) {
  LaunchOptions o = Shell(2);
  o.timeout = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  absl::StatusOr<LaunchResult> r = Launch(o, {"sleep", "30"});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kDeadlineExceeded)) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));

  EXPECT_THAT(Launch(Shell(1), {"/nonexistent/worker"}),
            StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(Launch(Shell(1), {"no_such_command_anywhere"}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Launch(Shell(1), {}), StatusIs(absl::StatusCode::kInvalidArgument));
  LaunchOptions bad = Shell(0);
  EXPECT_THAT(Launch(bad, {"true"}), StatusIs(absl::StatusCode::kInvalidArgument));
  bad = Shell(1);
  bad.nnodes = 2;  // port 0 cannot be shared with another node
  EXPECT_THAT(Launch(bad, {"true"}), StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---------------------------------------------------------------- gloo --

TEST(Gloo, ConnectArguments) {
  unsetenv("RANK");
  EXPECT_THAT(ConnectFromEnvironment(absl::Seconds(1)),
            StatusIs(absl::StatusCode::kFailedPrecondition));
  GlooOptions o;
  o.job_secret = kSecret;
  o.master_port = 0;
  EXPECT_THAT(ConnectGloo(o), StatusIs(absl::StatusCode::kInvalidArgument));
  o.master_port = 1234;
  o.rank = 2;
  o.size = 2;
  EXPECT_THAT(ConnectGloo(o), StatusIs(absl::StatusCode::kInvalidArgument));

  // No job secret: refused before anything listens.
  GlooOptions no_secret = o;
  no_secret.rank = 0;
  no_secret.size = 1;
  no_secret.job_secret.clear();
  EXPECT_THAT(ConnectGloo(no_secret), StatusIs(absl::StatusCode::kInvalidArgument));

  // The store's port is taken: rank 0 cannot serve it.
  absl::StatusOr<net::Socket> taken = net::Listen("127.0.0.1", 0);
  ASSERT_TRUE(taken.ok());
  o.rank = 0;
  o.size = 1;
  o.master_port = *net::LocalPort(*taken);
  o.connect_timeout = absl::Seconds(2);
  absl::StatusOr<std::unique_ptr<Communicator>> c = ConnectGloo(o);
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kUnavailable)) << c.status();
  EXPECT_THAT(c.status().message(), HasSubstr("gloo rendezvous of rank 0"));

  // A world of one, in this process, runs everything.
  o.master_port = *net::PickFreePort("127.0.0.1");
  c = ConnectGloo(o);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::Status s = testing::CheckEveryCollective(**c);
  EXPECT_TRUE(s.ok()) << s;
}

class GlooCollectives : public ::testing::TestWithParam<int> {};

TEST_P(GlooCollectives, EveryCollectiveWithByteCounters) {
  ExpectWorldWorks(GetParam(), "collectives", {});
}

INSTANTIATE_TEST_SUITE_P(Processes, GlooCollectives, ::testing::Range(2, 7),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("n", info.param);
                         });

TEST(GlooMesh, EveryAxisSubsetConcurrently) {
  ExpectWorldWorks(4, "mesh", {"2", "2"});
  ExpectWorldWorks(6, "mesh", {"2", "3"});
}

// A fault on rank 1 of 4; every other rank must fail within ~1 s (the
// calls' timeout is 1 s), and a fresh world must work afterwards.
class GlooFaults : public ::testing::TestWithParam<std::string> {};

TEST_P(GlooFaults, EveryOtherRankFailsPromptly) {
  const std::string scenario = GetParam();
  const std::string dir = MakeTempDir();
  const absl::Time start = absl::Now();
  absl::StatusOr<LaunchResult> r = LaunchWorkers(4, scenario, dir, /*timeout_ms=*/1000);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kAborted)) << r.status();
  for (int k : {0, 2, 3}) {
    const WorkerResult w = ReadResult(dir, k);
    ASSERT_TRUE(w.present) << "rank " << k << " recorded nothing";
    EXPECT_NE(w.code, 0) << "rank " << k << " returned OK after the fault";
    EXPECT_LT(w.elapsed_ms, 2000) << "rank " << k << ": " << w.message;
    std::printf("%s: rank %d failed after %lld ms: %s", scenario.c_str(), k,
                static_cast<long long>(w.elapsed_ms), w.message.c_str());
  }
  std::printf("%s: whole launch %s\n", scenario.c_str(),
              absl::FormatDuration(absl::Now() - start).c_str());
  if (scenario == "die" || scenario == "crash_mid") {
    EXPECT_FALSE(ReadResult(dir, 1).present);  // it really died
  }
  // Fresh processes, fresh world.
  ExpectWorldWorks(3, "collectives", {});
}

INSTANTIATE_TEST_SUITE_P(Scenarios, GlooFaults,
                         ::testing::Values("exit_error", "abort_call", "die", "crash_mid",
                                           "sleep"));

// Worker processes with `env` on top of the launcher's environment.
LaunchOptions WorkerLaunch(int n, absl::Duration grace,
                           std::vector<std::pair<std::string, std::string>> env = {}) {
  LaunchOptions o;
  o.nproc = n;
  o.timeout = absl::Seconds(40);
  o.failure_grace = grace;
  o.term_timeout = absl::Seconds(1);
  o.env = std::move(env);
  return o;
}

// Rank 1 of 4 stops (SIGSTOP) while the others wait in an all-reduce with
// a 30 s timeout. Its sockets stay open, so only the heartbeat (2 s here)
// can tell; every other rank must fail within a few seconds naming rank 1,
// and the launcher's summary must name it too. The launcher gives the
// others 3 s after the first failure to notice on their own: with 1 s, a
// rank slowed by TSan on a loaded machine was terminated before its own
// heartbeat check fired, and recorded nothing.
TEST(GlooHungPeer, AStoppedRankIsNamedWithinTheHeartbeatTimeout) {
  const std::string dir = MakeTempDir();
  const LaunchOptions o = WorkerLaunch(4, absl::Seconds(3), {{"OFS_HEARTBEAT_TIMEOUT", "2"}});
  const absl::Time start = absl::Now();
  absl::StatusOr<LaunchResult> r = Launch(o, {*g_worker, "stop", dir, "30000"});
  const absl::Duration took = absl::Now() - start;
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kAborted)) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("rank 1 (pid "));
  EXPECT_THAT(r.status().message(), HasSubstr("stopped by signal 19"));
  for (int k : {0, 2, 3}) {
    const WorkerResult w = ReadResult(dir, k);
    ASSERT_TRUE(w.present) << "rank " << k << " recorded nothing";
    EXPECT_NE(w.code, 0);
    EXPECT_LT(w.elapsed_ms, 5000) << "rank " << k << ": " << w.message;
    EXPECT_THAT(w.message, HasSubstr("rank 1 stopped answering")) << "rank " << k;
    std::printf("stop: rank %d failed after %lld ms: %s", k,
                static_cast<long long>(w.elapsed_ms), w.message.c_str());
  }
  std::printf("stop: whole launch %s: %s\n", absl::FormatDuration(took).c_str(),
              r.status().ToString().c_str());
  EXPECT_LT(took, absl::Seconds(15));
}

// OFS_TIMEOUT replaces the timeout a rank asked for: a sleeping rank (3 s)
// is reported after 1 s although the worker asked for 20 s.
TEST(GlooTimeout, TheEnvironmentSetsTheCollectiveTimeout) {
  const std::string dir = MakeTempDir();
  LaunchOptions o = WorkerLaunch(2, absl::Seconds(6), {{"OFS_TIMEOUT", "1"}});
  absl::StatusOr<LaunchResult> r = Launch(o, {*g_worker, "sleep", dir, "20000"});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kAborted)) << r.status();
  const WorkerResult w = ReadResult(dir, 0);
  ASSERT_TRUE(w.present);
  EXPECT_NE(w.code, 0);
  EXPECT_LT(w.elapsed_ms, 2500) << w.message;
  o.env = {{"OFS_TIMEOUT", "soon"}};
  r = Launch(o, {*g_worker, "collectives", dir, "20000"});
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(ReadResult(dir, 0).message, HasSubstr("OFS_TIMEOUT='soon'"));
}

// A job whose store is attacked while the ranks rendezvous: 100 idle
// connections and 7 requests that announce 64 MiB and stall, all opened as
// soon as the store listens. The job still runs every collective.
TEST(GlooUnderAttack, AJobSurvivesIdleAndStalledConnectionsToItsStore) {
  absl::StatusOr<int> port = net::PickFreePort("127.0.0.1");
  ASSERT_TRUE(port.ok());
  const std::string dir = MakeTempDir();
  absl::StatusOr<LaunchResult> job;
  std::vector<net::Socket> attack;
  absl::Mutex mu;
  std::thread attacker([&] {
    for (int i = 0; i < 107; ++i) {
      // The first waits for the store to listen; once it stops listening
      // (every rank joined) the next one is refused until its deadline and
      // the attack ends. Not a 1 ms deadline: under tsan on a loaded
      // machine, resolving the address and connecting took longer than that
      // while the store still listened, and the attack ended after one
      // connection (the check below failed).
      absl::StatusOr<net::Socket> s = net::Connect(
          "127.0.0.1", *port, absl::Now() + (i == 0 ? absl::Seconds(10) : absl::Seconds(3)));
      if (!s.ok()) break;  // the store closed: every rank joined
      if (i < 7) {
        std::string stall(1, 1);
        const uint32_t big = 64u << 20;
        stall.append(reinterpret_cast<const char*>(&big), 4);
        (void)net::WriteAll(*s, stall.data(), stall.size(), absl::Now() + absl::Seconds(1));
      }
      absl::MutexLock lock(&mu);
      attack.push_back(*std::move(s));
    }
  });
  // Rank 1 joins 3 s late, so every attack lands while the store listens.
  LaunchOptions o =
      WorkerLaunch(3, absl::Seconds(2), {{"COMM_WORKER_RANK1_JOIN_DELAY_MS", "3000"}});
  o.master_port = *port;
  job = Launch(o, {*g_worker, "collectives", dir, "20000"});
  attacker.join();
  {
    absl::MutexLock lock(&mu);
    EXPECT_GE(attack.size(), 8u) << "the attacks never reached the store";
  }
  EXPECT_TRUE(job.ok()) << job.status();
  for (int k = 0; k < 3; ++k) {
    const WorkerResult w = ReadResult(dir, k);
    EXPECT_TRUE(w.present && w.code == 0) << "rank " << k << ": " << w.message;
  }
  absl::MutexLock lock(&mu);
  std::printf("a job with %zu attacking connections to its store passed\n", attack.size());
}

// Two jobs on one port at once: the second fails at once, saying the port
// is taken, and the first is unaffected.
TEST(GlooSecondJob, FailsAtOnceAndLeavesTheFirstAlone) {
  absl::StatusOr<int> port = net::PickFreePort("127.0.0.1");
  ASSERT_TRUE(port.ok());
  const std::string dir1 = MakeTempDir();
  const std::string dir2 = MakeTempDir();
  absl::StatusOr<LaunchResult> first;
  // The first job's rank 1 joins 6 s late, so its store (served by rank 0
  // until every rank joined) is certainly listening while the second job
  // tries the port; without the delay a fast job could close its store
  // before the probe below connects.
  std::thread job1([&] {
    LaunchOptions o =
        WorkerLaunch(3, absl::Seconds(2), {{"COMM_WORKER_RANK1_JOIN_DELAY_MS", "6000"}});
    o.master_port = *port;
    first = Launch(o, {*g_worker, "collectives", dir1, "20000"});
  });
  struct JoinAtExit {
    std::thread& t;
    ~JoinAtExit() {
      if (t.joinable()) t.join();
    }
  } join_job1{job1};
  // Once the first job's store listens, start the second on its port:
  // through the launcher (refused before any rank starts) and as a rank
  // started by hand with another secret (refused by the store).
  ASSERT_TRUE(net::Connect("127.0.0.1", *port, absl::Now() + absl::Seconds(10)).ok());
  LaunchOptions o = WorkerLaunch(3, absl::Seconds(2));
  o.master_port = *port;
  absl::Time start = absl::Now();
  absl::StatusOr<LaunchResult> second = Launch(o, {*g_worker, "collectives", dir2, "20000"});
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kUnavailable)) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr("is not free"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  GlooOptions intruder;
  intruder.rank = 1;
  intruder.size = 3;
  intruder.master_port = *port;
  intruder.job_secret = "another job";
  intruder.connect_timeout = absl::Seconds(2);
  absl::StatusOr<std::unique_ptr<Communicator>> c = ConnectGloo(intruder);
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kPermissionDenied)) << c.status();
  job1.join();
  EXPECT_TRUE(first.ok()) << first.status();
  for (int k = 0; k < 3; ++k) {
    const WorkerResult w = ReadResult(dir1, k);
    EXPECT_TRUE(w.present && w.code == 0) << "rank " << k << ": " << w.message;
  }
}

}  // namespace
}  // namespace oneflow_sbp::comm

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: gloo_comm_test <path to comm_worker>\n");
    return 2;
  }
  oneflow_sbp::comm::g_worker = new std::string(argv[1]);
  return RUN_ALL_TESTS();
}
