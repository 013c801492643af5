#include "tools/cmd_launch.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunLaunch(const comm::LaunchOptions& options,
                                      const std::vector<std::string>& command) {
  if (command.empty()) {
    return absl::InvalidArgumentError(
        "give the command after --, e.g. sbp launch --nproc=4 -- ./my_program --flag");
  }
  absl::StatusOr<comm::LaunchResult> r = comm::Launch(options, command);
  if (!r.ok()) return r.status();
  return absl::StrCat("sbp launch: ", r->ranks.size(), " rank", r->ranks.size() == 1 ? "" : "s",
                      " exited 0 (MASTER_PORT ", r->master_port, ")\n");
}

}  // namespace oneflow_sbp::cli
