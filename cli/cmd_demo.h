// `sbp demo`: trains a LLaMA-style decoder block on a mesh of real ranks
// (threads, or Gloo processes) with data parallelism on mesh axis 0 and
// Megatron tensor parallelism on axis 1, and checks every step against a
// single-rank run.
#ifndef CLI_CMD_DEMO_H_
#define CLI_CMD_DEMO_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "kernels/kernel_registry.h"
#include "models/llama_block.h"

namespace oneflow_sbp::cli {

struct DemoOptions {
  std::string mesh = "2,2";
  models::LlamaConfig model;
  int steps = 3;
  std::string backend = "threads";
  // Chrome trace-event JSON of every rank (gloo: one file per rank,
  // FILE.rank<N>.json).
  std::optional<std::string> trace;
  uint64_t seed = 1;
  // Print every op of step 0 (forward and backward); else forward only.
  bool all_ops = false;
  // Write step 0's forward as a program for `sbp plan` (parameters free),
  // and FILE's stem + ".marked.json" with the Megatron marking fixed.
  std::optional<std::string> record;
  // Save the weights, Adam state, step count and seed to this checkpoint
  // directory after the last step (checkpoint/checkpoint.h; any mesh can resume).
  std::optional<std::string> save;
  // Start from this checkpoint (saved by --save on any mesh): its weights
  // and Adam state resharded onto this mesh; steps continue its count.
  std::optional<std::string> resume;
  // The cost policy the interpreter infers with: "oneflow" (OneFlow's
  // choices, the default) or "planned" (rank by real boxing plans).
  std::string cost = "oneflow";
  // Where the ranks run their kernels and keep their shards: "cpu", or
  // "cuda" (threads only: every rank thread on the current GPU, boxing on
  // device memory; needs a --config=cuda build and a GPU). The single-rank
  // reference always runs the CPU kernels, so a cuda run also checks the
  // CUDA kernels against the CPU ones.
  std::string device = "cpu";
  // The report as one JSON object (`--format=json`) instead of text.
  bool json = false;
  // Where text progress goes as the run proceeds (the header at once, a
  // line as the reference starts and one per step, each complete); empty:
  // nowhere, and the header leads the returned report instead.
  std::function<void(const std::string&)> progress;
  // nullptr: kernels::KernelRegistry::Global() (tests give their own).
  const kernels::KernelRegistry* kernels = nullptr;
};

// The report (rank 0's; after the header and the per-step lines, which go to
// options.progress when it is set). A loss or gradient that differs from the single
// rank run, or a loss that does not go down, sets *exit_code to 1.
// kInvalidArgument for a bad option (a wrong command line);
// kUnimplemented / kFailedPrecondition when this build or machine lacks
// the device.
absl::StatusOr<std::string> RunDemo(const DemoOptions& options, engine::Engine& engine,
                                    int* exit_code = nullptr);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_DEMO_H_
