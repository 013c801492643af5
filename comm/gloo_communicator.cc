#include "comm/gloo_communicator.h"

#include <signal.h>

#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include <functional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "comm/collectives.h"
#include "comm/kv_store.h"
#include "comm/reduce_op.h"
#include "comm/transport.h"
#include "gloo/common/error.h"
#include "gloo/common/logging.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"

namespace oneflow_sbp::comm {
namespace {

// How long rank 0 keeps the store up for clients still reading their last
// answer when its communicator is destroyed.
constexpr absl::Duration kStoreDrain = absl::Seconds(5);

std::chrono::milliseconds Millis(absl::Duration d) {
  return std::chrono::milliseconds(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1)))));
}

// gloo::rendezvous::Store over our TCP store. Gloo expects its store to
// throw on failure; the status is kept so the caller can report the real
// code (a deadline is not a dead server).
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(KvStoreClient* client, absl::Time deadline) : client_(client), deadline_(deadline) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    Check(client_->Set(key, std::string(data.begin(), data.end()), deadline_));
  }
  std::vector<char> get(const std::string& key) override {
    absl::StatusOr<std::string> v = client_->Get(key, deadline_);
    Check(v.status());
    return std::vector<char>(v->begin(), v->end());
  }
  void wait(const std::vector<std::string>& keys) override {
    Check(client_->Wait(keys, deadline_));
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    Check(client_->Wait(keys, std::min(deadline_, absl::Now() + absl::FromChrono(timeout))));
  }

  const absl::Status& error() const { return error_; }

 private:
  void Check(const absl::Status& s) {
    if (s.ok()) return;
    error_ = s;
    throw gloo::IoException(std::string(s.message()));
  }

  KvStoreClient* const client_;
  const absl::Time deadline_;
  absl::Status error_;
};

// Beats every timeout / 4 through this rank's store connection; on a
// silent peer (or a silent store) calls `on_silent` once and stops.
class Heartbeat {
 public:
  Heartbeat(std::unique_ptr<KvStoreClient> client, absl::Duration timeout,
            std::function<void(const absl::Status&)> on_silent)
      : client_(std::move(client)), timeout_(timeout), on_silent_(std::move(on_silent)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Heartbeat() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    client_->Cancel();
    thread_.join();
  }

  // Asks the store now and waits up to `within` for its answer: the
  // silent ranks it names, or empty.
  std::string Verdict(absl::Duration within) {
    absl::MutexLock lock(&mu_);
    if (!verdict_.empty() || done_) return verdict_;
    const int64_t want = beats_ + 1;
    probe_ = true;
    auto answered = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return beats_ >= want || done_ || !verdict_.empty();
    };
    mu_.AwaitWithTimeout(absl::Condition(&answered), within);
    return verdict_;
  }

 private:
  void Loop() {
    const absl::Duration period = std::max(timeout_ / 4, absl::Milliseconds(20));
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || probe_; };
        mu_.AwaitWithTimeout(absl::Condition(&woken), period);
        if (stop_) break;
        probe_ = false;
      }
      absl::StatusOr<std::string> silent = client_->Beat(timeout_, absl::Now() + timeout_);
      std::string verdict;
      if (silent.ok() && !silent->empty()) {
        verdict = DescribeSilent(*silent);
      } else if (silent.status().code() == absl::StatusCode::kDeadlineExceeded) {
        verdict = absl::StrCat("rank 0 (it serves the rendezvous store) stopped answering: no "
                               "heartbeat reply within ",
                               absl::FormatDuration(timeout_));
      } else if (!silent.ok()) {
        break;  // cancelled, or the store has gone (rank 0 ended): nothing to report
      }
      if (!verdict.empty()) {
        {
          absl::MutexLock lock(&mu_);
          verdict_ = verdict;
        }
        on_silent_(absl::UnavailableError(verdict));
        break;
      }
      absl::MutexLock lock(&mu_);
      ++beats_;
    }
    absl::MutexLock lock(&mu_);
    done_ = true;
  }

  // "2:10234,3:10500" -> "rank 2 stopped answering: no heartbeat for 10.2s; rank 3 ..."
  std::string DescribeSilent(const std::string& list) const {
    std::vector<std::string> parts;
    for (absl::string_view item : absl::StrSplit(list, ',')) {
      std::vector<std::string> f = absl::StrSplit(item, ':');
      int64_t ms = 0;
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &ms)) continue;
      parts.push_back(absl::StrCat("rank ", f[0], " stopped answering: no heartbeat for ",
                                   absl::FormatDuration(absl::Milliseconds(ms)),
                                   " (heartbeat timeout ", absl::FormatDuration(timeout_), ")"));
    }
    return absl::StrJoin(parts, "; ");
  }

  const std::unique_ptr<KvStoreClient> client_;
  const absl::Duration timeout_;
  const std::function<void(const absl::Status&)> on_silent_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool probe_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  int64_t beats_ ABSL_GUARDED_BY(mu_) = 0;
  std::string verdict_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

