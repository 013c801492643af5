// Small TCP helpers for the rendezvous store (kv_store.h) and the launcher:
// blocking sockets whose every wait has a deadline (poll), and errors as
// absl::Status naming the address. IPv4 and IPv6, numeric or named hosts.
//
// Example:
//   absl::StatusOr<net::Socket> s = net::Connect("127.0.0.1", 29500, absl::Now() + absl::Seconds(5));
//   if (s.ok()) status = net::WriteAll(*s, "hi", 2, deadline);
#ifndef COMM_NET_H_
#define COMM_NET_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace oneflow_sbp::comm::net {

// An owned file descriptor (closed on destruction); move-only.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { reset(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// A listening socket on host:port; port 0 picks a free port (see
// LocalPort). SO_REUSEADDR is set so a restarted server can take the port
// at once. kUnavailable if the address cannot be resolved or bound.
absl::StatusOr<Socket> Listen(const std::string& host, int port, int backlog = 128);

// Connects to host:port, retrying every 50 ms while the server is not yet
// listening (refused, unreachable) until `deadline`: ranks may start before
// rank 0. kDeadlineExceeded with the last error once the deadline passes.
absl::StatusOr<Socket> Connect(const std::string& host, int port, absl::Time deadline);

// Waits for a connection on `listener` or for `cancel_fd` (if >= 0) to
// become readable (then kCancelled), or the deadline.
absl::StatusOr<Socket> Accept(const Socket& listener, int cancel_fd, absl::Time deadline);

// Writes / reads exactly `n` bytes. kDeadlineExceeded at the deadline,
// kCancelled when `cancel_fd` (if >= 0) becomes readable, kUnavailable
// when the peer closed the connection or the socket failed.
absl::Status WriteAll(const Socket& s, const void* data, size_t n, absl::Time deadline,
                      int cancel_fd = -1);
absl::Status ReadAll(const Socket& s, void* data, size_t n, absl::Time deadline,
                     int cancel_fd = -1);

// The local port / numeric local address of a bound or connected socket
// ("127.0.0.1", "::1", ...). For a connected socket the address is the
// interface that reaches the peer.
absl::StatusOr<int> LocalPort(const Socket& s);
absl::StatusOr<std::string> LocalAddress(const Socket& s);

// A port on `host` that was free a moment ago (bound to port 0, then
// released). Another process may take it before it is used; rendezvous
// fails cleanly (bind error) if that happens.
absl::StatusOr<int> PickFreePort(const std::string& host);

}  // namespace oneflow_sbp::comm::net

#endif  // COMM_NET_H_
