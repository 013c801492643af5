// sbp: the oneflow_sbp command-line tool.
//
//   sbp <command> [flags]        run a command
//   sbp help [command]           what the commands do, with examples
//   sbp --version                the version and how this binary was built
//
// Every command prints its result on stdout (--format picks among the
// forms it has) and exits 0; a failure prints one line "sbp <command>:
// <why>" on stderr and exits 1; a wrong command line exits 2 (the contract
// is in cli/command_table.h). The commands, their flags, formats and
// runners are the table in cli/command_table.cc.
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "io/calibration_io.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/builtin_ops.h"
#include "cli/command_line.h"
#include "cli/command_runners.h"
#include "cli/command_table.h"

namespace {

using oneflow_sbp::engine::Engine;
using oneflow_sbp::QuotedInput;
using oneflow_sbp::cli::CommandLine;
using oneflow_sbp::cli::CommandSpec;
using oneflow_sbp::cli::Commands;
using oneflow_sbp::cli::FindCommandSpec;
using oneflow_sbp::cli::Invocation;
using oneflow_sbp::cli::ReadFlagFile;

constexpr char kVersion[] = "0.21.0";

void PrintOverview() {
  std::printf(
      "sbp: explore OneFlow-style SBP layouts of distributed tensors.\n\n"
      "usage: sbp <command> [flags]     sbp help <command>     sbp --version\n\ncommands:\n");
  for (const CommandSpec& c : Commands()) std::printf("  %-9s %s\n", c.name, c.summary);
  std::printf(
      "\nNotation: S(k) splits tensor dim k, B broadcasts, P holds partial sums;\n"
      "an nd_sbp has one entry per mesh axis of the placement, e.g. (S(0), B)\n"
      "on 'cuda:0-7 [2,4]'. OneFlow's split(0)/broadcast/partial_sum and DTensor's\n"
      "Shard(0)/Replicate()/Partial() are read too, and lists such as [S(0), B].\n\n"
      "Exit status: 0 success; 1 the work failed (bad input values, a failed run,\n"
      "a check that did not hold); 2 a wrong command line (unknown command or flag,\n"
      "a flag or --format the command does not take, a mistyped value, extra words).\n");
}

void PrintVersion() {
  std::printf("sbp (oneflow_sbp) %s\nbuild: %s, cuda %s, compiler %s\n", kVersion,
#ifdef NDEBUG
              "opt",
#else
              "dbg",
#endif
#ifdef OFS_WITH_CUDA
              "on (--config=cuda)",
#else
              "off",
#endif
              __VERSION__);
}

bool IsHelpFlag(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull" ||
         arg == "help";
}

// Messages are one line of text on the terminal whatever they echo: control
// characters that escaped QuotedInput (a NUL, a newline, an ANSI escape in
// a name) are escaped here as a last line.
// A failure is exit 1; a status the command marked as a wrong command line
// (cli::IsUsageError: a flag value the command cannot use at all, such as
// `launch --nproc=0`) is exit 2, like a flag the parser refused.
int Fail(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "sbp %s: %s\n", oneflow_sbp::EscapedControls(command).c_str(),
               oneflow_sbp::EscapedControls(status.message()).c_str());
  return oneflow_sbp::cli::IsUsageError(status) ? 2 : 1;
}

// Flushes stdout and reports a failed write (a full disk, /dev/full, a
// closed pipe): exit 1 with the reason (errno of the flush, else
// `write_errno` of an earlier write), since the output is lost. Returns
// `rc` when everything was written.
int FinishStdout(const std::string& command, int rc, int write_errno) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return rc;
  const int err = errno != 0 ? errno : write_errno;
  std::fprintf(stderr, "sbp%s%s: cannot write the output to stdout: %s\n",
               command.empty() ? "" : " ", command.c_str(),
               err != 0 ? std::strerror(err) : "I/O error");
  std::clearerr(stdout);
  return rc == 0 ? 1 : rc;
}

int Usage(const std::string& command, const std::string& why) {
  std::fprintf(stderr, "sbp%s%s: %s\n", command.empty() ? "" : " ",
               oneflow_sbp::EscapedControls(command).c_str(),
               oneflow_sbp::EscapedControls(why).c_str());
  return 2;
}

// The engine every command shares; --calibration (where the command takes
// it) prices the planner's links.
absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(const CommandLine& cl) {
  Engine::Options options;
  if (const std::optional<std::string> path = cl.flags.Text("calibration")) {
    OFS_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(*path, "calibration"));
    OFS_ASSIGN_OR_RETURN(options.calibration,
                         oneflow_sbp::io::ParseCalibration(
                             text, absl::StrCat("calibration file ", oneflow_sbp::QuotedInput(*path))));
  }
  return Engine::Create(std::move(options));
}

// argv with `--execute` alone made --execute=threads (a text flag needs a
// value), up to a `--` that starts a launched command.
std::vector<std::string> Arguments(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    args.push_back(argv[i]);
    if (args.back() == "--") {
      for (++i; i < argc; ++i) args.push_back(argv[i]);
      break;
    }
    if (args.back() == "--execute") args.back() = "--execute=threads";
  }
  return args;
}

// `sbp`, `sbp help [command]`, `sbp <command> --help`, `sbp --version`:
// the exit code, or nullopt when the command line asks for none of these.
std::optional<int> HelpOrVersion(const std::vector<std::string>& args) {
  if (args.empty()) {
    PrintOverview();
    return 2;
  }
  std::string first_word;
  bool wants_help = false;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "--version") {
      PrintVersion();
      return 0;
    }
    if (IsHelpFlag(arg)) {
      wants_help = true;
    } else if (first_word.empty() && !absl::StartsWith(arg, "-")) {
      first_word = arg;
    }
  }
  if (!wants_help) return std::nullopt;
  // `sbp help parse` names the command after "help".
  std::string topic = first_word;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "help") topic = args[i + 1];
  }
  if (topic.empty() || topic == "help") {
    PrintOverview();
    return 0;
  }
  const CommandSpec* c = FindCommandSpec(topic);
  if (c == nullptr) return Usage("", absl::StrCat("unknown command ", QuotedInput(topic),
                                                  "; run `sbp help`"));
  std::printf("%s\n", c->help);
  return 0;
}

