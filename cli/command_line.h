// The `sbp` command line: flags, the command word and positional values.
//
// The tool parses its flags itself instead of calling
// absl::ParseCommandLine, because absl's parser reports a bad value on its
// own terms ("ERROR: Illegal value ...", exit 1) while the tool promises
// one line "sbp <command>: <why>" and exit 2 for a wrong command line, and
// because absl's built-in --flagfile/--fromenv would read files and the
// environment and print what they read. Values are still stored in the
// ABSL_FLAGs (through CommandLineFlag::ParseFrom), so absl::GetFlag works.
//
// Accepted forms: --name=value, --name value (non-bool flags), --name and
// --noname (bool flags), one or two leading dashes. `--` ends the flags: the
// rest is positional (a command `sbp launch` runs). --input, --attr and
// --constraint repeat and keep commas (absl's list flags would split them).
#ifndef CLI_COMMAND_LINE_H_
#define CLI_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/commandlineflag.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace oneflow_sbp::cli {

struct CommandLine {
  std::string command;                  // the first plain word; "" if none
  std::vector<std::string> positional;  // the other plain words, then all after `--`
  std::vector<std::string> input;
  std::vector<std::string> attr;
  std::vector<std::string> constraint;
  // Names of the flags given explicitly (some commands ignore a default).
  absl::flat_hash_set<std::string> given;
};

// Parses `args` (argv without the program name) into `out` and sets the
// flags it names. `allowed` says which registered flags belong to the tool;
// any other flag (absl's --flagfile, --fromenv, ... included) is refused
// unread. A wrong command line is kInvalidArgument naming the flag; `out`
// is still filled as far as possible, so out->command names the command
// for the "sbp <command>: " prefix even when the error comes before it.
absl::Status ParseCommandLine(absl::Span<const std::string> args,
                              absl::FunctionRef<bool(const absl::CommandLineFlag&)> allowed,
                              CommandLine* out);

// A flag value a command cannot use at all (`launch --nproc=0`): a wrong
// command line like a flag of the wrong type, so `sbp` exits 2, not 1. It is
// kInvalidArgument carrying a payload that IsUsageError finds; bad input
// values (a layout, a mesh, a file) stay plain errors, exit 1.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

}  // namespace oneflow_sbp::cli

#endif  // CLI_COMMAND_LINE_H_
