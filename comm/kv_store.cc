#include "comm/kv_store.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/job_auth.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm {
namespace {

using store::GetU32;
using store::PutU32;

// How long accept waits after running out of descriptors.
constexpr absl::Duration kAcceptBackoff = absl::Milliseconds(100);
// A refusal message is short.
constexpr uint32_t kMaxRefusalBytes = 4096;

absl::Status ReadString(const net::Socket& s, std::string* out, uint32_t limit,
                        absl::Time deadline, int cancel_fd) {
  uint32_t len = 0;
  if (absl::Status st = net::ReadAll(s, &len, 4, deadline, cancel_fd); !st.ok()) return st;
  if (len > limit) {
    return absl::InvalidArgumentError(absl::StrCat("store message of ", len, " bytes is too long"));
  }
  out->resize(len);
  return net::ReadAll(s, out->data(), len, deadline, cancel_fd);
}

std::string Reply(const absl::Status& status, const std::string& value) {
  const std::string body = status.ok() ? value : std::string(status.message());
  std::string out(1, static_cast<char>(status.code()));
  PutU32(out, static_cast<uint32_t>(body.size()));
  out += body;
  return out;
}

// Waits up to `d` or until `fd` is readable.
void SleepUnless(int fd, absl::Duration d) {
  pollfd p{fd, POLLIN, 0};
  (void)::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(d)));
}

}  // namespace

// ---------------------------------------------------------------- server --

absl::StatusOr<std::unique_ptr<KvStoreServer>> KvStoreServer::Start(
    const std::string& host, int port, const KvStoreOptions& options) {
  if (options.secret.empty()) {
    return absl::InvalidArgumentError("rendezvous store: the job secret is empty");
  }
  if (options.world_size < 1 || options.max_pending < 1) {
    return absl::InvalidArgumentError(absl::StrCat("rendezvous store: world_size ",
                                                   options.world_size, ", max_pending ",
                                                   options.max_pending, " (need >= 1)"));
  }
  absl::StatusOr<net::Socket> listener = net::Listen(host, port);
  if (!listener.ok()) {
    return absl::Status(
        listener.status().code(),
        absl::StrCat("rendezvous store: ", listener.status().message(),
                     absl::StrContains(listener.status().message(), "in use")
                         ? absl::StrCat(" (port ", port,
                                        " is in use: another job's store, or another program; "
                                        "pick another --master_port)")
                         : ""));
  }
  OFS_ASSIGN_OR_RETURN(int bound, net::LocalPort(*listener));
  const int stop_fd = eventfd(0, EFD_CLOEXEC);
  const int joined_fd = eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0 || joined_fd < 0) {
    if (stop_fd >= 0) ::close(stop_fd);
    if (joined_fd >= 0) ::close(joined_fd);
    return absl::InternalError("rendezvous store: eventfd failed");
  }
  std::unique_ptr<KvStoreServer> server(
      new KvStoreServer(*std::move(listener), bound, stop_fd, joined_fd, options));
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

KvStoreServer::KvStoreServer(net::Socket listener, int port, int stop_fd, int joined_fd,
                             KvStoreOptions options)
    : listener_(std::move(listener)),
      port_(port),
      stop_fd_(stop_fd),
      joined_fd_(joined_fd),
      options_(std::move(options)) {}

KvStoreServer::~KvStoreServer() {
  Stop();
  ::close(stop_fd_);
  ::close(joined_fd_);
}

void KvStoreServer::Shutdown(absl::Duration drain) {
  {
    absl::MutexLock lock(&mu_);
    auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return connected_.empty(); };
    mu_.AwaitWithTimeout(absl::Condition(&drained), drain);
  }
  Stop();
}

void KvStoreServer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  // Wakes every poll on stop_fd_ for good (nobody reads the counter).
  const uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof(one));
  if (acceptor_.joinable()) acceptor_.join();
  // The acceptor has exited, so no worker is added any more.
  std::list<Worker> workers;
  {
    absl::MutexLock lock(&mu_);
    workers.swap(workers_);
  }
  for (Worker& w : workers) w.thread.join();
}

void KvStoreServer::ReapWorkers() {
  std::list<Worker> finished;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      auto next = std::next(it);
      if (it->done->load()) finished.splice(finished.end(), workers_, it);
      it = next;
    }
  }
  for (Worker& w : finished) w.thread.join();
}