// Whether the command line suits `spec`: every given flag is one it takes,
// --format is one of its forms, no extra words. The reason when not.
std::optional<std::string> CommandLineError(const CommandSpec& spec, const CommandLine& cl) {
  for (const std::string& flag : cl.given) {
    if (!spec.TakesFlag(flag)) {
      return absl::StrCat("--", flag, " is not a flag of ", spec.name, "; see `sbp help ",
                          spec.name, "`");
    }
  }
  if (cl.flags.given("format") && !spec.TakesFormat(cl.flags.String("format"))) {
    return absl::StrCat("unknown --format ", QuotedInput(cl.flags.String("format")), ": ",
                        spec.name, " prints ", spec.formats);
  }
  if (spec.max_positional >= 0 &&
      cl.positional.size() > static_cast<size_t>(spec.max_positional)) {
    const std::string& extra = cl.positional[spec.max_positional];
    const std::string name = spec.name;
    const char* hint = name == "infer" ? "inputs go in --input=..., "
                       : name == "plan" ? "the program goes in --program=FILE, "
                       : name == "ops"  ? "give at most one op name, "
                                        : "";
    return absl::StrCat("unexpected argument ", QuotedInput(extra), "; ", hint, "see `sbp help ",
                        spec.name, "`");
  }
  return std::nullopt;
}

}  // namespace

// --timeout and --heartbeat_timeout become OFS_TIMEOUT and
// OFS_HEARTBEAT_TIMEOUT in this process's environment, before any thread
// starts: the rank processes it launches inherit them, and the rank runner
// (cli/rank_runner.h) and ConnectFromEnvironment read them there. The
// flags win over a value the shell exported.
std::optional<std::string> ExportTimeouts(const CommandLine& cl) {
  const struct {
    const char* flag;
    const char* variable;
    double value;
    bool positive;
  } timeouts[] = {
      {"timeout", "OFS_TIMEOUT", cl.flags.Double("timeout"), true},
      {"heartbeat_timeout", "OFS_HEARTBEAT_TIMEOUT", cl.flags.Double("heartbeat_timeout"),
       false},
  };
  for (const auto& t : timeouts) {
    if (!cl.flags.given(t.flag)) continue;
    if (!(t.value >= 0) || (t.positive && t.value == 0) || t.value > 1e9) {
      return absl::StrCat("--", t.flag, "=", t.value, ": seconds, ",
                          t.positive ? "above 0" : "0 (off) or more");
    }
    setenv(t.variable, absl::StrCat(t.value).c_str(), 1);
  }
  return std::nullopt;
}

int RunMain(int argc, char** argv, int* write_errno) {
  const std::vector<std::string> args = Arguments(argc, argv);
  if (const std::optional<int> done = HelpOrVersion(args)) return *done;

  // The tool parses its flags itself, once (command_line.h): every wrong
  // command line is one line "sbp <command>: <why>" and exit 2, and no flag
  // reads a file behind the user's back (absl's --flagfile is refused).
  CommandLine cl;
  const absl::Status parsed = oneflow_sbp::cli::ParseCommandLine(args, &cl);
  if (!parsed.ok()) return Usage(cl.command, std::string(parsed.message()));
  if (cl.command.empty()) {
    PrintOverview();
    return 2;
  }
  const CommandSpec* spec = FindCommandSpec(cl.command);
  if (spec == nullptr) {
    return Usage("", absl::StrCat("unknown command ", QuotedInput(cl.command), "; run `sbp help`"));
  }
  if (const std::optional<std::string> why = CommandLineError(*spec, cl)) {
    return Usage(cl.command, *why);
  }
  if (const std::optional<std::string> why = ExportTimeouts(cl)) return Usage(cl.command, *why);
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(cl);
  if (!engine.ok()) return Fail(cl.command, engine.status());

  int exit_code = 0;
  const std::string format = cl.flags.given("format")
                                 ? cl.flags.String("format")
                                 : std::string(absl::string_view(spec->formats).substr(
                                       0, absl::string_view(spec->formats).find('|')));
  const Invocation in{cl, **engine, format, &exit_code};
  absl::StatusOr<std::string> out = spec->run(in);
  if (!out.ok()) return Fail(cl.command, out.status());
  if (std::fwrite(out->data(), 1, out->size(), stdout) != out->size()) *write_errno = errno;
  return exit_code;  // main checks that stdout took it all
}

// Allocation failure (a memory cap, a huge request) and a thread the system
// cannot start are errors like any other, not aborts: a message and exit
// status 1. The commands turn them into kResourceExhausted where they
// happen; this is the last line for what they miss.
int main(int argc, char** argv) {
  int rc = 1;
  int write_errno = 0;
  try {
    rc = RunMain(argc, argv, &write_errno);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "sbp: out of memory (RESOURCE_EXHAUSTED); the request is too large "
                         "for this machine's memory limit\n");
    return 1;
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "sbp: cannot start a thread (RESOURCE_EXHAUSTED): %s\n", e.what());
    return 1;
  }
  // Every command's output (and help, the version, the overview) goes to
  // stdout; a message names the command when the first word is one.
  const std::string command = argc > 1 && FindCommandSpec(argv[1]) != nullptr ? argv[1] : "";
  return FinishStdout(command, rc, write_errno);
}
