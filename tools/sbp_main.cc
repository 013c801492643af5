// sbp: the oneflow_sbp command-line tool.
//
//   sbp <command> [flags]        run a command
//   sbp help [command]           what the commands do, with examples
//
// Every command prints its result on stdout (--format picks text, json or
// textproto) and exits 0; bad input prints one line "sbp <command>: <why>"
// on stderr and exits 1; a wrong command line exits 2.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ops/builtin_ops.h"
#include "tools/cmd_boxing.h"
#include "tools/cmd_demo.h"
#include "tools/cmd_infer.h"
#include "tools/cmd_ops.h"
#include "tools/cmd_parse.h"
#include "tools/cmd_plan.h"
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
ABSL_FLAG(std::optional<std::string>, op, std::nullopt, "Op type name, e.g. matmul.");
ABSL_FLAG(std::optional<std::string>, from, std::nullopt, "Source nd_sbp for boxing.");
ABSL_FLAG(std::optional<std::string>, to, std::nullopt, "Destination nd_sbp for boxing.");
ABSL_FLAG(std::optional<std::string>, to_placement, std::nullopt,
          "Destination placement for boxing (default: --placement).");
ABSL_FLAG(std::optional<std::string>, cost, std::nullopt,
          "Cost policy: oneflow (OneFlow's choices, the default) or planned (rank by "
          "the cheapest real boxing plan).");
ABSL_FLAG(bool, explain, false, "Also list every candidate and why it won or lost.");
ABSL_FLAG(std::optional<std::string>, request, std::nullopt,
          "Inference request file (JSON or text-format InferRequestProto); - for stdin.");
ABSL_FLAG(std::optional<std::string>, program, std::nullopt,
          "Program file for `sbp plan` (JSON, see docs/PLANNING.md); - for stdin.");
ABSL_FLAG(std::optional<std::string>, mesh, std::nullopt,
          "Mesh for `sbp plan`: replaces the program placement's hierarchy, e.g. 2,2.");
ABSL_FLAG(std::optional<std::string>, calibration, std::nullopt,
          "Calibration file (not supported yet: no file format exists).");
ABSL_FLAG(std::optional<std::string>, memory_cap, std::nullopt,
          "Per-rank memory cap in bytes for `sbp plan`.");

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
    {"infer", "choose the SBP signature of one op call, and explain it",
     R"help(sbp infer --op=OP --placement=PL --input=TENSOR [--input=TENSOR ...]
          [--attr=NAME=VALUE ...] [--constraint=BN=ND ...] [--cost=oneflow|planned]
          [--explain] [--format=text|json|textproto|table] [--request=FILE|-]

Runs the engine on one op call: lists the op's candidate signatures, expands
them over the mesh, filters and ranks them as OneFlow does, and prints the
winner with every blob's layout and which inputs need boxing.

  $ sbp infer --op=matmul --attr=transpose_b=true --placement='cpu:0-3 [2,2]' \
      --input='f32[64,32]:(S(0),B)' --input='f32[48,32]:(B,S(0))'

TENSOR is <dtype>[<dims>]:<producer nd_sbp>, e.g. f32[64,32]:(S(0),B); on a
1-D placement S(0) may stand for (S(0)). Inputs go in the op's declared order
(`sbp ops OP`); to place optional inputs write NAME=TENSOR for every input
(e.g. --input=x=... --input=gamma=...). Attribute values: ints, floats,
true/false, comma lists (perm=1,0,2), strings. A constraint pins a blob's
layout (in-place ops): --constraint=a_0='(S(0),B)'.

--cost=oneflow (default) chooses exactly as OneFlow does. --cost=planned
prices each input's conversion by the cheapest real boxing plan (the plan
`sbp boxing` prints) and breaks ties by fewer boxed inputs; see
docs/BOXING.md.

