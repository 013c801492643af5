// `sbp plan`: choose every op's N-D signature and every free tensor's
// layout jointly over a whole program (graph-level selection), and compare
// with the eager greedy choice op by op.
#ifndef CLI_CMD_PLAN_H_
#define CLI_CMD_PLAN_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace oneflow_sbp::cli {

struct PlanOptions {
  // The program file's contents (JSON, proto/program.proto's ProgramProto;
  // docs/PLANNING.md).
  std::string program;
  // "2,2": replaces the program placement's hierarchy.
  std::optional<std::string> mesh;
  // Bytes per rank, e.g. "24000000".
  std::optional<std::string> memory_cap;
  // Estimated boxing-planner steps, e.g. "4294967296"
  // (graph::PlanProgramOptions::work_budget); unset: the default.
  std::optional<std::string> work_budget;
  // Price boxing by collectives alone, never p2p exchanges
  // (graph::PlanProgramOptions::collectives_only).
  bool collectives_only = false;
  // Plan the training step (eager/expand_training_step.h); also selected by
  // "training": true in the program.
  bool training = false;
  std::string format = "text";
  // Also run the plan and the greedy choice on rank threads and check the
  // predicted bytes and the outputs (plan_execution.h).
  bool execute = false;
  uint64_t seed = 1;
  // Also write the plan in DTensor's spelling to this file
  // (io/dtensor_plan.h), its mesh axes named `mesh_dim_names`
  // ("dp,tp"; empty: named by what the plan does on each axis).
  std::optional<std::string> dtensor_plan;
  std::string mesh_dim_names;
};

// Through `engine`: its registry, planner, calibration (links and compute
// rates; `--calibration=FILE` loads one into the tool's engine) and caches.
// kInvalidArgument for a bad program (naming the op, tensor or field) or
// flag; the planner's errors otherwise. With `execute`, a disagreement
// between prediction and execution is reported in the output and sets
// `*execution_ok` (when not null) to false.
absl::StatusOr<std::string> RunPlan(const PlanOptions& options, engine::Engine& engine,
                                    bool* execution_ok = nullptr);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_PLAN_H_