class GlooTransport : public Transport {
 public:
  GlooTransport(std::shared_ptr<gloo::transport::Device> device,
                std::shared_ptr<gloo::rendezvous::Context> context,
                std::unique_ptr<KvStoreServer> server)
      : device_(std::move(device)), context_(std::move(context)), server_(std::move(server)) {}

  // Starts the heartbeat over `client` (this rank's store connection).
  void StartHeartbeat(std::unique_ptr<KvStoreClient> client, absl::Duration timeout) {
    heartbeat_ = std::make_unique<Heartbeat>(std::move(client), timeout,
                                             [this](const absl::Status& s) { Abort(s); });
  }

  ~GlooTransport() override {
    // The heartbeat first (it may call Abort), then the pairs (peers see an
    // orderly close), then the store. After a failure the store closes at
    // once: the job is over, and a peer whose host went away never
    // disconnects, so waiting for it would hold back this rank's error.
    heartbeat_.reset();
    const bool failed = !health().ok();
    context_.reset();
    device_.reset();
    if (server_ != nullptr) server_->Shutdown(failed ? absl::ZeroDuration() : kStoreDrain);
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

  absl::Status Exchange(absl::Span<const P2POp> ops, absl::Time deadline) override;

  // Reducing receives are reduced segment by segment as they arrive
  // (Exchange), so the collectives hand them to the transport.
  bool FusesReduce() const override { return true; }

  void Abort(const absl::Status& reason) override {
    {
      absl::MutexLock lock(&mu_);
      if (aborted_.ok()) {
        aborted_ = absl::AbortedError(
            absl::StrCat("gloo rank ", rank(), " aborted: ", reason.message()));
      }
      // Wakes this process's waiting threads; waits not yet started return
      // false at once (Gloo keeps the flag).
      for (const Waiting& w : waiting_) {
        if (w.send) {
          w.buffer->abortWaitSend();
        } else {
          w.buffer->abortWaitRecv();
        }
      }
    }
    CloseConnections();
  }

  absl::Status health() const override {
    absl::MutexLock lock(&mu_);
    return aborted_;
  }

 private:
  struct Waiting {
    gloo::transport::UnboundBuffer* buffer;
    bool send;
  };
  // One piece of one op's message on the wire: where it is sent from or
  // lands (for a reducing receive, possibly a landing area apart from the
  // op's data), at which offset of the message.
  struct Segment {
    size_t op;
    char* data;
    int64_t offset;
    int64_t bytes;
  };
  // How a message is cut on the wire: big enough that posting costs little,
  // small enough that the first segment's reduction starts early (1 MiB is
  // a whole number of elements of every dtype).
  static constexpr int64_t kSegmentBytes = int64_t{1} << 20;

  // Hard-closes every pair (idempotent). Peers waiting on this rank fail at
  // once; and once it returns, Gloo's event loop no longer reads into or
  // writes from this rank's buffers (pair state changes under the pair
  // lock the loop holds while it copies).
  void CloseConnections() {
    absl::MutexLock lock(&close_mu_);
    try {
      context_->closeConnections();
    } catch (const std::exception&) {
      // Closing is best effort; the pairs are unusable either way.
    }
  }

  std::string Describe(const P2POp& op) const {
    return absl::StrCat(op.kind == P2POp::Kind::kSend ? "send to" : "recv from", " rank ",
                        op.peer, " (", op.bytes, " B)");
  }

  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::unique_ptr<KvStoreServer> server_;
  std::unique_ptr<Heartbeat> heartbeat_;
  mutable absl::Mutex mu_;
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  std::vector<Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  absl::Mutex close_mu_;
};

absl::Status GlooTransport::Exchange(absl::Span<const P2POp> ops, absl::Time deadline) {
  for (const P2POp& op : ops) {
    if (op.peer < 0 || op.peer >= size() || op.peer == rank() || op.bytes < 0 ||
        (op.data == nullptr && op.bytes > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("gloo rank ", rank(), ": invalid ",
                                                     Describe(op), " in a world of ", size()));
    }
    if (op.addend != nullptr &&
        (op.kind != P2POp::Kind::kRecv || op.bytes % ByteSizeOf(op.reduce_dtype) != 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gloo rank ", rank(), ": ", Describe(op), " reduces ", DataTypeName(op.reduce_dtype),
          " elements but is not a receive of whole elements"));
    }
  }
  if (absl::Status h = health(); !h.ok()) return h;
  if (ops.empty()) return absl::OkStatus();

