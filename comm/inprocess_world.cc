#include "comm/inprocess_world.h"

#include <cstring>
#include <deque>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "comm/buffer_ops.h"
#include "comm/transport.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm {
namespace {

// A posted op; lives on the stack of the Exchange that posted it, which
// does not return while another thread may still touch it.
struct Pending {
  const P2POp* op = nullptr;
  // kPosted: in a match table; kCopying: matched, some thread is copying
  // between the two buffers without the lock; kDone: bytes delivered.
  enum class Stage : uint8_t { kPosted, kCopying, kDone } stage = Stage::kPosted;
  // Set with kDone when the copy failed (a device error): the bytes never
  // arrived, and the world is aborted.
  bool failed = false;
};

// (sender, receiver, tag).
struct Key {
  int src;
  int dst;
  uint64_t tag;
  friend bool operator==(const Key& a, const Key& b) {
    return a.src == b.src && a.dst == b.dst && a.tag == b.tag;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(std::move(h), k.src, k.dst, k.tag);
  }
};

using Table = absl::flat_hash_map<Key, std::deque<Pending*>>;

std::string Describe(const P2POp& op) {
  return absl::StrCat(op.kind == P2POp::Kind::kSend ? "send to" : "recv from", " rank ", op.peer,
                      " (", op.bytes, " B)");
}

absl::Status CheckOps(int rank, int world_size, absl::Span<const P2POp> ops) {
  for (const P2POp& op : ops) {
    if (op.addend != nullptr && (op.kind != P2POp::Kind::kRecv ||
                                 op.bytes % ByteSizeOf(op.reduce_dtype) != 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "in-process rank ", rank, ": ", Describe(op), " reduces ",
          DataTypeName(op.reduce_dtype), " elements but is not a receive of whole elements"));
    }
    if (op.peer < 0 || op.peer >= world_size || op.peer == rank || op.bytes < 0 ||
        (op.data == nullptr && op.bytes > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("in-process rank ", rank, ": invalid ", Describe(op), " in a world of ",
                       world_size, (op.data == nullptr && op.bytes > 0) ? " (null buffer)" : ""));
    }
  }
  return absl::OkStatus();
}

// A matched pair whose sizes disagree.
absl::Status SizeMismatchError(int rank, const P2POp& op, int64_t other_bytes) {
  return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " ", Describe(op),
                                                 " met a message of ", other_bytes,
                                                 " B (same tag, different size)"));
}

absl::Status DeadlineError(int rank, const std::vector<std::string>& pending) {
  return absl::DeadlineExceededError(absl::StrCat(
      "in-process rank ", rank, ": deadline passed waiting for ", absl::StrJoin(pending, ", ")));
}

// (send side, receive side) pairs one thread copies.
using Copies = absl::InlinedVector<std::pair<Pending*, Pending*>, 4>;

// Copies each matched pair; runs without the lock, so the ops must be in
// kCopying. On a device the copies go to this thread's stream; they must be
// complete before the owners learn they are done.
absl::Status CopyMatched(const BufferOps& buffers, int rank, const Copies& copies) {
  absl::Status copied;
  for (const auto& [s, r] : copies) {
    if (!copied.ok()) break;
    const P2POp& recv = *r->op;
    if (recv.addend != nullptr) {
      // A fused receive (host worlds only, see FusesReduce): reduce
      // straight from the sender's buffer into the receiver's.
      ReduceTo(recv.reduce_op, recv.reduce_dtype, s->op->data, recv.addend, recv.data,
               recv.bytes / ByteSizeOf(recv.reduce_dtype));
      continue;
    }
    copied = buffers.Copy(recv.data, recv.memory, s->op->data, s->op->memory, s->op->bytes);
  }
  if (copied.ok() && !copies.empty() && !buffers.host()) copied = buffers.Synchronize();
  if (!copied.ok()) {
    copied = absl::Status(copied.code(), absl::StrCat("in-process rank ", rank,
                                                      ": copying a message: ", copied.message()));
  }
  return copied;
}

// Conditions an Exchange waits on, over the ops it posted (read under the
// world's lock).
struct ExchangeWait {
  absl::Span<Pending> ops;
  const absl::Status* aborted;
  static bool Done(const ExchangeWait* w) {
    for (const Pending& p : w->ops) {
      if (p.stage != Pending::Stage::kDone) return false;
    }
    return true;
  }
  static bool Failed(const ExchangeWait* w) {
    for (const Pending& p : w->ops) {
      if (p.failed) return true;
    }
    return false;
  }
  static bool DoneOrAborted(const ExchangeWait* w) { return !w->aborted->ok() || Done(w); }
  static bool NoneCopying(const ExchangeWait* w) {
    for (const Pending& p : w->ops) {
      if (p.stage == Pending::Stage::kCopying) return false;
    }
    return true;
  }
};

}  // namespace

class InProcessWorld::State {
 public:
  State(int size, BufferOps buffers)
      : size_(size), buffers_(buffers), connected_(size, false) {}

  int size() const { return size_; }
  const BufferOps& buffers() const { return buffers_; }

