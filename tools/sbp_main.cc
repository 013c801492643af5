// sbp: the oneflow_sbp command-line tool.
//
//   sbp <command> [flags]        run a command
//   sbp help [command]           what the commands do, with examples
//
// Every command prints its result on stdout (--format picks text, json or
// textproto) and exits 0; bad input prints one line "sbp <command>: <why>"
// on stderr and exits 1; a wrong command line exits 2.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ops/builtin_ops.h"
#include "boxing/calibration_io.h"
#include "oneflow_sbp/quoted_input.h"
#include "tools/bounded_read.h"
#include "tools/cmd_boxing.h"
#include "tools/cmd_calibrate.h"
#include "tools/cmd_demo.h"
#include "tools/cmd_tour.h"
#include "tools/cmd_infer.h"
#include "tools/cmd_launch.h"
#include "tools/cmd_ops.h"
#include "tools/cmd_parse.h"
#include "tools/cmd_plan.h"
#include "tools/cmd_slices.h"
#include "tools/cmd_verify.h"
#include "tools/command_line.h"

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
ABSL_FLAG(std::optional<std::string>, calibration, std::nullopt,
          "Link calibration file (text-format CalibrationProto, as `sbp calibrate` writes) "
          "for the planner, the planned cost policy and `sbp plan`.");
ABSL_FLAG(std::optional<std::string>, execute, std::nullopt,
          "boxing: also run the plan on real ranks: threads (default) or gloo. plan: run the plan and the greedy choice on rank threads.");
ABSL_FLAG(int, nproc, 0, "Rank processes or threads (launch, calibrate, boxing --execute).");
ABSL_FLAG(int, nnodes, 1, "launch: number of nodes.");
ABSL_FLAG(int, node_rank, 0, "launch: this node's index.");
ABSL_FLAG(std::string, master_addr, "127.0.0.1", "launch: where rank 0 serves the rendezvous.");
ABSL_FLAG(int, master_port, 0, "launch: rendezvous port (0: pick a free one, one node only).");
ABSL_FLAG(std::string, backend, "threads", "calibrate: threads or gloo.");
ABSL_FLAG(std::optional<std::string>, out, std::nullopt, "calibrate: file to write.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of generated data.");
ABSL_FLAG(std::string, device, "cpu",
          "verify, demo: where the ranks run the kernels, cpu or cuda (cuda needs a "
          "--config=cuda build and a GPU).");
ABSL_FLAG(std::string, mesh, "2,2",
          "demo: mesh extents (data parallel, tensor parallel). plan: replaces the program "
          "placement's hierarchy (only when given). verify: the one mesh to check (only "
          "when given).");
ABSL_FLAG(int64_t, batch, 4, "demo: batch size.");
ABSL_FLAG(int64_t, seq, 16, "demo: sequence length.");
ABSL_FLAG(int64_t, hidden, 64, "demo: hidden size.");
ABSL_FLAG(int64_t, heads, 4, "demo: attention heads.");
ABSL_FLAG(int64_t, ffn, 128, "demo: MLP inner size.");
ABSL_FLAG(int64_t, vocab, 128, "demo: vocabulary size.");
ABSL_FLAG(int, layers, 1, "demo: decoder layers.");
ABSL_FLAG(int, steps, 3, "demo: training steps.");
ABSL_FLAG(std::optional<std::string>, trace, std::nullopt,
          "demo: write a Chrome trace-event JSON of every rank (Perfetto).");
ABSL_FLAG(bool, all_ops, false, "demo: list backward ops too.");
ABSL_FLAG(std::optional<std::string>, record, std::nullopt,
          "demo: write step 0's forward as a program for `sbp plan` (and a .marked twin).");
ABSL_FLAG(std::optional<std::string>, request, std::nullopt,
          "Inference request file (JSON or text-format InferRequestProto); - for stdin.");
