#include "python/native/controller.h"

#include <atomic>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/launcher.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::python {

// One step for every local rank: the work, what each rank answered, and
// how many have not answered yet. Shared with the rank threads, so an
// interrupted Run can return while they finish.
struct Controller::Batch {
  Step step;
  bool grad_enabled = true;
  PolicyName policy;
  // Aborted when a rank fails (embedded), so peers stop waiting on it.
  std::shared_ptr<comm::InProcessWorld> world;
  absl::Mutex mu;
  int remaining ABSL_GUARDED_BY(mu) = 0;
  // remaining == 0, readable without the lock (the waiter's spin phase).
  std::atomic<bool> done{false};
  std::vector<absl::Status> statuses ABSL_GUARDED_BY(mu);
};

struct Controller::RankThread {
  int local_index = 0;
  std::unique_ptr<comm::Communicator> comm;
  std::unique_ptr<eager::EagerContext> ctx;
  absl::Mutex mu;
  std::shared_ptr<Batch> task ABSL_GUARDED_BY(mu);
  bool stop ABSL_GUARDED_BY(mu) = false;
  // task != nullptr || stop, readable without the lock (the spin phase).
  std::atomic<bool> signalled{false};
  std::thread thread;
};

Controller::Controller(engine::Engine& engine, eager::EagerOptions options, bool launched,
                       int world_size)
    : engine_(engine), options_(options), launched_(launched), world_size_(world_size) {}

Controller::~Controller() {
  if (pending_ != nullptr) WaitBatch(*pending_, nullptr);
  StopThreads();
}

absl::StatusOr<std::unique_ptr<Controller>> Controller::Embedded(engine::Engine& engine, int world_size,
                                                                 eager::EagerOptions options) {
  if (world_size < 1 || world_size > comm::InProcessWorld::kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "world_size=", world_size, " must be in [1, ", comm::InProcessWorld::kMaxRanks, "]"));
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeout ", absl::FormatDuration(options.timeout), " must be positive"));
  }
  std::unique_ptr<Controller> c(new Controller(engine, options, false, world_size));
  for (int r = 0; r < world_size; ++r) c->local_ranks_.push_back(r);
  absl::Status s = c->StartEmbedded();
  OFS_RETURN_IF_ERROR(s);
  return c;
}

absl::StatusOr<std::unique_ptr<Controller>> Controller::Launched(engine::Engine& engine,
                                                                 eager::EagerOptions options) {
  OFS_ASSIGN_OR_RETURN(std::unique_ptr<comm::Communicator> world,
       comm::ConnectFromEnvironment(options.timeout));
  const int size = world->size();
  std::unique_ptr<Controller> c(new Controller(engine, options, true, size));
  c->local_ranks_.push_back(world->rank());
  auto rt = std::make_unique<RankThread>();
  rt->comm = std::move(world);
  rt->ctx = std::make_unique<eager::EagerContext>(engine, *rt->comm, options);
  rt->thread = std::thread(&Controller::RankLoop, rt.get());
  c->threads_.push_back(std::move(rt));
  return c;
}

absl::Status Controller::StartEmbedded() {
  comm::InProcessOptions wo;
  wo.default_timeout = options_.timeout;
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<comm::InProcessWorld> world,
       comm::InProcessWorld::Create(world_size_, wo));
  world_ = world;
  for (int r = 0; r < world_size_; ++r) {
    auto rt = std::make_unique<RankThread>();
    rt->local_index = r;
    OFS_ASSIGN_OR_RETURN(std::unique_ptr<comm::Communicator> comm, world_->Connect(r));
    rt->comm = std::move(comm);
    rt->ctx = std::make_unique<eager::EagerContext>(engine_, *rt->comm, options_);
    rt->thread = std::thread(&Controller::RankLoop, rt.get());
    threads_.push_back(std::move(rt));
  }
  return absl::OkStatus();
}

void Controller::StopThreads() {
  for (auto& rt : threads_) {
    absl::MutexLock lock(&rt->mu);
    rt->stop = true;
    rt->signalled.store(true, std::memory_order_release);
  }
  for (auto& rt : threads_) {
    if (rt->thread.joinable()) rt->thread.join();
  }
  threads_.clear();
}

absl::Status Controller::set_cost_policy(const std::string& name) {
  const std::vector<std::string> known = engine_.CostPolicyNames();
  for (const std::string& k : known) {
    if (k == name) {
      options_.cost_policy = PolicyName::Of(name);
      return absl::OkStatus();
    }
  }
  std::string list;
  for (const std::string& k : known) absl::StrAppend(&list, list.empty() ? "" : ", ", k);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown cost policy ", QuotedInput(name), "; known: ", list));
}