void KvStoreServer::AcceptLoop() {
  for (;;) {
    pollfd fds[3] = {{listener_.fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}, {joined_fd_, POLLIN, 0}};
    const int rc = ::poll(fds, 3, 1000);
    if (rc < 0 && errno != EINTR) {
      SleepUnless(stop_fd_, kAcceptBackoff);
      continue;
    }
    ReapWorkers();
    if (fds[1].revents != 0) return;
    if (fds[2].revents != 0) {
      // Every rank joined: nobody else may connect.
      listener_.reset();
      return;
    }
    if (rc <= 0 || fds[0].revents == 0) continue;
    net::Socket conn(::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn.valid()) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // The connection stays queued and poll keeps saying so: wait
        // instead of spinning until a descriptor is free.
        SleepUnless(stop_fd_, kAcceptBackoff);
      }
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    if (pending_ >= options_.max_pending) {
      const char busy = static_cast<char>(store::kBusy);
      (void)!::send(conn.fd(), &busy, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      continue;  // closes it
    }
    ++pending_;
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto c = std::make_shared<net::Socket>(std::move(conn));
    workers_.push_back(
        Worker{std::thread([this, c, done] { Serve(std::move(*c), done); }), done});
  }
}

std::optional<store::Session> KvStoreServer::Authenticate(const net::Socket& conn) {
  const absl::Time deadline = absl::Now() + options_.handshake_timeout;
  absl::StatusOr<std::string> nonce = RandomBytes(kNonceBytes);
  if (!nonce.ok()) return std::nullopt;
  std::string greeting(1, '\0');
  greeting.append(store::kMagic, sizeof(store::kMagic));
  greeting += *nonce;
  if (!net::WriteAll(conn, greeting.data(), greeting.size(), deadline, stop_fd_).ok()) {
    return std::nullopt;
  }
  char hello[store::kHelloBytes];
  if (!net::ReadAll(conn, hello, sizeof(hello), deadline, stop_fd_).ok()) return std::nullopt;
  store::Session s;
  s.secret = options_.secret;
  s.server_nonce = *nonce;
  s.client_nonce.assign(hello, kNonceBytes);
  s.rank = GetU32(hello + kNonceBytes);
  const absl::string_view tag(hello + kNonceBytes + 4, kTagBytes);
  absl::Status refused;
  if (!TagsEqual(tag, store::HelloTag(s))) {
    refused = absl::PermissionDeniedError(
        "wrong job secret: this store belongs to another job, or OFS_JOB_SECRET differs "
        "between the ranks");
  } else {
    absl::MutexLock lock(&mu_);
    if (s.rank >= static_cast<uint32_t>(options_.world_size)) {
      refused = absl::PermissionDeniedError(
          absl::StrCat("rank ", s.rank, " is not in a world of ", options_.world_size));
    } else if (joined_.contains(static_cast<int>(s.rank))) {
      refused = absl::PermissionDeniedError(absl::StrCat("rank ", s.rank, " already joined"));
    } else {
      joined_.insert(static_cast<int>(s.rank));
      connected_.insert(static_cast<int>(s.rank));
      --pending_;
      if (static_cast<int>(joined_.size()) == options_.world_size) {
        const uint64_t one = 1;
        (void)!::write(joined_fd_, &one, sizeof(one));
      }
    }
  }
  std::string welcome;
  if (refused.ok()) {
    welcome.push_back('\0');
    welcome += store::WelcomeTag(s);
  } else {
    welcome = Reply(refused, "");
  }
  const bool sent = net::WriteAll(conn, welcome.data(), welcome.size(), deadline, stop_fd_).ok();
  if (!refused.ok()) return std::nullopt;
  if (!sent) {
    absl::MutexLock lock(&mu_);
    connected_.erase(static_cast<int>(s.rank));
    ++pending_;  // undone by Serve
    return std::nullopt;
  }
  return s;
}

void KvStoreServer::Serve(net::Socket conn, std::shared_ptr<std::atomic<bool>> done) {
  std::optional<store::Session> session = Authenticate(conn);
  if (session.has_value()) {
    for (uint64_t seq = 0; HandleOne(conn, *session, seq); ++seq) {
    }
  }
  conn.reset();
  {
    absl::MutexLock lock(&mu_);
    if (session.has_value()) {
      connected_.erase(static_cast<int>(session->rank));
      last_beat_.erase(static_cast<int>(session->rank));
    } else {
      --pending_;
    }
  }
  done->store(true);
}

bool KvStoreServer::HandleOne(const net::Socket& conn, const store::Session& session,
                              uint64_t seq) {
  // A rank's connection waits for its next request until the server stops.
  std::string frame(4, '\0');
  if (!net::ReadAll(conn, frame.data(), 4, absl::InfiniteFuture(), stop_fd_).ok()) return false;
  const uint32_t length = GetU32(frame.data());
  if (!store::CheckRequestLength(length).ok()) return false;
  frame.resize(4 + size_t{length} + kTagBytes);
  if (!net::ReadAll(conn, frame.data() + 4, frame.size() - 4,
                    absl::Now() + options_.request_timeout, stop_fd_)
           .ok()) {
    return false;
  }
  absl::StatusOr<store::Request> request = store::OpenRequest(session, seq, frame);
  if (!request.ok()) return false;  // not this job's, or garbled: drop the connection
  const absl::StatusOr<std::string> result = Apply(session, *std::move(request));
  const std::string out = Reply(result.status(), result.ok() ? *result : std::string());
  return net::WriteAll(conn, out.data(), out.size(), absl::Now() + options_.request_timeout,
                       stop_fd_)
      .ok();
}

