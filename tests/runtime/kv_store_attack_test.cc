// The rendezvous store under attack (issue 24): stalled requests, many idle
// connections, a foreign client without the job secret, an idle foreign
// connection at the end of a job and file descriptors running out. None may
// crash the store, stall it, or keep a job's ranks from using it.
#include <dirent.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "comm/kv_store.h"
#include "comm/net.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::comm {
namespace {

using ::testing::HasSubstr;

int ThreadCount() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

int64_t RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "VmRSS:")) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
      int64_t kb = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb;
    }
  }
  return -1;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

const std::string kSecret = "test-secret-0123456789abcdef";

KvStoreOptions Options(int world_size) {
  KvStoreOptions o;
  o.secret = kSecret;
  o.world_size = world_size;
  o.handshake_timeout = absl::Milliseconds(500);
  return o;
}

std::unique_ptr<KvStoreServer> StartStore(const KvStoreOptions& o) {
  absl::StatusOr<std::unique_ptr<KvStoreServer>> s = KvStoreServer::Start("127.0.0.1", 0, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

absl::StatusOr<std::unique_ptr<KvStoreClient>> Join(const KvStoreServer& server, int rank,
                                                    const std::string& secret = kSecret,
                                                    absl::Duration within = absl::Seconds(5)) {
  return KvStoreClient::Connect("127.0.0.1", server.port(), secret, rank, absl::Now() + within);
}

net::Socket Raw(int port) {
  absl::StatusOr<net::Socket> s = net::Connect("127.0.0.1", port, absl::Now() + absl::Seconds(2));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : net::Socket();
}

void PutU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// The store's old request layout (op, count, length-prefixed arguments,
// timeout), with no secret: what a foreign process would send.
std::string OldRequest(uint8_t op, const std::vector<std::string>& args) {
  std::string r(1, static_cast<char>(op));
  PutU32(r, static_cast<uint32_t>(args.size()));
  for (const std::string& a : args) {
    PutU32(r, static_cast<uint32_t>(a.size()));
    r += a;
  }
  const int64_t timeout_ms = 200;
  r.append(reinterpret_cast<const char*>(&timeout_ms), 8);
  return r;
}

// Reads whatever the store sends within `within`; empty when it closed or
// sent nothing.
std::string ReadSome(const net::Socket& s, absl::Duration within) {
  std::string got;
  char c = 0;
  const absl::Time deadline = absl::Now() + within;
  while (net::ReadAll(s, &c, 1, deadline).ok()) got.push_back(c);
  return got;
}

// Seven requests that announce 64 MiB and then stall used to make the store
// reserve 7 x 64 MiB; nothing may be reserved before the bytes arrive (and
// nothing at all before the client proved it knows the secret).
TEST(KvStoreAttack, StalledRequestsReserveNoMemory) {
  std::unique_ptr<KvStoreServer> server = StartStore(Options(2));
  ASSERT_NE(server, nullptr);
  const int64_t before = RssKb();
  std::vector<net::Socket> stalled;
  for (int i = 0; i < 7; ++i) {
    stalled.push_back(Raw(server->port()));
    std::string req(1, 1);
    PutU32(req, 2);
    PutU32(req, 64u << 20);
    ASSERT_TRUE(net::WriteAll(stalled.back(), req.data(), req.size(),
                              absl::Now() + absl::Seconds(1))
                    .ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int64_t grown_mb = (RssKb() - before) / 1024;
  std::printf("7 stalled 64 MiB requests: RSS grew by %lld MiB\n",
              static_cast<long long>(grown_mb));
  EXPECT_LT(grown_mb, 32);
  // The job's ranks are not held up.
  auto a = Join(*server, 0);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE((*a)->Set("k", "v", absl::Now() + absl::Seconds(2)).ok());
}

// 100 idle connections used to cost 100 threads (and, with their buffers,
// rank 0's memory); the store serves a bounded number at a time, drops
// connections that do not authenticate in time, and still lets the ranks in.
TEST(KvStoreAttack, IdleConnectionsAreBounded) {
  std::unique_ptr<KvStoreServer> server = StartStore(Options(2));
  ASSERT_NE(server, nullptr);
  const int threads_before = ThreadCount();
  std::vector<net::Socket> idle;
  for (int i = 0; i < 100; ++i) idle.push_back(Raw(server->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int grown = ThreadCount() - threads_before;
  std::printf("100 idle connections: %d more threads\n", grown);
  EXPECT_LE(grown, 20);
  const absl::Time start = absl::Now();
  auto a = Join(*server, 0);
  auto b = Join(*server, 1);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE((*a)->Set("k", "v", absl::Now() + absl::Seconds(2)).ok());
  EXPECT_EQ(*(*b)->Get("k", absl::Now() + absl::Seconds(2)), "v");
  std::printf("ranks joined past 100 idle connections in %s\n",
              absl::FormatDuration(absl::Now() - start).c_str());
}

// A local process that knows the port must not read the pair addresses nor
// write keys: without the job secret it gets nothing.
TEST(KvStoreAttack, ForeignClientCannotReadOrWriteKeys) {
  std::unique_ptr<KvStoreServer> server = StartStore(Options(2));
  ASSERT_NE(server, nullptr);
  auto a = Join(*server, 0);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE((*a)->Set("gloo/addr/0", "secret address", absl::Now() + absl::Seconds(2)).ok());

  // The old protocol, no secret.
  net::Socket raw = Raw(server->port());
  const std::string get = OldRequest(2, {"gloo/addr/0"});
  (void)net::WriteAll(raw, get.data(), get.size(), absl::Now() + absl::Seconds(1));
  const std::string reply = ReadSome(raw, absl::Seconds(1));
  EXPECT_THAT(reply, ::testing::Not(HasSubstr("secret address")));
  net::Socket raw_set = Raw(server->port());
  const std::string set = OldRequest(1, {"gloo/addr/1", "attacker"});
  (void)net::WriteAll(raw_set, set.data(), set.size(), absl::Now() + absl::Seconds(1));
  (void)ReadSome(raw_set, absl::Milliseconds(300));

  // A client with the wrong secret is refused at once, by name.
  const absl::Time start = absl::Now();
  auto wrong = Join(*server, 1, "another job's secret");
  EXPECT_THAT(wrong, StatusIs(absl::StatusCode::kPermissionDenied)) << wrong.status();
  EXPECT_THAT(wrong.status().message(), HasSubstr("job secret"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));

  // Rank 1 still joins, and the key the foreign client tried to write is not
  // there.
  auto b = Join(*server, 1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT((*b)->Get("gloo/addr/1", absl::Now() + absl::Milliseconds(200)),
            StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_EQ(*(*b)->Get("gloo/addr/0", absl::Now() + absl::Seconds(1)), "secret address");
}

// A client of this job that talks to a store with another secret (a second
// job took the port first) learns so at once, by name.
TEST(KvStoreAttack, ClientOfAnotherJobIsToldAtOnce) {
  KvStoreOptions other = Options(2);
  other.secret = "the first job's secret";
  std::unique_ptr<KvStoreServer> server = StartStore(other);
  ASSERT_NE(server, nullptr);
  const absl::Time start = absl::Now();
  auto c = Join(*server, 1);
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kPermissionDenied)) << c.status();
  EXPECT_THAT(c.status().message(), HasSubstr("another job"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // The same port cannot be served twice.
  absl::StatusOr<std::unique_ptr<KvStoreServer>> second =
      KvStoreServer::Start("127.0.0.1", server->port(), Options(2));
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
}

// Requests and the store are bounded: a value over the request limit is
// refused before it is sent, and the store's total is capped.
TEST(KvStoreAttack, RequestsAndTheStoreAreBounded) {
  KvStoreOptions o = Options(1);
  o.max_store_bytes = 1000;
  std::unique_ptr<KvStoreServer> server = StartStore(o);
  ASSERT_NE(server, nullptr);
  auto a = Join(*server, 0);
  ASSERT_TRUE(a.ok()) << a.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  absl::Status s = (*a)->Set("big", std::string(2u << 20, 'x'), deadline);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
  EXPECT_TRUE((*a)->Set("k", std::string(900, 'x'), deadline).ok());
  s = (*a)->Set("k2", std::string(200, 'x'), deadline);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted)) << s;
  // Replacing a value counts only the difference.
  EXPECT_TRUE((*a)->Set("k", std::string(950, 'y'), deadline).ok());
  EXPECT_EQ((*(*a)->Get("k", deadline)).size(), 950u);
}

// Once every rank joined, the store takes no new connections.
TEST(KvStoreAttack, ClosedOnceEveryRankJoined) {
  std::unique_ptr<KvStoreServer> server = StartStore(Options(2));
  ASSERT_NE(server, nullptr);
  auto a = Join(*server, 0);
  auto b = Join(*server, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  absl::StatusOr<net::Socket> late =
      net::Connect("127.0.0.1", server->port(), absl::Now() + absl::Milliseconds(300));
  EXPECT_FALSE(late.ok()) << "the store still accepts connections after every rank joined";
  // A rank that joins twice is refused.
  EXPECT_TRUE((*a)->Set("x", "1", absl::Now() + absl::Seconds(1)).ok());
}

// An idle foreign connection used to hold the end of the job for the whole
// drain (5 s); only the ranks' own connections are waited for.
TEST(KvStoreAttack, IdleForeignConnectionDoesNotDelayShutdown) {
  std::unique_ptr<KvStoreServer> server = StartStore(Options(2));
  ASSERT_NE(server, nullptr);
  net::Socket idle = Raw(server->port());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    auto a = Join(*server, 0);
    auto b = Join(*server, 1);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE((*a)->Set("k", "v", absl::Now() + absl::Seconds(1)).ok());
  }
  const absl::Time start = absl::Now();
  server->Shutdown(absl::Seconds(5));
  server.reset();
  const absl::Duration took = absl::Now() - start;
  std::printf("shutdown with an idle foreign connection: %s\n", absl::FormatDuration(took).c_str());
  EXPECT_LT(took, absl::Seconds(2));
}

// When file descriptors run out, accept fails with EMFILE while the
// connection stays queued; the loop used to retry at once, spinning a core.
TEST(KvStoreAttack, AcceptLoopBacksOffWhenDescriptorsRunOut) {
  std::unique_ptr<KvStoreServer> server = StartStore(Options(2));
  ASSERT_NE(server, nullptr);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  // A socket made now, connected once no descriptor is left.
  const int pending = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(pending, 0);
  std::vector<int> filler;
  rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, 1024);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  for (;;) {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    filler.push_back(fd);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(pending, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const double cpu0 = CpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu = CpuSeconds() - cpu0;
  for (int fd : filler) ::close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_EQ(rc, 0);
  std::printf("accept loop out of descriptors: %.0f ms of CPU in 500 ms\n", cpu * 1000);
  EXPECT_LT(cpu, 0.2);
  ::close(pending);
  // Descriptors back: the ranks get in.
  auto a = Join(*server, 0);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE((*a)->Set("k", "v", absl::Now() + absl::Seconds(1)).ok());
}

}  // namespace
}  // namespace oneflow_sbp::comm
