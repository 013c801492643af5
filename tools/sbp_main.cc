// sbp: the oneflow_sbp command-line tool.
//
//   sbp <command> [flags]        run a command
//   sbp help [command]           what the commands do, with examples
//
// Every command prints its result on stdout (--format picks text, json or
// textproto) and exits 0; bad input prints one line "sbp <command>: <why>"
// on stderr and exits 1; a wrong command line exits 2.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tools/cmd_parse.h"
#include "tools/cmd_slices.h"

ABSL_FLAG(std::string, format, "text",
          "Output format: text, json (proto field names) or textproto.");
ABSL_FLAG(std::optional<std::string>, sbp, std::nullopt,
          "One SBP: B, P or S(<axis>).");
ABSL_FLAG(std::optional<std::string>, nd_sbp, std::nullopt,
          "An NdSbp, one SBP per mesh axis: '(S(0), B)'; 'S(0)' on a 1-D "
          "placement. JSON or text-format NdSbp messages work too.");
ABSL_FLAG(std::optional<std::string>, placement, std::nullopt,
          "Devices and mesh: 'cpu:0-3', 'cuda:0-7 [2,4]', 'cpu:0,2,4,6 [2,2]'. "
          "JSON or text-format ParallelConf messages work too.");
ABSL_FLAG(std::optional<std::string>, shape, std::nullopt,
          "Logical tensor shape: 10,6 or [10,6].");
ABSL_FLAG(std::string, dtype, "f32",
          "Element type: f16 bf16 f32 f64 i8 i32 i64 u8 bool.");

namespace {

struct Command {
  const char* name;
  const char* summary;
  const char* help;
};

constexpr Command kCommands[] = {
    {"parse", "normalise and validate sbp, nd_sbp, placement, shape, dtype",
     R"help(sbp parse [VALUE...] [--sbp=S] [--nd_sbp=ND] [--placement=PL]
          [--shape=SHAPE] [--dtype=DT] [--format=text|json|textproto]

Reads each value, checks it, and prints its canonical form. Values may be
given as flags or as plain arguments (recognised by their form).

  $ sbp parse '(S(0),B)' 'cuda:0-7 [2,4]'
  nd_sbp:    (S(0), B)   (long form S(0),B, 2 mesh axes)
  placement: cuda:0-7 [2,4]   (8 ranks, hierarchy [2,4])

  $ sbp parse --nd_sbp='S(0),B' --format=json     # OneFlow's NdSbp message
  $ sbp parse --nd_sbp='{"sbp_parallel":[{"broadcast_parallel":{}}]}'

Forms: SBP is B, P or S(<axis>) (axis >= 0). An NdSbp is one SBP per mesh
axis, '(S(0), B)' or 'S(0),B'. A placement is <cpu|cuda>:<ranks>[ [mesh]]
where ranks are numbers and lo-hi runs and the mesh's product is the rank
count. Ranks are ordered ascending, as OneFlow numbers devices.)help"},
    {"slices", "show the index range every rank holds of a tensor",
     R"help(sbp slices --shape=SHAPE --placement=PL --nd_sbp=ND [--dtype=DT]
           [--format=text|json|textproto]

For a logical tensor laid out as ND over PL, prints every rank's mesh
coordinate and the half-open index range it holds of each dim.

  $ sbp slices --shape=10,6 --placement='cpu:0-3 [2,2]' --nd_sbp='(S(0),S(1))'

Splits are balanced as in OneFlow: an extent d cut into n parts gives the
first d % n parts one extra element, and mesh axes apply in order to the
range already split (so (S(0),S(0)) on [2,2] cuts rows twice). B and P keep
the full range; P ranks hold addends. Extents smaller than the parts leave
some ranks with empty ranges, shown as "(empty)".)help"},
};

void PrintOverview() {
  std::printf(
      "sbp: explore OneFlow-style SBP layouts of distributed tensors.\n\n"
      "usage: sbp <command> [flags]     sbp help <command>\n\ncommands:\n");
  for (const Command& c : kCommands) std::printf("  %-8s %s\n", c.name, c.summary);
  std::printf(
      "\nNotation: S(k) splits tensor dim k, B broadcasts, P holds partial "
      "sums;\nan nd_sbp has one entry per mesh axis of the placement, e.g. "
      "(S(0), B)\non 'cuda:0-7 [2,4]'.\n");
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

bool IsHelpFlag(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull" ||
         arg == "help";
}

int Fail(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "sbp %s: %s\n", command.c_str(),
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("sbp <command> [flags]; run `sbp help` for the commands");
  // Help is ours, per command: scan before absl parses the flags.
  std::string first_word;
  bool wants_help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (IsHelpFlag(arg)) {
      wants_help = true;
    } else if (first_word.empty() && !absl::StartsWith(arg, "-")) {
      first_word = arg;
    }
  }
  if (argc == 1 || wants_help) {
    if (!first_word.empty() && first_word != "help") {
      const Command* c = FindCommand(first_word);
      if (c == nullptr) {
        std::fprintf(stderr, "sbp: unknown command '%s'; run `sbp help`\n",
                     first_word.c_str());
        return 2;
      }
      std::printf("%s\n", c->help);
      return 0;
    }
    // `sbp help parse`
    for (int i = 1; i + 1 < argc; ++i) {
      if (std::string(argv[i]) == "help") {
        const Command* c = FindCommand(argv[i + 1]);
        if (c != nullptr) {
          std::printf("%s\n", c->help);
          return 0;
        }
      }
    }
    PrintOverview();
    return argc == 1 ? 2 : 0;
  }

  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    PrintOverview();
    return 2;
  }
  const std::string command = args[1];
  std::vector<std::string> positional(args.begin() + 2, args.end());
  const std::string format = absl::GetFlag(FLAGS_format);

  absl::StatusOr<std::string> out = absl::InvalidArgumentError("");
  if (command == "parse") {
    oneflow_sbp::cli::ParseOptions o;
    o.sbp = absl::GetFlag(FLAGS_sbp);
    o.nd_sbp = absl::GetFlag(FLAGS_nd_sbp);
    o.placement = absl::GetFlag(FLAGS_placement);
    o.shape = absl::GetFlag(FLAGS_shape);
    // --dtype has a default for the other commands; only an explicit one
    // (or a positional one) is parsed here.
    for (int i = 1; i < argc; ++i) {
      if (absl::StartsWith(argv[i], "--dtype")) o.dtype = absl::GetFlag(FLAGS_dtype);
    }
    o.positional = positional;
    o.format = format;
    out = oneflow_sbp::cli::RunParse(o);
  } else if (command == "slices") {
    if (!positional.empty()) {
      return Fail(command, absl::InvalidArgumentError(absl::StrCat(
                               "unexpected argument '", positional[0],
                               "'; see `sbp help slices`")));
    }
    oneflow_sbp::cli::SlicesOptions o;
    o.shape = absl::GetFlag(FLAGS_shape).value_or("");
    o.dtype = absl::GetFlag(FLAGS_dtype);
    o.placement = absl::GetFlag(FLAGS_placement).value_or("");
    o.nd_sbp = absl::GetFlag(FLAGS_nd_sbp).value_or("");
    o.format = format;
    out = oneflow_sbp::cli::RunSlices(o);
  } else {
    std::fprintf(stderr, "sbp: unknown command '%s'; run `sbp help`\n",
                 command.c_str());
    return 2;
  }
  if (!out.ok()) return Fail(command, out.status());
  std::fputs(out->c_str(), stdout);
  return 0;
}