  // Every message travels as segments of kSegmentBytes (the last shorter),
  // cut the same way on both sides from the byte count alone, all posted
  // at once on one tag: they match in posting order. A reducing receive
  // combines each segment with its addend as soon as it has arrived, while
  // Gloo's event loop is still reading the next ones, so the reduction of
  // a ring step overlaps its transfer instead of following it. Segments
  // only cut the wire into pieces: the bytes moved are the message's.
  std::vector<Segment> segments;
  // A reducing receive lands beside its addend when the two are the same
  // memory (an in-place step): the landing area is the message's size.
  std::vector<std::vector<char>> landings;
  landings.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    char* base = static_cast<char*>(op.data);
    if (op.addend != nullptr && Overlaps(op.data, op.bytes, op.addend, op.bytes)) {
      landings.emplace_back(static_cast<size_t>(op.bytes));
      base = landings.back().data();
    }
    for (int64_t offset = 0; offset < op.bytes; offset += kSegmentBytes) {
      segments.push_back({i, base + offset, offset, std::min(kSegmentBytes, op.bytes - offset)});
    }
  }
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> buffers;
  buffers.reserve(segments.size());
  absl::Status status;
  size_t current = 0;  // the segment being posted or waited on, for messages
  try {
    for (current = 0; current < segments.size(); ++current) {
      const Segment& seg = segments[current];
      const P2POp& op = ops[seg.op];
      buffers.push_back(context_->createUnboundBuffer(seg.data, static_cast<size_t>(seg.bytes)));
      if (op.kind == P2POp::Kind::kSend) {
        buffers.back()->send(op.peer, op.tag, 0, static_cast<size_t>(seg.bytes));
      } else {
        buffers.back()->recv(op.peer, op.tag, 0, static_cast<size_t>(seg.bytes));
      }
    }
    {
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < segments.size(); ++i) {
        waiting_.push_back({buffers[i].get(), ops[segments[i].op].kind == P2POp::Kind::kSend});
      }
      status = aborted_;  // an Abort between health() and here
    }
    // Receives first, in arrival order, so each segment is reduced while
    // later ones arrive; then the sends (by then mostly done).
    for (const bool sends : {false, true}) {
      for (current = 0; status.ok() && current < segments.size(); ++current) {
        const Segment& seg = segments[current];
        const P2POp& op = ops[seg.op];
        if ((op.kind == P2POp::Kind::kSend) != sends) continue;
        const absl::Duration left = deadline - absl::Now();
        if (left <= absl::ZeroDuration()) {
          status = absl::DeadlineExceededError(absl::StrCat(
              "gloo rank ", rank(), ": deadline passed waiting for ", Describe(op)));
          break;
        }
        const bool done = sends ? buffers[current]->waitSend(Millis(left))
                                : buffers[current]->waitRecv(Millis(left));
        if (!done) {
          status = health();  // woken by Abort
        } else if (op.addend != nullptr) {
          ReduceTo(op.reduce_op, op.reduce_dtype, seg.data,
                   static_cast<const char*>(op.addend) + seg.offset,
                   static_cast<char*>(op.data) + seg.offset,
                   seg.bytes / ByteSizeOf(op.reduce_dtype));
        }
      }
    }
  } catch (const gloo::IoException& e) {
    const bool timed_out = absl::StrContains(e.what(), "Timed out");
    const P2POp& op = ops[segments[std::min(current, segments.size() - 1)].op];
    status = absl::Status(
        timed_out ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable,
        absl::StrCat("gloo rank ", rank(), ": ", timed_out ? "deadline passed during " : "",
                     Describe(op), timed_out ? "" : " failed (peer died or aborted)", ": ",
                     e.what()));
  } catch (const std::exception& e) {
    // gloo::EnforceNotMet and anything else Gloo throws.
    status = absl::InternalError(
        absl::StrCat("gloo rank ", rank(), ": ",
                     Describe(ops[segments[std::min(current, segments.size() - 1)].op]), ": ",
                     e.what()));
  }
  {
    absl::MutexLock lock(&mu_);
    for (const auto& b : buffers) {
      for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
        if (it->buffer == b.get()) {
          waiting_.erase(it);
          break;
        }
      }
    }
  }
  if (!status.ok() && heartbeat_ != nullptr &&
      (status.code() == absl::StatusCode::kUnavailable ||
       status.code() == absl::StatusCode::kDeadlineExceeded)) {
    // A healthy peer that noticed a silent rank first may have closed its
    // connections; name the rank that stopped, if the store knows one.
    const std::string verdict = heartbeat_->Verdict(absl::Seconds(1));
    if (!verdict.empty() && !absl::StrContains(status.message(), verdict)) {
      status = absl::UnavailableError(absl::StrCat(verdict, "; ", status.message()));
    }
  }
  if (!status.ok()) {
    // Also when another thread aborted first: this thread's buffers must be
    // out of Gloo's hands before they are freed and the caller's memory is
    // handed back.
    Abort(status);
    return status;
  }
  return absl::OkStatus();
}