--explain (or --format=table) lists every candidate with its order value,
copy cost and status (chosen, ranked, filtered_by_shape,
filtered_by_constraint). --request reads the same request as a protobuf
message (InferRequestProto in proto/infer.proto) in JSON or text format;
flags given with it override its fields.)help"},
    {"boxing", "the cheapest exact plan from one layout to another",
     R"help(sbp boxing --shape=SHAPE --placement=PL --from=ND --to=ND [--dtype=DT]
           [--to_placement=PL] [--format=text|json|textproto|dot]

Plans the collectives that convert a tensor laid out as --from on --placement
into --to on --to_placement (default: the same placement), and prints every
step with its rank groups and the exact bytes each rank sends and receives.

  $ sbp boxing --shape=8,6 --placement='cpu:0-3 [2,2]' --from='(S(0),S(1))' --to='(S(1),S(0))'
  $ sbp boxing --shape=8,6 --placement=cpu:0-3 --from='S(0)' --to=B --to_placement=cpu:4-7
  $ sbp boxing ... --format=dot | dot -Tpng > plan.png

Moves: all-gather (S->B), reduce-scatter (P->S), all-reduce (P->B),
all-to-all (S->S), local slices (B->S, B->P, S->P) on one mesh axis or several
flattened, and exact point-to-point exchanges (also between placements).
Uneven splits move exactly the ranges ranks hold; nothing is padded. The
cost is latency + max per-rank bytes / bandwidth per step (defaults: 25 GB/s,
10 us per mesh axis). The report ends with the naive per-axis plan (DTensor's
order) for comparison.)help"},
    {"plan", "choose every op's signature jointly over a whole program",
     R"help(sbp plan --program=FILE.json [--mesh=2,2] [--memory_cap=BYTES]
          [--calibration=FILE] [--format=text|json|dot]

Reads a program (a placement, named tensors, ops in order; docs/PLANNING.md)
and chooses every op's N-D signature and every free tensor's layout jointly,
minimising communication (the boxing plans `sbp boxing` prints) plus compute
(matmul flops, other ops' bytes) per rank. It prints every op's signature,
the boxing on every edge, and totals beside those of the eager greedy choice
(op by op as `sbp infer` chooses, free tensors all-B).

  $ sbp plan --program=tests/testdata/plan_mlp.json
  $ sbp plan --program=model.json --mesh=2,4 --format=json
  $ sbp plan --program=model.json --format=dot | dot -Tsvg > plan.svg

A tensor listed with "nd_sbp" is a marked input and keeps its layout; one
without is free (a parameter). --mesh replaces the placement's hierarchy.
--memory_cap bounds every rank's parameters plus activations. The solver
eliminates chain and leaf ops exactly and enumerates what remains when it is
small (else local search from the greedy and all-B choices), so the plan is
never worse than greedy. JSON has total_time_s, greedy_total_time_s, tensors
by name with their nd_sbp, and ops with their nd_sbp_signature.)help"},
    {"demo", "a short tour on built-in examples",
     R"help(sbp demo

Runs a few fixed examples of the other commands and prints them with their
command lines: layouts, exact uneven slices, and signature inference.)help"},
    {"ops", "list the registered ops, their args and attributes",
     R"help(sbp ops [OP] [--format=text|json|textproto]

Without OP, one line per op: inputs -> outputs and attributes with defaults.
'?' marks optional args, '...' variadic ones, and '!' ops that have no SBP
rule and only ever broadcast. With OP, that op in detail.)help"},
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

// --input, --attr and --constraint repeat, and their values contain commas,
// which absl's list flags would split; they are taken out of argv here.
struct RepeatedFlags {
  std::vector<std::string> input;
  std::vector<std::string> attr;
  std::vector<std::string> constraint;
};

std::vector<char*> ExtractRepeatedFlags(int argc, char** argv, RepeatedFlags* out,
                                        std::string* error) {
  std::vector<char*> rest;
  const std::pair<const char*, std::vector<std::string>*> kFlags[] = {
      {"input", &out->input}, {"attr", &out->attr}, {"constraint", &out->constraint}};
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    bool taken = false;
    for (const auto& [name, values] : kFlags) {
      for (const std::string& prefix : {std::string("--") + name, std::string("-") + name}) {
        if (arg == prefix) {
          if (i + 1 >= argc) {
            *error = absl::StrCat("--", name, " needs a value");
            return rest;
          }
          values->push_back(argv[++i]);
          taken = true;
        } else if (absl::StartsWith(arg, prefix + "=")) {
          values->push_back(arg.substr(prefix.size() + 1));
          taken = true;
        }
        if (taken) break;
      }
      if (taken) break;
    }
    if (!taken) rest.push_back(argv[i]);
  }
  return rest;
}

