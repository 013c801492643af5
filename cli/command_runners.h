// The runner of each `sbp` command: its flags (sbp_flags.h) turned into the
// command's options, then the command's library (cmd_*.h). The command
// table (command_table.h) names each command's runner beside its flags and
// formats.
#ifndef CLI_COMMAND_RUNNERS_H_
#define CLI_COMMAND_RUNNERS_H_

#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "cli/command_line.h"

namespace oneflow_sbp::cli {

// What a command's runner gets: its command line, the engine, the chosen
// --format. A runner returns its output, or the failure (exit 1), and may
// set *exit_code to 1 for a run that completed but whose check did not hold.
struct Invocation {
  const CommandLine& cl;
  engine::Engine& engine;
  std::string format;
  int* exit_code;
};

// The contents of the file a flag names ("-": stdin).
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag);

absl::StatusOr<std::string> ParseCmd(const Invocation& in);
absl::StatusOr<std::string> SlicesCmd(const Invocation& in);
absl::StatusOr<std::string> InferCmd(const Invocation& in);
absl::StatusOr<std::string> BoxingCmd(const Invocation& in);
absl::StatusOr<std::string> CalibrateCmd(const Invocation& in);
absl::StatusOr<std::string> LaunchCmd(const Invocation& in);
absl::StatusOr<std::string> PlanCmd(const Invocation& in);
absl::StatusOr<std::string> DemoCmd(const Invocation& in);
absl::StatusOr<std::string> VerifyCmd(const Invocation& in);
absl::StatusOr<std::string> TourCmd(const Invocation& in);
absl::StatusOr<std::string> EmbedCmd(const Invocation& in);
absl::StatusOr<std::string> CkptCmd(const Invocation& in);
absl::StatusOr<std::string> ImportCmd(const Invocation& in);
absl::StatusOr<std::string> RunCmd(const Invocation& in);
absl::StatusOr<std::string> OpsCmd(const Invocation& in);

}  // namespace oneflow_sbp::cli

#endif  // CLI_COMMAND_RUNNERS_H_
