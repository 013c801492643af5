#include "cli/cmd_launch.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command_line.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunLaunch(const comm::LaunchOptions& options,
                                      const std::vector<std::string>& command) {
  if (command.empty()) {
    return UsageError(
        "give the command after --, e.g. sbp launch --nproc=4 -- ./my_program --flag");
  }
  std::vector<std::string> argv = command;
  if (argv[0] == "sbp") {
    // This binary, wherever it is: a launched `sbp` need not be on PATH.
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) argv[0] = std::string(self, static_cast<size_t>(n));
  }
  OFS_ASSIGN_OR_RETURN(comm::LaunchResult r, comm::Launch(options, argv));
  return absl::StrCat("sbp launch: ", r.ranks.size(), " rank", r.ranks.size() == 1 ? "" : "s",
                      " exited 0 (MASTER_PORT ", r.master_port, ")\n");
}

absl::StatusOr<int> LaunchRanksPerNode(bool nproc_given, int nproc, bool per_node_given,
                                       int per_node) {
  if (nproc_given && per_node_given && nproc != per_node) {
    return UsageError(absl::StrCat("--nproc=", nproc, " and --nproc_per_node=",
                                                   per_node, " disagree; give one"));
  }
  const bool given = nproc_given || per_node_given;
  const int n = nproc_given ? nproc : per_node_given ? per_node : 1;
  if (given && n < 1) {
    return UsageError(absl::StrCat(
        "--", nproc_given ? "nproc" : "nproc_per_node", "=", n, ": at least 1 rank process"));
  }
  return n;
}

}  // namespace oneflow_sbp::cli