ABSL_FLAG(std::optional<std::string>, program, std::nullopt,
          "Program file for `sbp plan` (JSON, see docs/PLANNING.md); - for stdin.");
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
           [--to_placement=PL] [--execute[=threads|gloo]] [--nproc=N]
           [--calibration=FILE] [--format=text|json|textproto|dot]

Plans the collectives that convert a tensor laid out as --from on --placement
into --to on --to_placement (default: the same placement), and prints every
step with its rank groups and the exact bytes each rank sends and receives.
--execute[=threads|gloo] also runs the plan on real ranks (threads of this
process, or Gloo processes it launches) with seeded integer-valued data,
checks the result against the full tensor, and prints every rank's measured
bytes next to the planned ones; it exits 1 on any difference.

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
          [--calibration=FILE] [--format=text|json|dot] [--execute [--seed=N]]

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
--calibration=FILE (as `sbp calibrate` writes it, optionally with
compute_flops_per_s and memory_bytes_per_s) prices links and compute.
--memory_cap bounds every rank's parameters plus activations. The solver
eliminates chain and leaf ops exactly and enumerates what remains when it is
small (else local search from the greedy and all-B choices), so the plan is
never worse than greedy. JSON has total_time_s, greedy_total_time_s, tensors
by name with their nd_sbp, and ops with their nd_sbp_signature.

--execute runs the program twice on one thread per rank through the eager
interpreter, with seeded leaves: once with every op constrained to the
plan's signature, once op by op as eager inference chooses. It reports the
bytes each run moved next to the cost model's prediction and the largest
difference between the two runs' outputs, and exits 1 unless the bytes
are as predicted, eager inference made the predicted greedy choices, and
the outputs agree.)help"},
    {"calibrate", "measure this machine's links for the planner",
     R"help(sbp calibrate [--backend=threads|gloo] [--nproc=N] [--out=FILE]
              [--format=text|json|textproto]

Measures, on N real ranks (threads of this process, or N Gloo processes on
this machine), the latency of one collective step (a one-element all-reduce),
the bandwidth of the bytes a rank receives in an all-gather of 8 MiB per rank,
and point-to-point latency and bandwidth (ranks 0 and 1 ping-pong). Every
mesh axis gets the collective numbers. --out writes the calibration file;
--calibration=FILE makes `sbp boxing`, `sbp infer --cost=planned` and the
engine plan with it.

  $ sbp calibrate --nproc=4 --out=calib.txtpb
  $ sbp boxing --calibration=calib.txtpb --shape=1024,1024 ...)help"},
    {"launch", "run a program as N rank processes (torchrun style)",
     R"help(sbp launch --nproc=N [--nnodes=M --node_rank=K --master_addr=HOST
           --master_port=P] -- COMMAND [ARGS...]

