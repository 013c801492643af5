// CommandSpec: what one `sbp` command is, takes and runs: the one table of
// the commands (command_table.cc), each with its flags, its formats and its
// runner. The tool checks a command line against its command's spec before
// running anything:
//
//   const CommandSpec* c = FindCommandSpec("plan");
//   c->TakesFlag("backend");     // false: `sbp plan --backend=gloo` is exit 2
//   c->TakesFormat("dot");       // true
//
// The exit-code contract of every command (written in `sbp help` and
// pinned by tests/cli/sbp_exit_codes_test.sh): 0 success; 1 the work failed
// (bad input values, a failed run, a check that did not hold); 2 a wrong
// command line (unknown command or flag, a flag the command does not take,
// a --format it does not print, a flag value of the wrong type, extra
// words, and a value of launch's own flags it cannot use, such as
// `--nproc=0`: cli::UsageError in command_line.h).
#ifndef CLI_COMMAND_TABLE_H_
#define CLI_COMMAND_TABLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace oneflow_sbp::cli {

struct Invocation;  // command_runners.h
// A command's work: its output, or the failure (exit 1).
using Runner = absl::StatusOr<std::string> (*)(const Invocation&);

struct CommandSpec {
  const char* name;
  const char* summary;
  // The flags it reads, space-separated ("" for none).
  const char* flags;
  // Its --format values, '|'-separated, the first the default ("" when it
  // prints no structured output: then --format is not a flag of it).
  const char* formats;
  // Plain words it takes: -1 any number, else at most this many.
  int max_positional;
  const char* help;
  Runner run;

  bool TakesFlag(absl::string_view flag) const {
    if (flag == "format") return formats[0] != '\0';
    for (absl::string_view f : absl::StrSplit(flags, ' ', absl::SkipEmpty())) {
      if (f == flag) return true;
    }
    return false;
  }
  bool TakesFormat(absl::string_view format) const {
    for (absl::string_view f : absl::StrSplit(formats, '|', absl::SkipEmpty())) {
      if (f == format) return true;
    }
    return false;
  }
};

// In the order `sbp help` lists them.
absl::Span<const CommandSpec> Commands();
// nullptr for an unknown name.
const CommandSpec* FindCommandSpec(absl::string_view name);

}  // namespace oneflow_sbp::cli

#endif  // CLI_COMMAND_TABLE_H_
