#include "runtime/comm/kv_store.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::comm {
namespace {

enum Op : uint8_t { kSet = 1, kGet = 2, kWait = 3 };

// Bounds on what a request may ask the server to allocate, so that a
// stray connection sending garbage cannot exhaust memory.
constexpr uint32_t kMaxArgs = 1 << 16;
constexpr uint32_t kMaxLength = 64u << 20;

// How long the server waits for the rest of a request once it started.
constexpr absl::Duration kRequestBodyTimeout = absl::Seconds(30);

void PutU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

template <typename T>
absl::Status ReadValue(const net::Socket& s, T* v, absl::Time deadline, int cancel_fd) {
  return net::ReadAll(s, v, sizeof(T), deadline, cancel_fd);
}

absl::Status ReadString(const net::Socket& s, std::string* out, absl::Time deadline,
                        int cancel_fd) {
  uint32_t len = 0;
  if (absl::Status st = ReadValue(s, &len, deadline, cancel_fd); !st.ok()) return st;
  if (len > kMaxLength) {
    return absl::InvalidArgumentError(absl::StrCat("store message of ", len, " bytes is too long"));
  }
  out->resize(len);
  return net::ReadAll(s, out->data(), len, deadline, cancel_fd);
}

}  // namespace

// ---------------------------------------------------------------- server --

absl::StatusOr<std::unique_ptr<KvStoreServer>> KvStoreServer::Start(const std::string& host,
                                                                    int port) {
  absl::StatusOr<net::Socket> listener = net::Listen(host, port);
  if (!listener.ok()) {
    return absl::Status(listener.status().code(),
                        absl::StrCat("rendezvous store: ", listener.status().message()));
  }
  absl::StatusOr<int> bound = net::LocalPort(*listener);
  if (!bound.ok()) return bound.status();
  const int stop_fd = eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) return absl::InternalError("rendezvous store: eventfd failed");
  std::unique_ptr<KvStoreServer> server(
      new KvStoreServer(*std::move(listener), *bound, stop_fd));
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

KvStoreServer::KvStoreServer(net::Socket listener, int port, int stop_fd)
    : listener_(std::move(listener)), port_(port), stop_fd_(stop_fd) {}

KvStoreServer::~KvStoreServer() {
  Stop();
  ::close(stop_fd_);
}

void KvStoreServer::Shutdown(absl::Duration drain) {
  absl::MutexLock lock(&mu_);
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_connections_ == 0; };
  mu_.AwaitWithTimeout(absl::Condition(&drained), drain);
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
  // The acceptor has exited, so no server thread is added any more.
  std::vector<std::thread> servers;
  {
    absl::MutexLock lock(&mu_);
    servers.swap(servers_);
  }
  for (std::thread& t : servers) t.join();
}

void KvStoreServer::AcceptLoop() {
  for (;;) {
    absl::StatusOr<net::Socket> conn = net::Accept(listener_, stop_fd_, absl::InfiniteFuture());
    if (!conn.ok()) {
      if (conn.status().code() == absl::StatusCode::kCancelled) return;
      continue;  // a failed accept affects only that connection
    }
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    ++open_connections_;
    servers_.emplace_back(
        [this, c = std::make_shared<net::Socket>(*std::move(conn))] { Serve(std::move(*c)); });
  }
}

void KvStoreServer::Serve(net::Socket conn) {
  while (HandleOne(conn)) {
  }
  conn.reset();
  absl::MutexLock lock(&mu_);
  --open_connections_;
}

