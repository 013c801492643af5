// The `sbp` command line: flags, the command word and positional values.
//
// The tool parses its flags itself, once, against its own table
// (flags.h): every wrong command line is one line "sbp <command>: <why>"
// and exit 2, and nothing reads a file or the environment behind the
// user's back (absl's --flagfile and --fromenv do not exist here). Each
// value is checked against its flag's type as it is read and kept typed;
// the runners read the values, never the text.
//
// Accepted forms: --name=value, --name value (non-bool flags), --name and
// --noname (bool flags), one or two leading dashes. `--` ends the flags: the
// rest is positional (a command `sbp launch` runs). --input, --attr and
// --constraint repeat and keep commas.
#ifndef CLI_COMMAND_LINE_H_
#define CLI_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "cli/flags.h"

namespace oneflow_sbp::cli {

struct CommandLine {
  std::string command;                  // the first plain word; "" if none
  std::vector<std::string> positional;  // the other plain words, then all after `--`
  std::vector<std::string> input;
  std::vector<std::string> attr;
  std::vector<std::string> constraint;
  // The flags' values (defaults for those not given).
  FlagValues flags;
  // The flags given explicitly, each once, in the order given (the first
  // one a command does not take is the one its error names).
  std::vector<std::string> given;
};

// Parses `args` (argv without the program name) into `out`. A flag the
// table lacks, a value of the wrong type or a missing value is
// kInvalidArgument naming the flag; `out` is still filled as far as
// possible, so out->command names the command for the "sbp <command>: "
// prefix even when the error comes before it.
absl::Status ParseCommandLine(absl::Span<const std::string> args, CommandLine* out);

// A flag value a command cannot use at all (`launch --nproc=0`): a wrong
// command line like a flag of the wrong type, so `sbp` exits 2, not 1. It is
// kInvalidArgument carrying a payload that IsUsageError finds; bad input
// values (a layout, a mesh, a file) stay plain errors, exit 1.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

}  // namespace oneflow_sbp::cli

#endif  // CLI_COMMAND_LINE_H_
