// A small key-value store over TCP for rendezvous, in the role of torch's
// TCPStore (Gloo 2022 has none): rank 0 serves it on MASTER_ADDR:MASTER_PORT,
// every rank (rank 0 included) is a client. Only clients that prove they
// hold the job's secret get in (job_auth.h; the protocol is in
// store_protocol.h), and the store stays bounded whatever connects to it.
//
// Example:
//   KvStoreOptions o;  o.secret = secret;  o.world_size = 2;
//   auto server = KvStoreServer::Start("127.0.0.1", 29500, o);          // rank 0
//   auto client = KvStoreClient::Connect("127.0.0.1", 29500, secret, /*rank=*/1, deadline);
//   client->Set("addr/1", bytes, deadline);
//   absl::StatusOr<std::string> v = client->Get("addr/0", deadline);  // waits for the key
//
// Keys are write-once in practice (a second Set replaces the value). Get
// and Wait block on the server until the keys exist or the deadline,
// without polling. Every call has a deadline; a dead server or client
// shows up as kUnavailable, a missing key as kDeadlineExceeded.
//
// Limits (docs/COMM.md, "The rendezvous store"):
//   - each rank 0 .. world_size-1 joins once; when all have, the store
//     closes its listening socket: nobody can connect any more;
//   - at most `max_pending` connections that have not yet authenticated are
//     served at once, each for at most `handshake_timeout`; more are told
//     "busy" and closed (a rank's client retries until its deadline);
//   - nothing is allocated for a request before its client authenticated,
//     and a request is at most store::kMaxRequestBytes (checked before its
//     bytes are read); all values together at most max_store_bytes;
//   - one thread per served connection: at most world_size + max_pending;
//   - when accept fails for want of descriptors it retries every 100 ms
//     instead of spinning.
#ifndef COMM_KV_STORE_H_
#define COMM_KV_STORE_H_

#include <atomic>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "comm/net.h"
#include "comm/store_protocol.h"

namespace oneflow_sbp::comm {

struct KvStoreOptions {
  // The job secret (job_auth.h); required.
  std::string secret;
  // Ranks 0 .. world_size-1 join, once each.
  int world_size = 1;
  // Connections not yet authenticated that are served at once.
  int max_pending = 8;
  // How long a new connection has to authenticate.
  absl::Duration handshake_timeout = absl::Seconds(5);
  // How long the rest of a request may take once its first byte arrived.
  absl::Duration request_timeout = absl::Seconds(10);
  // All keys and values together.
  size_t max_store_bytes = size_t{64} << 20;
};

class KvStoreServer {
 public:
  // Listens on host:port (port 0: a free port, see port()); host is bound
  // as given (an empty host would mean every interface). kInvalidArgument
  // for bad options; kUnavailable naming the port when it is in use.
  static absl::StatusOr<std::unique_ptr<KvStoreServer>> Start(const std::string& host, int port,
                                                              const KvStoreOptions& options);

  // Stops at once (pending Get/Wait calls fail with kCancelled) and joins
  // every thread.
  ~KvStoreServer();

  int port() const { return port_; }

  // Waits until every rank that joined has disconnected, or `drain` has
  // passed, then stops. Connections that never authenticated are not
  // waited for. Rank 0 calls this before going away so that clients still
  // reading their last answer are not cut off.
  void Shutdown(absl::Duration drain);

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  KvStoreServer(net::Socket listener, int port, int stop_fd, int joined_fd,
                KvStoreOptions options);
  void AcceptLoop();
  void ReapWorkers();
  void Serve(net::Socket conn, std::shared_ptr<std::atomic<bool>> done);
  // The handshake: the connection's session once the client proved the
  // secret and its rank may join; nullopt when the connection closes.
  std::optional<store::Session> Authenticate(const net::Socket& conn);
  // Answers one request; false when the connection should close.
  bool HandleOne(const net::Socket& conn, const store::Session& session, uint64_t seq);
  absl::StatusOr<std::string> Apply(const store::Session& session, store::Request request);
  void Stop();

  net::Socket listener_;
  const int port_;
  // Eventfds: readable when stopping (every wait polls it), and when every
  // rank has joined (the acceptor stops accepting).
  const int stop_fd_;
  const int joined_fd_;
  const KvStoreOptions options_;
  std::thread acceptor_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int pending_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<int> joined_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int> connected_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Heartbeats: when each connected rank last beat, and the first beat.
  absl::flat_hash_map<int, absl::Time> last_beat_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> first_beat_ ABSL_GUARDED_BY(mu_);
  std::list<Worker> workers_ ABSL_GUARDED_BY(mu_);
};

// One connection to the store; calls are serialised (thread-safe).
class KvStoreClient {
 public:
  // Connects as `rank` and proves it holds `secret`; retries until the
  // server listens and has room, or `deadline` passes (kDeadlineExceeded).
  // kPermissionDenied at once when the store has another secret (another
  // job on this port) or the rank already joined.
  static absl::StatusOr<std::unique_ptr<KvStoreClient>> Connect(const std::string& host, int port,
                                                                const std::string& secret,
                                                                int rank, absl::Time deadline);
  ~KvStoreClient();

  absl::Status Set(const std::string& key, const std::string& value, absl::Time deadline);
  // Waits for `key` to exist, then returns its value.
  absl::StatusOr<std::string> Get(const std::string& key, absl::Time deadline);
  // Waits for every key to exist.
  absl::Status Wait(absl::Span<const std::string> keys, absl::Time deadline);
  // Records that this rank is alive, and returns the connected ranks that
  // have not beaten for more than `silence` (the first beat of any rank
  // counts as the others' start), as "rank:silent_ms" joined by ','.
  absl::StatusOr<std::string> Beat(absl::Duration silence, absl::Time deadline);

  // Makes the call in flight, and every later one, fail with kCancelled.
  void Cancel();

  // The numeric address of this side of the connection: the interface that
  // reaches the server (used to advertise this rank to its peers).
  absl::StatusOr<std::string> LocalAddress() const { return net::LocalAddress(socket_); }

 private:
  KvStoreClient(net::Socket socket, std::string server, store::Session session, int cancel_fd)
      : socket_(std::move(socket)),
        server_(std::move(server)),
        session_(std::move(session)),
        cancel_fd_(cancel_fd) {}
  absl::StatusOr<std::string> Call(store::Op op, std::vector<std::string> args,
                                   absl::Time deadline);
  absl::StatusOr<std::string> CallRaw(const store::Request& r, absl::Time deadline);

  net::Socket socket_;
  const std::string server_;
  const store::Session session_;
  const int cancel_fd_;
  absl::Mutex mu_;
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace oneflow_sbp::comm

#endif  // COMM_KV_STORE_H_
