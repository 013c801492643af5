// EagerContext: one rank's view of an eager global-tensor program: the
// engine (shared by every rank of the process), this rank's communicator,
// the kernel registry, options, the autograd tape and the trace.
//
// Example (the in-process backend runs one thread per rank):
//   std::unique_ptr<Engine> engine = *Engine::Create();
//   comm::RunRanks(4, [&](comm::Communicator& world) {
//     EagerContext ctx(*engine, world);
//     GlobalTensor x = *FromFull(ctx, full, placement, nd_sbp);
//     auto y = Apply(ctx, "relu", {x});
//     ...
//   });
//
// The world communicator's member positions are device ranks (position r
// runs the shards of the rank named r in placements), so this rank's
// device rank is world.rank(). Not thread-safe: one context per rank
// thread or process.
#ifndef EAGER_EAGER_CONTEXT_H_
#define EAGER_EAGER_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/communicator.h"
#include "eager/program_recorder.h"
#include "eager/trace.h"
#include "engine/engine.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::eager {

struct EagerOptions {
  // The cost policy inference uses.
  PolicyName cost_policy = PolicyName::OneFlow();
  // Every collective's timeout: a failed or hung peer surfaces as an error
  // after this long, never as a hang.
  absl::Duration timeout = absl::Seconds(60);
  // Record a trace event per op call and boxing step (trace.h).
  bool trace = false;
  // nullptr: kernels::KernelRegistry::Global().
  const kernels::KernelRegistry* kernels = nullptr;
};

class EagerContext {
 public:
  EagerContext(engine::Engine& engine, comm::Communicator& world, EagerOptions options = {});
  EagerContext(const EagerContext&) = delete;
  EagerContext& operator=(const EagerContext&) = delete;

  engine::Engine& engine() { return engine_; }
  comm::Communicator& world() { return world_; }
  int64_t rank() const { return world_.rank(); }
  const EagerOptions& options() const { return options_; }
  // Later op calls infer under `policy` (a driver that reuses one context
  // across calls switches policies this way).
  void set_cost_policy(PolicyName policy) { options_.cost_policy = policy; }
  const kernels::KernelRegistry& kernels() const { return *kernels_; }
  comm::CallOptions call_options() const;

  // The OpCall of (op, input count, attrs), built once and cached:
  // kNotFound for an unknown op, the OpCall's errors for bad attributes.
  absl::StatusOr<std::shared_ptr<const OpCall>> Call(absl::string_view op, int num_inputs,
                                                     const AttrMap& attrs);

  // Autograd: Apply records a tape node when grad mode is on and an input
  // requires grad. Backward turns it off while it runs.
  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  // True while Backward runs (the trace marks its op calls).
  bool in_backward() const { return in_backward_; }
  void set_in_backward(bool on) { in_backward_ = on; }
  uint64_t NextTapeSequence() { return next_tape_sequence_++; }

  TraceRecorder& trace() { return trace_; }

  // Forward op calls go to `recorder` while it is set (program_recorder.h).
  void set_recorder(ProgramRecorder* recorder) { recorder_ = recorder; }
  ProgramRecorder* recorder() { return recorder_; }

  // What Apply computes once per inference result on this rank: every
  // blob's layout (this rank's slices) and the kernel. Keyed by the cached
  // result (kept alive here), bounded: cleared when it exceeds
  // kMaxPreparedKernels entries.
  struct PreparedKernel {
    std::shared_ptr<const InferResult> result;
    std::vector<kernels::BlobLayout> layouts;
    kernels::KernelFn fn;
  };
  static constexpr size_t kMaxPreparedKernels = 4096;
  absl::flat_hash_map<const InferResult*, PreparedKernel>& prepared_kernels() {
    return prepared_;
  }

 private:
  engine::Engine& engine_;
  comm::Communicator& world_;
  EagerOptions options_;
  const kernels::KernelRegistry* kernels_;
  absl::flat_hash_map<std::string, std::shared_ptr<const OpCall>> calls_;
  bool grad_enabled_ = true;
  bool in_backward_ = false;
  uint64_t next_tape_sequence_ = 0;
  TraceRecorder trace_;
  ProgramRecorder* recorder_ = nullptr;
  absl::flat_hash_map<const InferResult*, PreparedKernel> prepared_;
};

}  // namespace oneflow_sbp::eager

#endif  // EAGER_EAGER_CONTEXT_H_