Starts N processes of COMMAND on this node with RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; each rank joins the Gloo
world from them. If a rank fails, the others are terminated and the error
names it. On several nodes run the same command on each with its
--node_rank and a common --master_addr/--master_port.

  $ sbp launch --nproc=4 -- sbp boxing --execute=gloo --shape=8,6 \
        --placement='cpu:0-3 [2,2]' --from='(S(0),S(1))' --to='(B,B)')help"},
    {"demo", "train a LLaMA-style block on a mesh, checked against one rank",
     R"help(sbp demo [--mesh=2,2] [--backend=threads|gloo] [--steps=3] [--layers=1]
         [--batch=4] [--seq=16] [--hidden=64] [--heads=4] [--ffn=128] [--vocab=128]
         [--trace=FILE.json] [--record=PROGRAM.json] [--all_ops] [--cost=oneflow|planned]
         [--device=cpu|cuda]

Trains a LLaMA-style decoder (RMSNorm, attention with rotary embedding and
causal scaled dot-product attention, SwiGLU MLP, residual adds, and a
cross-entropy over a vocabulary projection) for a few steps of forward,
backward and Adam, on a mesh of real ranks: threads (default) or Gloo
processes. Only inputs and weights are marked: data parallel on mesh axis 0,
Megatron column/row-parallel weights on axis 1. Prints every op of step 0
with the signature the engine chose and the boxing it inserted (planned and
measured bytes), the collectives over the run, and the loss per step; checks
the loss and every gradient against a single-rank run and exits 1 on a
mismatch or if the loss does not go down. --trace writes a Chrome
trace-event timeline per rank (ui.perfetto.dev). --record writes step 0's
forward as a program for `sbp plan` with the weights free, and a
PROGRAM.marked.json twin with the Megatron marking fixed, to compare.
--cost=planned makes every op's choice by the cheapest real boxing plan
instead of OneFlow's copy-cost formulas (see `sbp help infer`).
--device=cuda runs the ranks' kernels on the GPU, every rank thread sharing
the current GPU and boxing on device memory (threads only; needs a
--config=cuda build and a GPU); the single-rank reference stays on the CPU,
so the check also compares the CUDA kernels with the CPU ones.)help"},
    {"verify", "prove every op's SBP rule right by running its kernel",
     R"help(sbp verify [--op=OP[,OP...]] [--mesh=2,3] [--device=cpu|cuda] [--seed=N]
                [--format=text|json]

The soundness verifier. For every registered op (or --op), draws seeded
inputs with uneven and size-1 extents (indices in range, masks bool; the
per-op input recipes are in ops/kernels/verify/input_recipes.cc), runs the
CPU kernel on one rank for the reference, then under every candidate
signature on in-process ranks (threads): every 1-D candidate on [2] and
[3], every N-D candidate the engine keeps on [2,2] and [2,3], and a seeded
sample of 8 per op on [2,2,2]. Each rank gets its shard of the inputs (P
as integer addends), the outputs are assembled (P summed) and compared
with the reference in f64 (tolerance per dtype: f32 1e-5, f64 1e-9, f16
2e-3, bf16 1.6e-2, relative and absolute; integers exact).

  $ sbp verify --op=matmul
  $ sbp verify --mesh=2,3 --format=json
  $ sbp verify                       # the whole catalog

Prints per op the candidates checked and every failure (mesh, candidate
signature, blob, max error); ops without a CPU kernel or without a valid
input recipe are listed apart. Exits 1 on any failure or gap, 2 on a bad
command line (unknown op, bad mesh). --mesh checks that one mesh only (a
1-D mesh its 1-D candidates, an N-D mesh all kept N-D candidates, at most
16 ranks).

--device=cuda checks the CUDA kernels instead: the reference stays the
CPU kernel on one rank, and every candidate's shards are copied to the
GPU, run through the op's CUDA kernel and copied back to be assembled and
compared. Ops without a CUDA kernel (or whose CUDA kernel lacks the
recipe's dtype) are listed as "no cuda kernel", apart from failures, and
do not make the exit status 1. It needs a build with `bazel build
--config=cuda //tools:sbp`; the default build exits 1 saying so, and a
machine without a GPU exits 1 with "no CUDA device". See docs/KERNELS.md
and docs/GPU.md.)help"},
    {"tour", "a short tour of inference on built-in examples",
     R"help(sbp tour

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

// Why `positional` does not suit `command`, if it does not: parse takes any
// values, launch a command, ops one op name, the others none.
std::optional<std::string> UnexpectedArgument(const std::string& command,
                                              const std::vector<std::string>& positional) {
  if (command == "parse" || command == "launch") return std::nullopt;
  const size_t allowed = command == "ops" ? 1 : 0;
  if (positional.size() <= allowed) return std::nullopt;
  const char* hint = "";
  if (command == "infer") hint = "inputs go in --input=..., ";
  if (command == "plan") hint = "the program goes in --program=FILE, ";
  if (command == "ops") hint = "give at most one op name, ";
  return absl::StrCat("unexpected argument ", oneflow_sbp::QuotedInput(positional[allowed]),
                      "; ", hint, "see `sbp help ", command, "`");
}

// Only the flags defined in this file belong to the command line; absl's
// own (--flagfile, --fromenv, ...) and any a library might define do not.
bool IsOurFlag(const absl::CommandLineFlag& flag) {
  return absl::EndsWith(flag.Filename(), "tools/sbp_main.cc");
}

// The contents of the file a flag names ("-": stdin).
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  // A directory opens fine and reads as empty, which would surface later as
  // a confusing "--op is required"; say what it is.
  struct stat info;
  if (path != "-" && stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " ",
                                                   oneflow_sbp::QuotedInput(path),
                                                   " is a directory, not a file"));
  }
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot open --", flag, " file ",
                                                   oneflow_sbp::QuotedInput(path), ": ",
                                                   std::strerror(errno)));
  }
  absl::StatusOr<std::string> data = oneflow_sbp::cli::ReadBounded(
      f, absl::StrCat("--", flag, " file ", oneflow_sbp::QuotedInput(path)));
  if (f != stdin) std::fclose(f);
  return data;
}

}  // namespace