bool KvStoreServer::HandleOne(const net::Socket& conn) {
  // Idle connections wait for their next request until the server stops.
  uint8_t op = 0;
  if (!net::ReadAll(conn, &op, 1, absl::InfiniteFuture(), stop_fd_).ok()) return false;
  const absl::Time body_deadline = absl::Now() + kRequestBodyTimeout;
  uint32_t n = 0;
  if (!ReadValue(conn, &n, body_deadline, stop_fd_).ok() || n > kMaxArgs) return false;
  std::vector<std::string> args(n);
  for (std::string& a : args) {
    if (!ReadString(conn, &a, body_deadline, stop_fd_).ok()) return false;
  }
  int64_t timeout_ms = 0;
  if (!ReadValue(conn, &timeout_ms, body_deadline, stop_fd_).ok()) return false;
  const absl::Time deadline = absl::Now() + absl::Milliseconds(std::max<int64_t>(0, timeout_ms));

  absl::Status status;
  std::string reply;
  if ((op == kSet && n != 2) || (op == kGet && n != 1) || (op != kSet && op != kGet && op != kWait)) {
    status = absl::InvalidArgumentError(absl::StrCat("bad store request: op ", op, " with ", n,
                                                     " arguments"));
  } else if (op == kSet) {
    absl::MutexLock lock(&mu_);
    values_[args[0]] = std::move(args[1]);
  } else {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (stopping_) return true;
      for (const std::string& k : args) {
        if (!values_.contains(k)) return false;
      }
      return true;
    };
    mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
    std::string missing;
    for (const std::string& k : args) {
      if (!values_.contains(k)) missing = k;
    }
    if (!missing.empty()) {
      status = stopping_ ? absl::CancelledError("rendezvous store is shutting down")
                         : absl::DeadlineExceededError(absl::StrCat(
                               "key '", missing, "' did not appear within ", timeout_ms, " ms"));
    } else if (op == kGet) {
      reply = values_[args[0]];
    }
  }
  const std::string& body = status.ok() ? reply : std::string(status.message());
  std::string out;
  out.push_back(static_cast<char>(status.code()));
  PutU32(out, static_cast<uint32_t>(body.size()));
  out += body;
  return net::WriteAll(conn, out.data(), out.size(), absl::Now() + kRequestBodyTimeout, stop_fd_)
      .ok();
}

// ---------------------------------------------------------------- client --

absl::StatusOr<std::unique_ptr<KvStoreClient>> KvStoreClient::Connect(const std::string& host,
                                                                      int port,
                                                                      absl::Time deadline) {
  absl::StatusOr<net::Socket> s = net::Connect(host, port, deadline);
  if (!s.ok()) {
    return absl::Status(s.status().code(),
                        absl::StrCat("rendezvous store: ", s.status().message()));
  }
  return std::unique_ptr<KvStoreClient>(
      new KvStoreClient(*std::move(s), absl::StrCat(host, ":", port)));
}

absl::StatusOr<std::string> KvStoreClient::Call(uint8_t op, absl::Span<const std::string> args,
                                                absl::Time deadline) {
  std::string req;
  req.push_back(static_cast<char>(op));
  PutU32(req, static_cast<uint32_t>(args.size()));
  for (const std::string& a : args) {
    PutU32(req, static_cast<uint32_t>(a.size()));
    req += a;
  }
  const absl::Duration left = deadline - absl::Now();
  const int64_t timeout_ms =
      deadline == absl::InfiniteFuture() ? int64_t{1} << 40
                                         : std::max<int64_t>(0, absl::ToInt64Milliseconds(left));
  req.append(reinterpret_cast<const char*>(&timeout_ms), 8);

  absl::MutexLock lock(&mu_);
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("rendezvous store at ", server_, ": ", s.message()));
  };
  if (absl::Status s = net::WriteAll(socket_, req.data(), req.size(), deadline); !s.ok()) {
    return fail(s);
  }
  // The server answers by the deadline; allow it a moment to say so.
  const absl::Time reply_deadline = deadline + absl::Seconds(2);
  uint8_t code = 0;
  if (absl::Status s = net::ReadAll(socket_, &code, 1, reply_deadline); !s.ok()) return fail(s);
  std::string body;
  if (absl::Status s = ReadString(socket_, &body, reply_deadline, -1); !s.ok()) return fail(s);
  if (code != 0) return fail(absl::Status(static_cast<absl::StatusCode>(code), body));
  return body;
}

absl::Status KvStoreClient::Set(const std::string& key, const std::string& value,
                                absl::Time deadline) {
  const std::string args[] = {key, value};
  return Call(kSet, args, deadline).status();
}

absl::StatusOr<std::string> KvStoreClient::Get(const std::string& key, absl::Time deadline) {
  return Call(kGet, {&key, 1}, deadline);
}

absl::Status KvStoreClient::Wait(absl::Span<const std::string> keys, absl::Time deadline) {
  return Call(kWait, keys, deadline).status();
}

}  // namespace oneflow_sbp::comm
