// `sbp launch`: torchrun-style launcher of SPMD rank processes (Gloo).
#ifndef CLI_CMD_LAUNCH_H_
#define CLI_CMD_LAUNCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/launcher.h"

namespace oneflow_sbp::cli {

// Runs `command` as options.nproc rank processes with RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, waits for
// all, and returns a one-line summary; a failing rank is an error naming
// it (the others are terminated). A command `sbp` runs this very binary
// (/proc/self/exe), so `sbp launch -- sbp ...` works without sbp on PATH.
absl::StatusOr<std::string> RunLaunch(const comm::LaunchOptions& options,
                                      const std::vector<std::string>& command);

// The rank processes per node from `--nproc` and torchrun's
// `--nproc_per_node` (either; both only if equal; neither: 1).
// kInvalidArgument for a count below 1 or two that differ.
absl::StatusOr<int> LaunchRanksPerNode(bool nproc_given, int nproc, bool per_node_given,
                                       int per_node);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_LAUNCH_H_