int RunMain(int argc, char** argv) {
  // `--execute` alone means --execute=threads (absl string flags need a
  // value); only before a `--` that starts a launched command.
  std::vector<std::string> storage;
  for (int i = 0; i < argc; ++i) {
    storage.push_back(argv[i]);
    if (storage.back() == "--") {
      for (++i; i < argc; ++i) storage.push_back(argv[i]);
      break;
    }
    if (storage.back() == "--execute") storage.back() = "--execute=threads";
  }
  std::vector<char*> args_with_defaults;
  for (std::string& a : storage) args_with_defaults.push_back(a.data());
  argv = args_with_defaults.data();
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
        std::fprintf(stderr, "sbp: unknown command %s; run `sbp help`\n",
                     oneflow_sbp::QuotedInput(first_word).c_str());
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

  // The tool parses its flags itself (command_line.h): every wrong command
  // line is one line "sbp <command>: <why>" and exit 2, and no flag reads a
  // file behind the user's back (absl's --flagfile is refused).
  oneflow_sbp::cli::CommandLine cl;
  const std::vector<std::string> arg_list(argv + 1, argv + argc);
  absl::Status parsed = oneflow_sbp::cli::ParseCommandLine(
      arg_list, [](const absl::CommandLineFlag& f) { return IsOurFlag(f); }, &cl);
  if (!parsed.ok()) {
    std::fprintf(stderr, "sbp%s%s: %s\n", cl.command.empty() ? "" : " ", cl.command.c_str(),
                 std::string(parsed.message()).c_str());
    return 2;
  }
  if (cl.command.empty()) {
    PrintOverview();
    return 2;
  }
  const std::string command = cl.command;
  const std::vector<std::string>& positional = cl.positional;
  if (FindCommand(command) == nullptr) {
    std::fprintf(stderr, "sbp: unknown command %s; run `sbp help`\n",
                 oneflow_sbp::QuotedInput(command).c_str());
    return 2;
  }
  // Extra words are a wrong command line (exit 2), never silently ignored.
  if (const std::optional<std::string> why = UnexpectedArgument(command, positional)) {
    std::fprintf(stderr, "sbp %s: %s\n", command.c_str(), why->c_str());
    return 2;
  }
  const std::string format = absl::GetFlag(FLAGS_format);

  oneflow_sbp::Engine::Options engine_options;
  engine_options.registry =
      oneflow_sbp::Engine::Options::Borrow(oneflow_sbp::ops::BuiltinOpRegistry());
  if (const std::optional<std::string> path = absl::GetFlag(FLAGS_calibration)) {
    absl::StatusOr<oneflow_sbp::boxing::Calibration> c = oneflow_sbp::boxing::LoadCalibration(*path);
    if (!c.ok()) return Fail(command, c.status());
    engine_options.calibration = *std::move(c);
  }
  absl::StatusOr<std::unique_ptr<oneflow_sbp::Engine>> engine =
      oneflow_sbp::Engine::Create(std::move(engine_options));
  if (!engine.ok()) return Fail(command, engine.status());

  int exit_code = 0;
  absl::StatusOr<std::string> out = absl::InvalidArgumentError("");
  if (command == "parse") {
    oneflow_sbp::cli::ParseOptions o;
    o.sbp = absl::GetFlag(FLAGS_sbp);
    o.nd_sbp = absl::GetFlag(FLAGS_nd_sbp);
    o.placement = absl::GetFlag(FLAGS_placement);
    o.shape = absl::GetFlag(FLAGS_shape);
    // --dtype has a default for the other commands; only an explicit one
    // (or a positional one) is parsed here.
    if (cl.given.contains("dtype")) o.dtype = absl::GetFlag(FLAGS_dtype);
    o.positional = positional;
    o.format = format;
    out = oneflow_sbp::cli::RunParse(o);
  } else if (command == "slices") {
    oneflow_sbp::cli::SlicesOptions o;
    o.shape = absl::GetFlag(FLAGS_shape).value_or("");
    o.dtype = absl::GetFlag(FLAGS_dtype);
    o.placement = absl::GetFlag(FLAGS_placement).value_or("");
    o.nd_sbp = absl::GetFlag(FLAGS_nd_sbp).value_or("");
    o.format = format;
    out = oneflow_sbp::cli::RunSlices(o);
  } else if (command == "infer") {
    oneflow_sbp::cli::InferOptions o;
    o.op = absl::GetFlag(FLAGS_op);
    o.attrs = cl.attr;
    o.placement = absl::GetFlag(FLAGS_placement);
    o.inputs = cl.input;
    o.constraints = cl.constraint;
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
    o.execute = absl::GetFlag(FLAGS_execute);
    o.nproc = absl::GetFlag(FLAGS_nproc);
    o.seed = absl::GetFlag(FLAGS_seed);
    out = oneflow_sbp::cli::RunBoxing(o, **engine, &exit_code);
  } else if (command == "calibrate") {
    oneflow_sbp::cli::CalibrateOptions o;
    o.backend = absl::GetFlag(FLAGS_backend);
    if (absl::GetFlag(FLAGS_nproc) > 0) o.nproc = absl::GetFlag(FLAGS_nproc);
    o.out = absl::GetFlag(FLAGS_out);
    o.format = format;
    out = oneflow_sbp::cli::RunCalibrate(o);
  } else if (command == "launch") {
    oneflow_sbp::comm::LaunchOptions o;
    o.nproc = absl::GetFlag(FLAGS_nproc) > 0 ? absl::GetFlag(FLAGS_nproc) : 1;
    o.nnodes = absl::GetFlag(FLAGS_nnodes);
    o.node_rank = absl::GetFlag(FLAGS_node_rank);
    o.master_addr = absl::GetFlag(FLAGS_master_addr);
    o.master_port = absl::GetFlag(FLAGS_master_port);
    o.failure_grace = absl::Seconds(2);
    out = oneflow_sbp::cli::RunLaunch(o, positional);
  } else if (command == "plan") {
    const std::optional<std::string> path = absl::GetFlag(FLAGS_program);
    if (!path.has_value()) {
      return Fail(command, absl::InvalidArgumentError(
                               "--program is required, e.g. --program=tests/testdata/plan_mlp.json"));
    }
    absl::StatusOr<std::string> body = ReadFlagFile(*path, "program");
    if (!body.ok()) return Fail(command, body.status());
    oneflow_sbp::cli::PlanOptions o;
    o.program = *std::move(body);
    // --mesh has the demo's default; plan uses it only when given.
    if (cl.given.contains("mesh")) o.mesh = absl::GetFlag(FLAGS_mesh);
    o.memory_cap = absl::GetFlag(FLAGS_memory_cap);
    o.format = format;
    if (const std::optional<std::string> execute = absl::GetFlag(FLAGS_execute)) {
      if (*execute != "threads") {
        return Fail(command, absl::InvalidArgumentError(absl::StrCat(
                                 "--execute=", *execute,
                                 ": plan runs on rank threads only (--execute or --execute=threads)")));
      }
      o.execute = true;
    }
    o.seed = absl::GetFlag(FLAGS_seed);
    bool execution_ok = true;
    out = oneflow_sbp::cli::RunPlan(o, **engine, &execution_ok);
    if (!execution_ok) exit_code = 1;
  } else if (command == "demo") {
    oneflow_sbp::cli::DemoOptions o;
    o.mesh = absl::GetFlag(FLAGS_mesh);
    o.backend = absl::GetFlag(FLAGS_backend);
    o.model.batch = absl::GetFlag(FLAGS_batch);
    o.model.seq = absl::GetFlag(FLAGS_seq);
    o.model.hidden = absl::GetFlag(FLAGS_hidden);
    o.model.heads = absl::GetFlag(FLAGS_heads);
    o.model.ffn = absl::GetFlag(FLAGS_ffn);
    o.model.vocab = absl::GetFlag(FLAGS_vocab);
    o.model.layers = absl::GetFlag(FLAGS_layers);
    o.steps = absl::GetFlag(FLAGS_steps);
    o.trace = absl::GetFlag(FLAGS_trace);
    o.seed = absl::GetFlag(FLAGS_seed);
    o.all_ops = absl::GetFlag(FLAGS_all_ops);
    o.record = absl::GetFlag(FLAGS_record);
    o.cost = absl::GetFlag(FLAGS_cost).value_or("oneflow");
    o.device = absl::GetFlag(FLAGS_device);
    out = oneflow_sbp::cli::RunDemo(o, **engine, &exit_code);
  } else if (command == "verify") {
    if (!positional.empty()) {
      std::fprintf(stderr, "sbp verify: unexpected argument '%s'; see `sbp help verify`\n",
                   positional[0].c_str());
      return 2;
    }
    oneflow_sbp::cli::VerifyCmdOptions o;
    o.op = absl::GetFlag(FLAGS_op);
    // --mesh has the demo's default; verify uses it only when given.
    for (int i = 1; i < argc; ++i) {
      if (absl::StartsWith(argv[i], "--mesh") || absl::StartsWith(argv[i], "-mesh")) {
        o.mesh = absl::GetFlag(FLAGS_mesh);
      }
    }
    o.seed = absl::GetFlag(FLAGS_seed);
    o.device = absl::GetFlag(FLAGS_device);
    o.format = format;
    out = oneflow_sbp::cli::RunVerify(o, (*engine)->registry(), &exit_code);
    // A bad flag is a wrong command line; a device this build or machine
    // lacks is a failure.
    if (!out.ok() && out.status().code() == absl::StatusCode::kInvalidArgument) {
      Fail(command, out.status());
      return 2;
    }
  } else if (command == "tour") {
    out = oneflow_sbp::cli::RunTour(**engine);
  } else if (command == "ops") {
    out = oneflow_sbp::cli::RunOps(positional.empty() ? "" : positional[0], format,
                                   (*engine)->registry());
  } else {
    std::fprintf(stderr, "sbp: unknown command '%s'; run `sbp help`\n",
                 command.c_str());
    return 2;
  }
  if (!out.ok()) return Fail(command, out.status());
  std::fputs(out->c_str(), stdout);
  return exit_code;
}

// Allocation failure (a memory cap, a huge request) is an error like any
// other, not an abort: kResourceExhausted's message and exit status 1.
int main(int argc, char** argv) {
  try {
    return RunMain(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "sbp: out of memory (RESOURCE_EXHAUSTED); the request is too large "
                         "for this machine's memory limit\n");
    return 1;
  }
}
