// A minimal key-value store over TCP for rendezvous, in the role of
// torch's TCPStore (Gloo 2022 has none): rank 0 serves it on
// MASTER_ADDR:MASTER_PORT, every rank (rank 0 included) is a client.
//
// Example:
//   auto server = KvStoreServer::Start("127.0.0.1", 29500);        // rank 0
//   auto client = KvStoreClient::Connect("127.0.0.1", 29500, deadline);
//   client->Set("addr/1", bytes, deadline);
//   absl::StatusOr<std::string> v = client->Get("addr/0", deadline);  // waits for the key
//
// Keys are write-once in practice (a second Set replaces the value). Get
// and Wait block on the server until the keys exist or the deadline,
// without polling. Every call has a deadline; a dead server or client
// shows up as kUnavailable, a missing key as kDeadlineExceeded.
//
// Wire format (both directions little-endian, the machines' own order):
//   request  = u8 op, u32 n, n x (u32 length, bytes), i64 timeout_ms
//   response = u8 status code, u32 length, bytes (value or error message)
// with op 1 = set {key, value}, 2 = get {key}, 3 = wait {keys...}.
#ifndef RUNTIME_COMM_KV_STORE_H_
#define RUNTIME_COMM_KV_STORE_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "runtime/comm/net.h"

namespace oneflow_sbp::comm {

class KvStoreServer {
 public:
  // Listens on host:port (port 0: a free port, see port()). One thread
  // accepts; one thread serves each connection.
  static absl::StatusOr<std::unique_ptr<KvStoreServer>> Start(const std::string& host, int port);

  // Stops at once (pending Get/Wait calls fail with kCancelled) and joins
  // every thread.
  ~KvStoreServer();

  int port() const { return port_; }

  // Waits until every client that connected has disconnected, or `drain`
  // has passed, then stops. Rank 0 calls this before going away so that
  // clients still reading their last answer are not cut off.
  void Shutdown(absl::Duration drain);

 private:
  KvStoreServer(net::Socket listener, int port, int stop_fd);
  void AcceptLoop();
  void Serve(net::Socket conn);
  // Answers one request; false when the connection should close.
  bool HandleOne(const net::Socket& conn);
  void Stop();

  net::Socket listener_;
  const int port_;
  // An eventfd that becomes readable when stopping; every wait polls it.
  const int stop_fd_;
  std::thread acceptor_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int open_connections_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> servers_ ABSL_GUARDED_BY(mu_);
};

// One connection to the store; calls are serialised (thread-safe).
class KvStoreClient {
 public:
  // Retries until the server listens or `deadline` passes.
  static absl::StatusOr<std::unique_ptr<KvStoreClient>> Connect(const std::string& host, int port,
                                                                absl::Time deadline);

  absl::Status Set(const std::string& key, const std::string& value, absl::Time deadline);
  // Waits for `key` to exist, then returns its value.
  absl::StatusOr<std::string> Get(const std::string& key, absl::Time deadline);
  // Waits for every key to exist.
  absl::Status Wait(absl::Span<const std::string> keys, absl::Time deadline);

  // The numeric address of this side of the connection: the interface that
  // reaches the server (used to advertise this rank to its peers).
  absl::StatusOr<std::string> LocalAddress() const { return net::LocalAddress(socket_); }

 private:
  explicit KvStoreClient(net::Socket socket, std::string server)
      : socket_(std::move(socket)), server_(std::move(server)) {}
  absl::StatusOr<std::string> Call(uint8_t op, absl::Span<const std::string> args,
                                   absl::Time deadline);

  net::Socket socket_;
  const std::string server_;
  absl::Mutex mu_;
};

}  // namespace oneflow_sbp::comm

#endif  // RUNTIME_COMM_KV_STORE_H_