absl::Status CheckOptions(const GlooOptions& o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo: rank ", o.rank, " is not in a world of ", o.size));
  }
  if (o.master_port < 1 || o.master_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo: master_port ", o.master_port, " is not in 1..65535"));
  }
  if (o.master_addr.empty()) return absl::InvalidArgumentError("gloo: master_addr is empty");
  if (o.connect_timeout <= absl::ZeroDuration() || o.default_timeout <= absl::ZeroDuration() ||
      o.heartbeat_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("gloo: timeouts must be positive");
  }
  if (o.job_secret.empty()) {
    return absl::InvalidArgumentError(
        "gloo: the job secret is empty (set OFS_JOB_SECRET in every rank; sbp launch does)");
  }
  return absl::OkStatus();
}

// Gloo writes to sockets with writev, which raises SIGPIPE when the peer
// has gone; by default that kills this process instead of letting the
// write fail. Ignore it (as Python, and so torch, does) unless the program
// installed its own handler.
void IgnoreSigpipe() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> ConnectGloo(const GlooOptions& o) {
  if (absl::Status s = CheckOptions(o); !s.ok()) return s;
  IgnoreSigpipe();
  const std::string where = absl::StrCat("gloo rendezvous of rank ", o.rank, " (world of ",
                                         o.size, ") at ", o.master_addr, ":", o.master_port);
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
  };
  const absl::Time deadline = absl::Now() + o.connect_timeout;

  std::unique_ptr<KvStoreServer> server;
  if (o.rank == 0) {
    KvStoreOptions store;
    store.secret = o.job_secret;
    store.world_size = o.size;
    absl::StatusOr<std::unique_ptr<KvStoreServer>> s =
        KvStoreServer::Start(o.master_addr, o.master_port, store);
    if (!s.ok()) return fail(s.status());
    server = *std::move(s);
  }
  absl::StatusOr<std::unique_ptr<KvStoreClient>> client =
      KvStoreClient::Connect(o.master_addr, o.master_port, o.job_secret, o.rank, deadline);
  if (!client.ok()) return fail(client.status());
  std::string hostname = o.hostname;
  if (hostname.empty()) {
    absl::StatusOr<std::string> local = (*client)->LocalAddress();
    if (!local.ok()) return fail(local.status());
    hostname = *local;
  }

  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  StoreAdapter store(client->get(), deadline);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    device = gloo::transport::tcp::CreateDevice(attr);
    context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
    context->setTimeout(Millis(deadline - absl::Now()));
    context->connectFullMesh(store, device);
  } catch (const std::exception& e) {
    if (!store.error().ok()) return fail(store.error());
    return fail(absl::UnavailableError(absl::StrCat("gloo could not connect from ", hostname,
                                                    ": ", e.what())));
  }
  // Every rank connected before any returns (and so before rank 0 could
  // take the store away).
  std::vector<std::string> ready;
  for (int r = 0; r < o.size; ++r) ready.push_back(absl::StrCat("oneflow_sbp/ready/", r));
  if (absl::Status s = (*client)->Set(ready[o.rank], "1", deadline); !s.ok()) return fail(s);
  if (absl::Status s = (*client)->Wait(ready, deadline); !s.ok()) return fail(s);
  context->setTimeout(Millis(o.default_timeout));
  auto transport =
      std::make_shared<GlooTransport>(std::move(device), std::move(context), std::move(server));
  if (o.heartbeat_timeout > absl::ZeroDuration()) {
    transport->StartHeartbeat(*std::move(client), o.heartbeat_timeout);
  } else {
    client->reset();
  }
  return Communicator::CreateWorld(std::move(transport), o.default_timeout);
}

}  // namespace oneflow_sbp::comm
