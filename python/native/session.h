// Session and Tensor: the ranks one Python process drives, and a global
// tensor as Python holds it (one eager::GlobalTensor per local rank).
//
// A Session owns a Controller (controller.h): every rank of an in-process
// world as a thread (embedded), or this process's rank of a launched Gloo
// world. Every method that works on tensors runs the same step on each
// local rank with the GIL released, as an SPMD program would
// (session_bindings.cc binds them; io_bindings.cc adds files).
//
// An embedded world grows on demand: a placement naming rank 7 in a world
// of 4 rebuilds the world with 8 rank threads (tensors hold shards, not
// communicators, so they survive; ranks a tensor never had hold its
// metadata and no shard, as ranks outside a placement always do).
//
// Everything here runs with the GIL held unless it says otherwise.
#ifndef PYTHON_NATIVE_SESSION_H_
#define PYTHON_NATIVE_SESSION_H_

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "eager/global_tensor.h"
#include "python/native/bindings.h"
#include "python/native/controller.h"
#include "python/native/conversions.h"
#include "python/native/gil_release.h"

namespace oneflow_sbp::python {

using eager::EagerContext;
using eager::GlobalTensor;

class Session;

struct Tensor {
  Tensor(std::shared_ptr<Session> s, std::vector<GlobalTensor> r)
      : session(std::move(s)), ranks(std::move(r)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor& operator=(Tensor&&) = default;
  // Hands the shards to the session, which frees each on the rank thread
  // that made it (see Session::Bury).
  ~Tensor();

  std::shared_ptr<Session> session;
  // One per local rank of the session's world when the tensor was made.
  std::vector<GlobalTensor> ranks;

  const GlobalTensor& meta() const { return ranks[0]; }
  // Local rank i's handle; a metadata-only handle for ranks added later.
  GlobalTensor At(size_t i) const {
    if (i < ranks.size()) return ranks[i];
    const GlobalTensor& m = meta();
    return GlobalTensor(m.desc(), m.placement(), m.nd_sbp(), LocalTensor());
  }
};

inline bool Interrupted() {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(int world_size, double timeout_s, bool launched) {
    eager::EagerOptions o;
    o.timeout = absl::Seconds(timeout_s);
    if (!(timeout_s > 0)) throw py::value_error(absl::StrCat("timeout=", timeout_s, " must be > 0"));
    options_ = o;
    if (launched) {
      absl::StatusOr<std::unique_ptr<Controller>> c;
      {
        GilRelease release;
        c = Controller::Launched(SharedEngine(), o);
      }
      controller_ = Unwrap(std::move(c));
    } else {
      controller_ = Unwrap(Controller::Embedded(SharedEngine(), std::max(world_size, 1), o));
    }
  }

  Controller& controller() {
    if (controller_ == nullptr) throw std::runtime_error("this session is closed");
    if (Controller::OnRankThread()) {
      // Before anything touches the session: a rank thread must not grow,
      // rebuild or drive the world it runs in.
      throw std::runtime_error(
          "an op was called from inside a rank's step (a Python kernel or rule calling "
          "oneflow_sbp ops?); kernels must compute on their numpy shards only");
    }
    return *controller_;
  }

  void Close() {
    {
      GilRelease release;
      controller_.reset();  // waits for a step an interrupt left running
      graveyard_.clear();
    }
    kept_.clear();
  }

  // Runs `step` on every local rank; raises on failure.
  void Run(const Controller::Step& step) {
    Controller& c = controller();
    absl::Status s;
    // Tensors Python dropped since the last step are released by the rank
    // threads, each its own shards, before the step's work.
    if (graveyard_.empty()) {
      GilRelease release;
      s = c.Run(step, &Interrupted);
    } else {
      auto buried =
          std::make_shared<std::vector<std::vector<GlobalTensor>>>(std::move(graveyard_));
      graveyard_.clear();
      GilRelease release;
      s = c.Run(
          [step, buried](EagerContext& ctx, int i) {
            for (std::vector<GlobalTensor>& t : *buried) {
              if (static_cast<size_t>(i) < t.size()) t[i] = GlobalTensor();
            }
            return step(ctx, i);
          },
          &Interrupted);
    }
    ReleaseKept();
    ThrowIfError(s);
  }

  // Keeps `obj` (a Python object whose buffer a step reads without the
  // GIL) until `in_use` expires. For a step whose Run was interrupted: it
  // may still be running in the background after the call returned.
  void KeepWhileInUse(py::object obj, std::weak_ptr<const void> in_use) {
    kept_.emplace_back(std::move(obj), std::move(in_use));
  }

  // A dropped tensor's handles. Freeing a shard on the thread that
  // allocated it keeps the storage in that thread's buffer cache
  // (local_tensor.h); freeing it here, on the driving thread, would move
  // every output buffer across threads and put the ranks on the shared
  // allocator lock. Bounded: beyond kMaxBuried the driver frees them.
  void Bury(std::vector<GlobalTensor> ranks) {
    if (controller_ == nullptr || graveyard_.size() >= kMaxBuried) return;
    graveyard_.push_back(std::move(ranks));
  }

  // Grows an embedded world to hold every rank of `p`; a launched world
  // must already.
  void EnsureRanks(const Placement& p) {
    int64_t max_rank = 0;
    for (int64_t id = 0; id < p.parallel_num(); ++id) max_rank = std::max(max_rank, p.RankOf(id));
    Controller& c = controller();
    if (max_rank < c.world_size()) return;
    if (c.launched()) {
      throw py::value_error(absl::StrCat("placement ", p.ToString(), " names rank ", max_rank,
                                         " but the launched world has ", c.world_size(),
                                         " ranks (WORLD_SIZE)"));
    }
    const bool grad = c.grad_enabled();
    const PolicyName policy = c.options().cost_policy;
    std::unique_ptr<Controller> bigger;
    eager::EagerOptions o = options_;
    o.cost_policy = policy;
    {
      GilRelease release;
      controller_.reset();
      absl::StatusOr<std::unique_ptr<Controller>> made =
          Controller::Embedded(SharedEngine(), static_cast<int>(max_rank + 1), o);
      py::gil_scoped_acquire acquire;
      bigger = Unwrap(std::move(made));
    }
    controller_ = std::move(bigger);
    controller_->set_grad_enabled(grad);
  }

  int num_local() { return controller().num_local_ranks(); }

  Tensor Wrap(std::vector<GlobalTensor> ranks) { return Tensor(shared_from_this(), std::move(ranks)); }

  std::shared_ptr<const OpCall> Call(const std::string& op, int num_inputs, const AttrMap& attrs) {
    auto key = std::make_tuple(op, num_inputs, attrs);
    auto it = calls_.find(key);
    if (it != calls_.end()) return it->second;
    std::shared_ptr<const OpCall> call = Unwrap(SharedEngine().MakeCall(op, num_inputs, attrs));
    if (calls_.size() > 4096) calls_.clear();
    calls_.emplace(std::move(key), call);
    return call;
  }

 private:
  static constexpr size_t kMaxBuried = 4096;

  // Drops what KeepWhileInUse holds once no step can read it. With the GIL.
  void ReleaseKept() {
    kept_.erase(std::remove_if(kept_.begin(), kept_.end(),
                               [](const auto& k) { return k.second.expired(); }),
                kept_.end());
  }

  eager::EagerOptions options_;
  // Declared before controller_, so destroyed after it: the controller
  // waits for a step still running before anything it reads goes.
  std::vector<std::pair<py::object, std::weak_ptr<const void>>> kept_;
  std::unique_ptr<Controller> controller_;
  std::vector<std::vector<GlobalTensor>> graveyard_;
  absl::flat_hash_map<std::tuple<std::string, int, AttrMap>, std::shared_ptr<const OpCall>> calls_;
};

inline Tensor::~Tensor() {
  if (session != nullptr && !ranks.empty()) session->Bury(std::move(ranks));
}


}  // namespace oneflow_sbp::python

#endif  // PYTHON_NATIVE_SESSION_H_