// The contents of the file a flag names ("-": stdin).
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot open --", flag, " file '", path, "'"));
  }
  std::string data;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  if (f != stdin) std::fclose(f);
  return data;
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

  // Unknown flags are a wrong command line (exit 2), reported in one line
  // before absl's parser would exit 1.
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--" ) break;
    if (!absl::StartsWith(arg, "-") || arg == "-") continue;
    absl::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    name = name.substr(0, name.find('='));
    if (name == "input" || name == "attr" || name == "constraint") continue;
    if (absl::FindCommandLineFlag(name) == nullptr &&
        !(absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name.substr(2)) != nullptr)) {
      std::fprintf(stderr, "sbp: unknown flag --%s; see `sbp help%s%s`\n",
                   std::string(name).c_str(), first_word.empty() ? "" : " ",
                   first_word.c_str());
      return 2;
    }
  }
  RepeatedFlags repeated;
  std::string flag_error;
  std::vector<char*> kept = ExtractRepeatedFlags(argc, argv, &repeated, &flag_error);
  if (!flag_error.empty()) {
    std::fprintf(stderr, "sbp: %s\n", flag_error.c_str());
    return 2;
  }
  std::vector<char*> args =
      absl::ParseCommandLine(static_cast<int>(kept.size()), kept.data());
  if (args.size() < 2) {
    PrintOverview();
    return 2;
  }
  const std::string command = args[1];
  std::vector<std::string> positional(args.begin() + 2, args.end());
  const std::string format = absl::GetFlag(FLAGS_format);

  oneflow_sbp::Engine::Options engine_options;
  engine_options.registry =
      oneflow_sbp::Engine::Options::Borrow(oneflow_sbp::ops::BuiltinOpRegistry());
  absl::StatusOr<std::unique_ptr<oneflow_sbp::Engine>> engine =
      oneflow_sbp::Engine::Create(std::move(engine_options));
  if (!engine.ok()) return Fail(command, engine.status());

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
  } else if (command == "infer") {
    if (!positional.empty()) {
      return Fail(command, absl::InvalidArgumentError(absl::StrCat(
                               "unexpected argument '", positional[0],
                               "'; inputs go in --input=..., see `sbp help infer`")));
    }
    oneflow_sbp::cli::InferOptions o;
    o.op = absl::GetFlag(FLAGS_op);
    o.attrs = repeated.attr;
    o.placement = absl::GetFlag(FLAGS_placement);
    o.inputs = repeated.input;
    o.constraints = repeated.constraint;
    o.cost = absl::GetFlag(FLAGS_cost);
    o.explain = absl::GetFlag(FLAGS_explain);
    o.format = format;
    if (const std::optional<std::string> path = absl::GetFlag(FLAGS_request)) {
      absl::StatusOr<std::string> body = ReadFlagFile(*path, "request");
      if (!body.ok()) return Fail(command, body.status());
      o.request = *body;
    }
    out = oneflow_sbp::cli::RunInfer(o, **engine);
  } else if (command == "boxing") {
    oneflow_sbp::cli::BoxingOptions o;
    o.shape = absl::GetFlag(FLAGS_shape).value_or("");
    o.dtype = absl::GetFlag(FLAGS_dtype);
    o.placement = absl::GetFlag(FLAGS_placement).value_or("");
    o.from = absl::GetFlag(FLAGS_from).value_or("");
    o.to = absl::GetFlag(FLAGS_to).value_or("");
    o.to_placement = absl::GetFlag(FLAGS_to_placement);
    o.format = format;
    out = oneflow_sbp::cli::RunBoxing(o, **engine);
  } else if (command == "plan") {
    if (!positional.empty()) {
      return Fail(command, absl::InvalidArgumentError(absl::StrCat(
                               "unexpected argument '", positional[0],
                               "'; the program goes in --program=FILE, see `sbp help plan`")));
    }
    const std::optional<std::string> path = absl::GetFlag(FLAGS_program);
    if (!path.has_value()) {
      return Fail(command, absl::InvalidArgumentError(
                               "--program is required, e.g. --program=tests/testdata/plan_mlp.json"));
    }
    absl::StatusOr<std::string> body = ReadFlagFile(*path, "program");
    if (!body.ok()) return Fail(command, body.status());
    oneflow_sbp::cli::PlanOptions o;
    o.program = *std::move(body);
    o.mesh = absl::GetFlag(FLAGS_mesh);
    o.calibration = absl::GetFlag(FLAGS_calibration);
    o.memory_cap = absl::GetFlag(FLAGS_memory_cap);
    o.format = format;
    out = oneflow_sbp::cli::RunPlan(o, **engine);
  } else if (command == "demo") {
    out = oneflow_sbp::cli::RunDemo(**engine);
  } else if (command == "ops") {
    if (positional.size() > 1) {
      return Fail(command, absl::InvalidArgumentError("give at most one op name"));
    }
    out = oneflow_sbp::cli::RunOps(positional.empty() ? "" : positional[0], format,
                                   (*engine)->registry());
  } else {
    std::fprintf(stderr, "sbp: unknown command '%s'; run `sbp help`\n",
                 command.c_str());
    return 2;
  }
  if (!out.ok()) return Fail(command, out.status());
  std::fputs(out->c_str(), stdout);
  return 0;
}
