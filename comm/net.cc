#include "comm/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm::net {
namespace {

std::string Addr(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

absl::Status Errno(absl::StatusCode code, absl::string_view what, const std::string& where) {
  return absl::Status(code, absl::StrCat(what, " ", where, ": ", std::strerror(errno)));
}

struct AddrInfoDeleter {
  void operator()(addrinfo* p) const { freeaddrinfo(p); }
};
using AddrInfo = std::unique_ptr<addrinfo, AddrInfoDeleter>;

absl::StatusOr<AddrInfo> Resolve(const std::string& host, int port, bool passive) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", port, " is out of range"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &result);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", Addr(host, port), ": ", gai_strerror(rc)));
  }
  return AddrInfo(result);
}

// Waits until `fd` is ready for `events`, `cancel_fd` is readable, or the
// deadline. EINTR restarts the wait with the remaining time.
absl::Status WaitFd(int fd, short events, int cancel_fd, absl::Time deadline,
                    absl::string_view what) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {cancel_fd, POLLIN, 0}};
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat("deadline passed while waiting to ", what));
    }
    const int ms = deadline == absl::InfiniteFuture()
                       ? -1
                       : static_cast<int>(std::min<int64_t>(
                             absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
                             1 << 30));
    const int rc = poll(fds, cancel_fd >= 0 ? 2 : 1, ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Errno(absl::StatusCode::kInternal, "poll while waiting to", std::string(what));
    }
    if (cancel_fd >= 0 && (fds[1].revents & POLLIN)) {
      return absl::CancelledError(absl::StrCat("cancelled while waiting to ", what));
    }
    if (fds[0].revents != 0) return absl::OkStatus();
  }
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Socket::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

absl::StatusOr<Socket> Listen(const std::string& host, int port, int backlog) {
  OFS_ASSIGN_OR_RETURN(AddrInfo info, Resolve(host, port, /*passive=*/true));
  absl::Status last = absl::UnavailableError(absl::StrCat("no address for ", Addr(host, port)));
  for (addrinfo* a = info.get(); a != nullptr; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      last = Errno(absl::StatusCode::kUnavailable, "socket for", Addr(host, port));
      continue;
    }
    const int on = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      last = Errno(absl::StatusCode::kUnavailable, "cannot bind", Addr(host, port));
      continue;
    }
    if (::listen(s.fd(), backlog) != 0) {
      last = Errno(absl::StatusCode::kUnavailable, "cannot listen on", Addr(host, port));
      continue;
    }
    return s;
  }
  return last;
}

absl::StatusOr<Socket> Connect(const std::string& host, int port, absl::Time deadline) {
  absl::Status last = absl::DeadlineExceededError("no attempt made");
  for (;;) {
    OFS_ASSIGN_OR_RETURN(AddrInfo info, Resolve(host, port, /*passive=*/false));
    for (addrinfo* a = info.get(); a != nullptr; a = a->ai_next) {
      Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        a->ai_protocol));
      if (!s.valid()) continue;
      int rc = ::connect(s.fd(), a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        absl::Status w = WaitFd(s.fd(), POLLOUT, -1, deadline, "connect to " + Addr(host, port));
        if (!w.ok()) {
          last = w;
          continue;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
        errno = err;
        rc = err == 0 ? 0 : -1;
      }
      if (rc != 0) {
        last = Errno(absl::StatusCode::kUnavailable, "cannot connect to", Addr(host, port));
        continue;
      }
      // Back to blocking mode: every read and write below polls first.
      fcntl(s.fd(), F_SETFL, fcntl(s.fd(), F_GETFL) & ~O_NONBLOCK);
      const int on = 1;
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      return s;
    }
    if (absl::Now() + absl::Milliseconds(50) >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("gave up connecting to ", Addr(host, port), ": ", last.message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

absl::StatusOr<Socket> Accept(const Socket& listener, int cancel_fd, absl::Time deadline) {
  for (;;) {
    absl::Status w = WaitFd(listener.fd(), POLLIN, cancel_fd, deadline, "accept a connection");
    OFS_RETURN_IF_ERROR(w);
    Socket s(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (s.valid()) {
      const int on = 1;
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      return s;
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
      return Errno(absl::StatusCode::kUnavailable, "accept on", "listener");
    }
  }
}

namespace {

// Moves exactly `n` bytes with `io` (a non-blocking send or recv that
// returns what it moved), polling for `events` before each attempt.
template <typename Io>
absl::Status TransferAll(const Socket& s, char* p, size_t n, short events, absl::Time deadline,
                         int cancel_fd, absl::string_view what, Io io) {
  while (n > 0) {
    absl::Status w = WaitFd(s.fd(), events, cancel_fd, deadline, what);
    OFS_RETURN_IF_ERROR(w);
    const ssize_t rc = io(s.fd(), p, n);
    if (rc == 0 && events == POLLIN) return absl::UnavailableError("connection closed by peer");
    if (rc < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Errno(absl::StatusCode::kUnavailable, what, "peer");
    }
    p += rc;
    n -= static_cast<size_t>(rc);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteAll(const Socket& s, const void* data, size_t n, absl::Time deadline,
                      int cancel_fd) {
  return TransferAll(s, static_cast<char*>(const_cast<void*>(data)), n, POLLOUT, deadline,
                     cancel_fd, "write", [](int fd, char* p, size_t len) {
                       return ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                     });
}

absl::Status ReadAll(const Socket& s, void* data, size_t n, absl::Time deadline, int cancel_fd) {
  return TransferAll(s, static_cast<char*>(data), n, POLLIN, deadline, cancel_fd, "read",
                     [](int fd, char* p, size_t len) { return ::recv(fd, p, len, MSG_DONTWAIT); });
}

absl::StatusOr<int> LocalPort(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Errno(absl::StatusCode::kInternal, "getsockname", "socket");
  }
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

absl::StatusOr<std::string> LocalAddress(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Errno(absl::StatusCode::kInternal, "getsockname", "socket");
  }
  char host[NI_MAXHOST];
  const int rc = getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), nullptr,
                             0, NI_NUMERICHOST);
  if (rc != 0) return absl::InternalError(absl::StrCat("getnameinfo: ", gai_strerror(rc)));
  return std::string(host);
}

absl::StatusOr<int> PickFreePort(const std::string& host) {
  OFS_ASSIGN_OR_RETURN(Socket s, Listen(host, 0, 1));
  return LocalPort(s);
}

}  // namespace oneflow_sbp::comm::net