namespace {

// Waking a sleeping thread costs tens of microseconds on a VM (futex wake,
// then the scheduler), twice per step: once for the ranks, once for the
// driver. A driver issuing ops back to back finds its ranks still spinning
// and is itself woken by spinning, so a step of a small op costs the work
// plus a handful of cache-line transfers. Spinning yields the CPU on every
// turn, so ranks that outnumber the cores still make progress, and stops
// after kSpin so idle ranks sleep.
constexpr absl::Duration kSpin = absl::Microseconds(100);

template <typename Ready>
bool SpinUntil(const Ready& ready) {
  const absl::Time end = absl::Now() + kSpin;
  while (!ready()) {
    if (absl::Now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

namespace {
// Set on rank threads: a step that calls Run again (a Python kernel that
// calls an op) would wait for itself.
thread_local bool on_rank_thread = false;
}  // namespace

bool Controller::OnRankThread() { return on_rank_thread; }

void Controller::RankLoop(RankThread* rt) {
  on_rank_thread = true;
  while (true) {
    std::shared_ptr<Batch> batch;
    SpinUntil([rt] { return rt->signalled.load(std::memory_order_acquire); });
    {
      absl::MutexLock lock(&rt->mu);
      rt->mu.Await(absl::Condition(
          +[](RankThread* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu) {
            return t->stop || t->task != nullptr;
          },
          rt));
      if (rt->task == nullptr) return;  // stop with nothing queued
      batch = std::move(rt->task);
      rt->task = nullptr;
      rt->signalled.store(rt->stop, std::memory_order_release);
    }
    eager::EagerContext& ctx = *rt->ctx;
    ctx.set_grad_enabled(batch->grad_enabled);
    ctx.set_cost_policy(batch->policy);
    absl::Status s;
    try {
      s = batch->step(ctx, rt->local_index);
    } catch (const std::exception& e) {
      s = absl::InternalError(absl::StrCat("rank ", ctx.rank(), " threw: ", e.what()));
    } catch (...) {
      s = absl::InternalError(absl::StrCat("rank ", ctx.rank(), " threw a non-standard exception"));
    }
    if (!s.ok()) {
      // Peers blocked on this rank in a collective fail now, not at their
      // timeout.
      if (batch->world != nullptr) {
        batch->world->Abort(s);
      } else {
        rt->comm->Abort(s);
      }
    }
    absl::MutexLock lock(&batch->mu);
    batch->statuses[rt->local_index] = std::move(s);
    if (--batch->remaining == 0) batch->done.store(true, std::memory_order_release);
  }
}

bool Controller::WaitBatch(Batch& batch, const std::function<bool()>& interrupted) {
  SpinUntil([&batch] { return batch.done.load(std::memory_order_acquire); });
  absl::MutexLock lock(&batch.mu);
  auto done = [&batch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(batch.mu) { return batch.remaining == 0; };
  while (!done()) {
    // Wakes at once when the last rank answers; polls for interrupts in
    // between.
    if (batch.mu.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(20))) break;
    if (interrupted) {
      batch.mu.Unlock();
      const bool stop = interrupted();
      batch.mu.Lock();
      if (stop && !done()) return false;
    }
  }
  return true;
}

absl::Status Controller::Run(const Step& step, const std::function<bool()>& interrupted) {
  if (on_rank_thread) {
    return absl::FailedPreconditionError(
        "an op was called from inside a rank's step (a Python kernel or rule calling "
        "oneflow_sbp ops?); kernels must compute on their numpy shards only");
  }
  if (pending_ != nullptr) {
    if (!WaitBatch(*pending_, interrupted)) {
      return absl::CancelledError("interrupted while the previous (interrupted) call finished");
    }
    pending_ = nullptr;
    RebuildIfAborted();
  }
  if (launched_ && !launched_abort_.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this process's world was aborted by an earlier failure (", launched_abort_.message(),
        "); a launched world cannot be rebuilt: restart the job"));
  }
  if (threads_.empty()) {
    absl::Status s = StartEmbedded();
    OFS_RETURN_IF_ERROR(s);
  }
  auto batch = std::make_shared<Batch>();
  batch->step = step;
  batch->grad_enabled = grad_enabled_;
  batch->policy = options_.cost_policy;
  batch->world = world_;
  {
    absl::MutexLock lock(&batch->mu);
    batch->remaining = static_cast<int>(threads_.size());
    batch->statuses.assign(threads_.size(), absl::OkStatus());
  }
  for (auto& rt : threads_) {
    absl::MutexLock lock(&rt->mu);
    rt->task = batch;
    rt->signalled.store(true, std::memory_order_release);
  }
  if (!WaitBatch(*batch, interrupted)) {
    // Collectives of the step end at once; compute already running ends
    // in the background (the next Run waits for it, then rebuilds).
    const absl::Status reason = absl::CancelledError("interrupted (KeyboardInterrupt)");
    if (world_ != nullptr) {
      world_->Abort(reason);
    } else {
      threads_[0]->comm->Abort(reason);
      launched_abort_ = reason;
    }
    pending_ = batch;
    return reason;
  }
  absl::ReleasableMutexLock lock(&batch->mu);
  absl::Status first;
  for (size_t i = 0; i < batch->statuses.size(); ++i) {
    const absl::Status& s = batch->statuses[i];
    if (s.ok()) continue;
    // A rank that failed only because a peer aborted the world is not the
    // cause; prefer the cause.
    if (first.ok() || (first.code() == absl::StatusCode::kAborted &&
                       s.code() != absl::StatusCode::kAborted)) {
      first = absl::Status(s.code(), absl::StrCat(s.message(), " [rank ", local_ranks_[i], "]"));
    }
  }
  if (!first.ok() && launched_) launched_abort_ = first;
  lock.Release();
  RebuildIfAborted();
  return first;
}

void Controller::RebuildIfAborted() {
  if (launched_ || world_ == nullptr || world_->health().ok()) return;
  // Ranks and communicators of an aborted world are done; the next step
  // gets fresh ones (StartEmbedded in Run).
  StopThreads();
  world_ = nullptr;
  ++rebuilds_;
}

}  // namespace oneflow_sbp::python