  absl::Status Claim(int rank) {
    absl::MutexLock lock(&mu_);
    if (connected_[rank]) {
      return absl::FailedPreconditionError(
          absl::StrCat("in-process rank ", rank, " is already connected to this world"));
    }
    connected_[rank] = true;
    return absl::OkStatus();
  }

  void Abort(const absl::Status& reason) {
    absl::MutexLock lock(&mu_);
    AbortLocked(reason);
  }

  absl::Status health() const {
    absl::MutexLock lock(&mu_);
    return aborted_;
  }

  absl::Status Exchange(int rank, absl::Span<const P2POp> ops, absl::Time deadline);

 private:
  void AbortLocked(const absl::Status& reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!aborted_.ok()) return;
    aborted_ = absl::AbortedError(absl::StrCat("in-process world aborted: ", reason.message()));
  }

  // Takes the oldest matching counterpart of `p` out of the other table,
  // or files `p` in its own table.
  Pending* MatchOrPost(int rank, Pending* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool send = p->op->kind == P2POp::Kind::kSend;
    const Key key = send ? Key{rank, p->op->peer, p->op->tag} : Key{p->op->peer, rank, p->op->tag};
    Table& other = send ? recvs_ : sends_;
    auto it = other.find(key);
    if (it == other.end()) {
      (send ? sends_ : recvs_)[key].push_back(p);
      return nullptr;
    }
    Pending* match = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) other.erase(it);
    return match;
  }

  // Removes `p` from its table if it is still there.
  void Unpost(int rank, Pending* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const bool send = p->op->kind == P2POp::Kind::kSend;
    const Key key = send ? Key{rank, p->op->peer, p->op->tag} : Key{p->op->peer, rank, p->op->tag};
    Table& table = send ? sends_ : recvs_;
    auto it = table.find(key);
    if (it == table.end()) return;
    for (auto q = it->second.begin(); q != it->second.end(); ++q) {
      if (*q == p) {
        it->second.erase(q);
        break;
      }
    }
    if (it->second.empty()) table.erase(it);
  }

  const int size_;
  const BufferOps buffers_;
  mutable absl::Mutex mu_;
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> connected_ ABSL_GUARDED_BY(mu_);
  Table sends_ ABSL_GUARDED_BY(mu_);
  Table recvs_ ABSL_GUARDED_BY(mu_);
};

absl::Status InProcessWorld::State::Exchange(int rank, absl::Span<const P2POp> ops,
                                             absl::Time deadline) {
  if (absl::Status s = CheckOps(rank, size_, ops); !s.ok()) return s;
  // A device rank's earlier kernels (on its own stream) must have written
  // its send buffers, and finished with its receive buffers, before
  // another thread may copy them.
  if (!buffers_.host()) {
    if (absl::Status s = buffers_.Synchronize(); !s.ok()) {
      Abort(s);
      return s;
    }
  }
  absl::InlinedVector<Pending, 4> mine(ops.size());
  // The pairs this thread copies.
  Copies copies;
  absl::Status mismatch;
  {
    absl::MutexLock lock(&mu_);
    OFS_RETURN_IF_ERROR(aborted_);
    for (size_t i = 0; i < ops.size(); ++i) {
      mine[i].op = &ops[i];
      Pending* match = MatchOrPost(rank, &mine[i]);
      if (match == nullptr) continue;
      if (match->op->bytes != ops[i].bytes) {
        // Both sides are failed through the abort; the counterpart, taken
        // out of its table, is simply never completed.
        mismatch = SizeMismatchError(rank, ops[i], match->op->bytes);
        AbortLocked(mismatch);
        break;
      }
      match->stage = mine[i].stage = Pending::Stage::kCopying;
      if (ops[i].kind == P2POp::Kind::kSend) {
        copies.emplace_back(&mine[i], match);
      } else {
        copies.emplace_back(match, &mine[i]);
      }
    }
  }
  // Copy without the lock so that ranks copy in parallel; both ops are in
  // kCopying, so neither owner returns until this thread marks them done.
  const absl::Status copied = CopyMatched(buffers_, rank, copies);
  absl::MutexLock lock(&mu_);
  if (!copied.ok()) AbortLocked(copied);
  for (const auto& [s, r] : copies) {
    s->stage = r->stage = Pending::Stage::kDone;
    s->failed = r->failed = !copied.ok();
  }

  const ExchangeWait wait{absl::MakeSpan(mine), &aborted_};
  if (mismatch.ok()) {
    mu_.AwaitWithDeadline(absl::Condition(&ExchangeWait::DoneOrAborted, &wait), deadline);
    if (ExchangeWait::Done(&wait) && !ExchangeWait::Failed(&wait)) return absl::OkStatus();
  }

  // Failed: take back what is still posted, and wait out copies another
  // thread is doing into or out of these buffers (a memcpy; it finishes).
  std::vector<std::string> pending;
  for (Pending& p : mine) {
    if (p.op == nullptr) continue;
    if (p.stage == Pending::Stage::kPosted) {
      Unpost(rank, &p);
      pending.push_back(Describe(*p.op));
    }
  }
  mu_.Await(absl::Condition(&ExchangeWait::NoneCopying, &wait));
  OFS_RETURN_IF_ERROR(mismatch);
  OFS_RETURN_IF_ERROR(copied);
  OFS_RETURN_IF_ERROR(aborted_);
  absl::Status timeout = DeadlineError(rank, pending);
  AbortLocked(timeout);
  return timeout;
}

