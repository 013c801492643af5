// `sbp run`: runs a program (an imported model, `sbp import`) on a mesh
// with its own weights and the user's inputs, under the planner's choice
// or a DTensor plan file, and writes the outputs.
//
//   sbp run --program=m/program.json --weights=m/weights.safetensors \
//           --inputs=in.safetensors --out=out.safetensors --placement='cpu:0-3 [2,2]'
//
// Values: every weight (free tensor, kept parameter and constant) comes
// from --weights by name; the program's inputs (marked tensors the weights
// do not hold, in program order) from --inputs, by name or by position as
// input_0, input_1, ... A value the files do not give, or one of another
// dtype or shape, is an error naming the tensor: nothing is made up.
// Outputs are written as output_0, ... and under their program names.
// With --expect=REF.safetensors the outputs are also compared with REF's
// (by name or position) and a difference above --rtol (relative to the
// largest reference value) is exit 1.
#ifndef CLI_CMD_RUN_H_
#define CLI_CMD_RUN_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace oneflow_sbp::cli {

struct RunModelOptions {
  // The program file's contents (JSON ProgramProto).
  std::string program;
  std::optional<std::string> weights;
  std::optional<std::string> inputs;
  std::optional<std::string> out;
  // Replaces the program's placement ("cpu:0-3 [2,2]").
  std::optional<std::string> placement;
  // A DTensor plan's contents (io/dtensor_plan.h) and its file name: its
  // parameter layouts; each op then chooses as eager inference does.
  // Unset: the planner's choice.
  std::optional<std::string> plan;
  std::string plan_path;
  std::string backend = "threads";
  std::optional<std::string> expect;
  double rtol = 1e-5;
  std::string format = "text";
};

// Rank 0's report (empty in a gloo launcher, whose ranks printed theirs).
// Sets *matched to false when --expect found a difference.
absl::StatusOr<std::string> RunModel(const RunModelOptions& options, engine::Engine& engine,
                                     bool* matched);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_RUN_H_
