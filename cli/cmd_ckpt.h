// `sbp ckpt`: look into and consolidate checkpoints (checkpoint/checkpoint.h).
//   sbp ckpt inspect DIR                 tensors, saved layouts, pieces, sizes
//   sbp ckpt export DIR OUT.safetensors  one whole file any reader loads
// DIR may also be a plain .safetensors file (one piece per tensor).
#ifndef CLI_CMD_CKPT_H_
#define CLI_CMD_CKPT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace oneflow_sbp::cli {

// `args`: the words after `ckpt`. kInvalidArgument for a wrong action or
// word count (the tool's exit 2 comes from its command table).
absl::StatusOr<std::string> RunCkpt(const std::vector<std::string>& args);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_CKPT_H_