namespace {

class InProcessTransport : public Transport {
 public:
  InProcessTransport(std::shared_ptr<InProcessWorld::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size(); }
  absl::Status Exchange(absl::Span<const P2POp> ops, absl::Time deadline) override {
    return state_->Exchange(rank_, ops, deadline);
  }
  void Abort(const absl::Status& reason) override {
    state_->Abort(absl::Status(reason.code(), absl::StrCat("rank ", rank_, ": ", reason.message())));
  }
  absl::Status health() const override { return state_->health(); }
  BufferOps buffers() const override { return state_->buffers(); }
  // Host worlds only: a device world's copies go through DeviceOps.
  bool FusesReduce() const override { return state_->buffers().host(); }

 private:
  const std::shared_ptr<InProcessWorld::State> state_;
  const int rank_;
};

}  // namespace

namespace {

absl::StatusOr<BufferOps> BuffersOf(const InProcessOptions& options) {
  if (options.through != nullptr) return BufferOps::Through(options.through);
  absl::StatusOr<BufferOps> b = BufferOps::For(options.device);
  if (!b.ok()) {
    return absl::Status(b.status().code(),
                        absl::StrCat("in-process world: ", b.status().message()));
  }
  return b;
}

}  // namespace

InProcessWorld::InProcessWorld(std::shared_ptr<State> state, const InProcessOptions& options)
    : state_(std::move(state)), options_(options) {}

absl::StatusOr<std::shared_ptr<InProcessWorld>> InProcessWorld::Create(
    int size, const InProcessOptions& options) {
  if (size < 1 || size > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrCat("in-process world of ", size,
                                                   " ranks: need 1 to ", kMaxRanks));
  }
  if (options.default_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("in-process world: default_timeout ",
                     absl::FormatDuration(options.default_timeout), " must be positive"));
  }
  OFS_ASSIGN_OR_RETURN(BufferOps buffers, BuffersOf(options));
  return std::shared_ptr<InProcessWorld>(
      new InProcessWorld(std::make_shared<State>(size, buffers), options));
}

int InProcessWorld::size() const { return state_->size(); }

DeviceType InProcessWorld::device() const { return state_->buffers().device(); }

absl::StatusOr<std::unique_ptr<Communicator>> InProcessWorld::Connect(int rank) {
  if (rank < 0 || rank >= size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("in-process rank ", rank, " is out of range for a world of ", size()));
  }
  if (absl::Status s = state_->Claim(rank); !s.ok()) return s;
  return Communicator::CreateWorld(std::make_shared<InProcessTransport>(state_, rank),
                                   options_.default_timeout);
}

void InProcessWorld::Abort(const absl::Status& reason) { state_->Abort(reason); }

absl::Status InProcessWorld::health() const { return state_->health(); }

absl::StatusOr<std::vector<absl::Status>> RunRanks(
    int n, const std::function<absl::Status(Communicator&)>& fn,
    const InProcessOptions& options) {
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<InProcessWorld> world, InProcessWorld::Create(n, options));
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < n; ++r) {
    OFS_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> c, world->Connect(r));
    comms.push_back(std::move(c));
  }
  std::vector<absl::Status> results(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  absl::Status start_error;
  for (int r = 0; r < n && start_error.ok(); ++r) {
    // A thread the system cannot start (thread or memory limits) fails the
    // run; the ranks already running see the world aborted and return.
    try {
      threads.emplace_back([&, r] {
        absl::Status status;
        try {
          status = fn(*comms[r]);
        } catch (const std::bad_alloc&) {
          status = absl::ResourceExhaustedError(
              absl::StrCat("rank ", r, " ran out of memory (std::bad_alloc)"));
        } catch (const std::exception& e) {
          status = absl::InternalError(absl::StrCat("rank ", r, " threw: ", e.what()));
        } catch (...) {
          status = absl::InternalError(absl::StrCat("rank ", r, " threw a non-standard exception"));
        }
        if (!status.ok()) {
          // A rank that failed because the world was already aborted does
          // not replace the first reason (Abort keeps the first).
          world->Abort(absl::Status(status.code(),
                                       absl::StrCat("rank ", r, " failed: ", status.message())));
        }
        results[r] = std::move(status);
      });
    } catch (const std::system_error& e) {
      start_error = absl::ResourceExhaustedError(absl::StrCat(
          "cannot start the thread of rank ", r, " of ", n, ": ", e.what()));
    } catch (const std::bad_alloc&) {
      start_error = absl::ResourceExhaustedError(absl::StrCat(
          "out of memory starting the thread of rank ", r, " of ", n));
    }
  }
  if (!start_error.ok()) world->Abort(start_error);
  for (std::thread& t : threads) t.join();
  OFS_RETURN_IF_ERROR(start_error);
  return results;
}

}  // namespace oneflow_sbp::comm
