// Controller: the ranks one Python thread drives.
//
// Two modes, one interface:
//   - embedded (the default): every rank of an in-process world is a
//     thread owned here, with its own EagerContext; one Python call runs
//     the same step on every rank thread and waits for all of them (the
//     single-controller model of OneFlow's global tensors seen from one
//     process);
//   - launched (`sbp launch ... -- python3 script.py`): this process is
//     one rank of a Gloo world joined from the launcher's environment, and
//     a call runs the step on that one rank (SPMD, as torchrun scripts).
//
//   std::unique_ptr<Controller> c = *Controller::Embedded(engine, 4, {});
//   std::vector<GlobalTensor> y(c->num_local_ranks());
//   absl::Status s = c->Run([&](EagerContext& ctx, int i) {
//     OFS_ASSIGN_OR_RETURN(y[i], eager::Apply1(ctx, "relu", {x[i]}));
//     return absl::OkStatus();
//   }, /*interrupted=*/nullptr);
//
// Failure: a rank whose step fails aborts the world, so ranks waiting on
// it in a collective fail at once instead of waiting out the timeout. An
// embedded controller then builds a fresh world and fresh contexts before
// the next step (tensors keep their shards; they hold no communicator), so
// one bad call never poisons the session. A launched controller cannot
// rebuild a world that spans processes: it reports the abort and stays
// aborted.
//
// Interrupts: Run polls `interrupted` every 20 ms while the ranks work;
// when it returns true Run aborts the world (collectives of the step end at
// once) and returns kCancelled; compute already running finishes in the
// background, and the next Run waits for it and rebuilds the world. A step
// must therefore own what it touches (capture shared state by value): it
// may outlive the Run that started it.
//
// Run is not reentrant and not thread-safe: one driving thread at a time.
#ifndef PYTHON_NATIVE_CONTROLLER_H_
#define PYTHON_NATIVE_CONTROLLER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "eager/eager_context.h"
#include "engine/engine.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"

namespace oneflow_sbp::python {

class Controller {
 public:
  // The step one rank runs: its context and its index among the local
  // ranks (0 for a launched controller).
  using Step = std::function<absl::Status(eager::EagerContext& ctx, int local_index)>;

  // kInvalidArgument unless 1 <= world_size <= 4096 and the timeout is
  // positive.
  static absl::StatusOr<std::unique_ptr<Controller>> Embedded(engine::Engine& engine, int world_size,
                                                              eager::EagerOptions options);
  // Joins the launcher's Gloo world (RANK, WORLD_SIZE, MASTER_ADDR,
  // MASTER_PORT); kFailedPrecondition outside a launcher.
  static absl::StatusOr<std::unique_ptr<Controller>> Launched(engine::Engine& engine,
                                                              eager::EagerOptions options);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  bool launched() const { return launched_; }
  int world_size() const { return world_size_; }
  // Device ranks this process runs: 0..world_size-1 embedded, {RANK}
  // launched.
  const std::vector<int>& local_ranks() const { return local_ranks_; }
  int num_local_ranks() const { return static_cast<int>(local_ranks_.size()); }
  const eager::EagerOptions& options() const { return options_; }
  engine::Engine& engine() { return engine_; }

  // Every later step runs with this grad mode (autograd recording).
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  bool grad_enabled() const { return grad_enabled_; }
  // The cost policy later steps infer under.
  absl::Status set_cost_policy(const std::string& name);

  // Runs `step` on every local rank and waits. Returns OK, or the first
  // failing rank's status (lowest rank) with the rank named; kCancelled if
  // `interrupted` (may be null) said so; kFailedPrecondition for a
  // launched controller whose world was aborted earlier, or when called
  // from a rank thread (a step may not start steps: it would wait for
  // itself).
  absl::Status Run(const Step& step, const std::function<bool()>& interrupted);

  // True on the threads that run ranks' steps (of any controller).
  static bool OnRankThread();

  // How many times an embedded world was rebuilt after a failure.
  int rebuilds() const { return rebuilds_; }

 private:
  struct RankThread;
  struct Batch;

  Controller(engine::Engine& engine, eager::EagerOptions options, bool launched, int world_size);
  // Starts one thread per local rank on `world` (embedded) or on the one
  // launched communicator.
  absl::Status StartEmbedded();
  void StopThreads();
  // An embedded world aborted by a failure or an interrupt is replaced by
  // a fresh one before the next step.
  void RebuildIfAborted();
  // Blocks until the batch in flight (if any) is done; returns whether it
  // ended (false: interrupted).
  bool WaitBatch(Batch& batch, const std::function<bool()>& interrupted);
  static void RankLoop(RankThread* rt);

  engine::Engine& engine_;
  eager::EagerOptions options_;
  const bool launched_;
  const int world_size_;
  std::vector<int> local_ranks_;
  bool grad_enabled_ = true;
  int rebuilds_ = 0;
  absl::Status launched_abort_;

  std::shared_ptr<comm::InProcessWorld> world_;
  std::vector<std::unique_ptr<RankThread>> threads_;
  // The batch still running after an interrupted Run.
  std::shared_ptr<Batch> pending_;
};

}  // namespace oneflow_sbp::python

#endif  // PYTHON_NATIVE_CONTROLLER_H_