absl::StatusOr<std::string> KvStoreServer::Apply(const store::Session& session,
                                                 store::Request r) {
  const absl::Time deadline = absl::Now() + absl::Milliseconds(std::max<int64_t>(0, r.timeout_ms));
  absl::MutexLock lock(&mu_);
  switch (r.op) {
    case store::Op::kSet: {
      auto it = values_.find(r.args[0]);
      const size_t old = it == values_.end() ? 0 : it->first.size() + it->second.size();
      const size_t added = r.args[0].size() + r.args[1].size();
      if (bytes_ - old + added > options_.max_store_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "the store holds ", bytes_, " bytes; this value would pass its limit of ",
            options_.max_store_bytes));
      }
      bytes_ = bytes_ - old + added;
      values_[r.args[0]] = std::move(r.args[1]);
      return std::string();
    }
    case store::Op::kBeat: {
      const absl::Time now = absl::Now();
      last_beat_[static_cast<int>(session.rank)] = now;
      if (!first_beat_) first_beat_ = now;
      const absl::Duration silence = absl::Milliseconds(r.timeout_ms);
      std::vector<std::string> silent;
      for (int rank : connected_) {
        auto it = last_beat_.find(rank);
        const absl::Duration quiet = now - (it == last_beat_.end() ? *first_beat_ : it->second);
        if (quiet > silence) {
          silent.push_back(absl::StrCat(rank, ":", absl::ToInt64Milliseconds(quiet)));
        }
      }
      std::sort(silent.begin(), silent.end());
      return absl::StrJoin(silent, ",");
    }
    case store::Op::kGet:
    case store::Op::kWait: {
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (stopping_) return true;
        for (const std::string& k : r.args) {
          if (!values_.contains(k)) return false;
        }
        return true;
      };
      mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
      for (const std::string& k : r.args) {
        if (values_.contains(k)) continue;
        if (stopping_) return absl::CancelledError("rendezvous store is shutting down");
        return absl::DeadlineExceededError(
            absl::StrCat("key '", k, "' did not appear within ", r.timeout_ms, " ms"));
      }
      return r.op == store::Op::kGet ? values_[r.args[0]] : std::string();
    }
  }
  return absl::InternalError("unreachable store op");
}

// ---------------------------------------------------------------- client --

namespace {

// One attempt: connect, then the handshake. `retry` is set when the store
// was busy or cut the connection before greeting (worth trying again).
absl::StatusOr<std::pair<net::Socket, store::Session>> Handshake(const std::string& host, int port,
                                                                const std::string& secret,
                                                                int rank, absl::Time deadline,
                                                                bool* retry) {
  *retry = false;
  OFS_ASSIGN_OR_RETURN(net::Socket s, net::Connect(host, port, deadline));
  char greeting[store::kGreetingBytes];
  if (absl::Status st = net::ReadAll(s, greeting, 1, deadline); !st.ok()) {
    *retry = st.code() == absl::StatusCode::kUnavailable;
    return st;
  }
  if (static_cast<uint8_t>(greeting[0]) == store::kBusy) {
    *retry = true;
    return absl::UnavailableError("the store is busy (too many connections)");
  }
  if (absl::Status st = net::ReadAll(s, greeting + 1, sizeof(greeting) - 1, deadline); !st.ok()) {
    *retry = st.code() == absl::StatusCode::kUnavailable;
    return st;
  }
  if (greeting[0] != 0 || std::memcmp(greeting + 1, store::kMagic, sizeof(store::kMagic)) != 0) {
    return absl::UnavailableError("what listens there is not a oneflow_sbp rendezvous store");
  }
  store::Session session;
  session.secret = secret;
  session.server_nonce.assign(greeting + 1 + sizeof(store::kMagic), kNonceBytes);
  OFS_ASSIGN_OR_RETURN(std::string nonce, RandomBytes(kNonceBytes));
  session.client_nonce = nonce;
  session.rank = static_cast<uint32_t>(rank);
  std::string hello = session.client_nonce;
  PutU32(hello, session.rank);
  hello += store::HelloTag(session);
  if (absl::Status st = net::WriteAll(s, hello.data(), hello.size(), deadline); !st.ok()) {
    return st;
  }
  uint8_t code = 0;
  if (absl::Status st = net::ReadAll(s, &code, 1, deadline); !st.ok()) return st;
  if (code != 0) {
    std::string message;
    if (absl::Status st = ReadString(s, &message, kMaxRefusalBytes, deadline, -1); !st.ok()) {
      return st;
    }
    return absl::Status(static_cast<absl::StatusCode>(code), message);
  }
  char tag[kTagBytes];
  if (absl::Status st = net::ReadAll(s, tag, sizeof(tag), deadline); !st.ok()) return st;
  if (!TagsEqual(absl::string_view(tag, sizeof(tag)), store::WelcomeTag(session))) {
    return absl::PermissionDeniedError(
        "the store answered with another job secret: another job serves this port");
  }
  return std::make_pair(std::move(s), std::move(session));
}

}  // namespace

