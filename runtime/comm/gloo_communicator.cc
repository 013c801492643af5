#include "runtime/comm/gloo_communicator.h"

#include <signal.h>

#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/comm/kv_store.h"
#include "runtime/comm/transport.h"
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

class GlooTransport : public Transport {
 public:
  GlooTransport(std::shared_ptr<gloo::transport::Device> device,
                std::shared_ptr<gloo::rendezvous::Context> context,
                std::unique_ptr<KvStoreServer> server)
      : device_(std::move(device)), context_(std::move(context)), server_(std::move(server)) {}

  ~GlooTransport() override {
    // Pairs first (peers see an orderly close), then the store.
    context_.reset();
    device_.reset();
    if (server_ != nullptr) server_->Shutdown(kStoreDrain);
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

  absl::Status Exchange(absl::Span<const P2POp> ops, absl::Time deadline) override;

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
  }
  if (absl::Status h = health(); !h.ok()) return h;
  if (ops.empty()) return absl::OkStatus();

  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> buffers;
  buffers.reserve(ops.size());
  absl::Status status;
  size_t current = 0;  // the op being posted or waited on, for messages
  try {
    for (current = 0; current < ops.size(); ++current) {
      const P2POp& op = ops[current];
      buffers.push_back(context_->createUnboundBuffer(op.data, static_cast<size_t>(op.bytes)));
      if (op.kind == P2POp::Kind::kSend) {
        buffers.back()->send(op.peer, op.tag, 0, static_cast<size_t>(op.bytes));
      } else {
        buffers.back()->recv(op.peer, op.tag, 0, static_cast<size_t>(op.bytes));
      }
    }
    {
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < ops.size(); ++i) {
        waiting_.push_back({buffers[i].get(), ops[i].kind == P2POp::Kind::kSend});
      }
      status = aborted_;  // an Abort between health() and here
    }
    for (current = 0; status.ok() && current < ops.size(); ++current) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        status = absl::DeadlineExceededError(absl::StrCat(
            "gloo rank ", rank(), ": deadline passed waiting for ", Describe(ops[current])));
        break;
      }
      const bool done = ops[current].kind == P2POp::Kind::kSend
                            ? buffers[current]->waitSend(Millis(left))
                            : buffers[current]->waitRecv(Millis(left));
      if (!done) status = health();  // woken by Abort
    }
  } catch (const gloo::IoException& e) {
    const bool timed_out = absl::StrContains(e.what(), "Timed out");
    const P2POp& op = ops[std::min(current, ops.size() - 1)];
    status = absl::Status(
        timed_out ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable,
        absl::StrCat("gloo rank ", rank(), ": ", timed_out ? "deadline passed during " : "",
                     Describe(op), timed_out ? "" : " failed (peer died or aborted)", ": ",
                     e.what()));
  } catch (const std::exception& e) {
    // gloo::EnforceNotMet and anything else Gloo throws.
    status = absl::InternalError(absl::StrCat("gloo rank ", rank(), ": ",
                                              Describe(ops[std::min(current, ops.size() - 1)]),
                                              ": ", e.what()));
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
  if (o.connect_timeout <= absl::ZeroDuration() || o.default_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("gloo: timeouts must be positive");
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
    absl::StatusOr<std::unique_ptr<KvStoreServer>> s =
        KvStoreServer::Start(o.master_addr, o.master_port);
    if (!s.ok()) return fail(s.status());
    server = *std::move(s);
  }
  absl::StatusOr<std::unique_ptr<KvStoreClient>> client =
      KvStoreClient::Connect(o.master_addr, o.master_port, deadline);
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
  client->reset();
  context->setTimeout(Millis(o.default_timeout));
  return Communicator::CreateWorld(
      std::make_shared<GlooTransport>(std::move(device), std::move(context), std::move(server)),
      o.default_timeout);
}

}  // namespace oneflow_sbp::comm