absl::StatusOr<std::unique_ptr<KvStoreClient>> KvStoreClient::Connect(const std::string& host,
                                                                      int port,
                                                                      const std::string& secret,
                                                                      int rank,
                                                                      absl::Time deadline) {
  const std::string server = absl::StrCat(host, ":", port);
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("rendezvous store at ", server, " (rank ", rank,
                                               "): ", s.message()));
  };
  if (secret.empty()) return fail(absl::InvalidArgumentError("the job secret is empty"));
  if (rank < 0) return fail(absl::InvalidArgumentError("negative rank"));
  for (;;) {
    bool retry = false;
    auto joined = Handshake(host, port, secret, rank, deadline, &retry);
    if (joined.ok()) {
      const int cancel_fd = eventfd(0, EFD_CLOEXEC);
      if (cancel_fd < 0) return fail(absl::InternalError("eventfd failed"));
      return std::unique_ptr<KvStoreClient>(new KvStoreClient(
          std::move(joined->first), server, std::move(joined->second), cancel_fd));
    }
    if (!retry || absl::Now() + absl::Milliseconds(50) >= deadline) {
      return fail(retry ? absl::DeadlineExceededError(joined.status().message())
                        : joined.status());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

KvStoreClient::~KvStoreClient() { ::close(cancel_fd_); }

void KvStoreClient::Cancel() {
  const uint64_t one = 1;
  (void)!::write(cancel_fd_, &one, sizeof(one));
}

absl::StatusOr<std::string> KvStoreClient::Call(store::Op op, std::vector<std::string> args,
                                                absl::Time deadline) {
  store::Request r;
  r.op = op;
  r.args = std::move(args);
  const absl::Duration left = deadline - absl::Now();
  r.timeout_ms = deadline == absl::InfiniteFuture()
                     ? int64_t{1} << 40
                     : std::max<int64_t>(0, absl::ToInt64Milliseconds(left));
  return CallRaw(r, deadline);
}

absl::StatusOr<std::string> KvStoreClient::CallRaw(const store::Request& r, absl::Time deadline) {
  const std::string body = store::EncodeBody(r);
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("rendezvous store at ", server_, ": ", s.message()));
  };
  if (body.size() > store::kMaxRequestBytes) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("a request of ", body.size(), " bytes is over the store's limit of ",
                     store::kMaxRequestBytes)));
  }
  absl::MutexLock lock(&mu_);
  const std::string frame = store::SealRequest(session_, seq_++, body);
  if (absl::Status s = net::WriteAll(socket_, frame.data(), frame.size(), deadline, cancel_fd_);
      !s.ok()) {
    return fail(s);
  }
  // The server answers by the deadline; allow it a moment to say so.
  const absl::Time reply_deadline = deadline + absl::Seconds(2);
  uint8_t code = 0;
  if (absl::Status s = net::ReadAll(socket_, &code, 1, reply_deadline, cancel_fd_); !s.ok()) {
    return fail(s);
  }
  std::string reply;
  if (absl::Status s =
          ReadString(socket_, &reply, store::kMaxResponseBytes, reply_deadline, cancel_fd_);
      !s.ok()) {
    return fail(s);
  }
  if (code != 0) return fail(absl::Status(static_cast<absl::StatusCode>(code), reply));
  return reply;
}

absl::Status KvStoreClient::Set(const std::string& key, const std::string& value,
                                absl::Time deadline) {
  return Call(store::Op::kSet, {key, value}, deadline).status();
}

absl::StatusOr<std::string> KvStoreClient::Get(const std::string& key, absl::Time deadline) {
  return Call(store::Op::kGet, {key}, deadline);
}

absl::Status KvStoreClient::Wait(absl::Span<const std::string> keys, absl::Time deadline) {
  return Call(store::Op::kWait, std::vector<std::string>(keys.begin(), keys.end()), deadline)
      .status();
}

absl::StatusOr<std::string> KvStoreClient::Beat(absl::Duration silence, absl::Time deadline) {
  store::Request r;
  r.op = store::Op::kBeat;
  r.timeout_ms = absl::ToInt64Milliseconds(silence);
  return CallRaw(r, deadline);
}

}  // namespace oneflow_sbp::comm
