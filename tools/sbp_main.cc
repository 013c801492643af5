// sbp: the oneflow_sbp command-line tool.
//
//   sbp <command> [flags]        run a command
//   sbp help [command]           what the commands do, with examples
//   sbp --version                the version and how this binary was built
//
// Every command prints its result on stdout (--format picks among the
// forms it has) and exits 0; a failure prints one line "sbp <command>:
// <why>" on stderr and exits 1; a wrong command line exits 2 (the contract
// is in tools/command_table.h). The commands, their flags and formats are
// the table in tools/command_table.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "io/calibration_io.h"
#include "oneflow_sbp/quoted_input.h"
#include "oneflow_sbp/status_macros.h"
#include "ops/builtin_ops.h"
#include "tools/bounded_read.h"
#include "tools/cmd_boxing.h"
#include "tools/cmd_calibrate.h"
#include "tools/cmd_demo.h"
#include "tools/cmd_infer.h"
#include "tools/cmd_launch.h"
#include "tools/cmd_ckpt.h"
#include "tools/cmd_embed.h"
#include "tools/cmd_ops.h"
#include "tools/cmd_parse.h"
#include "tools/cmd_plan.h"
#include "tools/cmd_slices.h"
#include "tools/cmd_tour.h"
#include "tools/cmd_verify.h"
#include "tools/command_line.h"
#include "tools/command_table.h"

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
ABSL_FLAG(int, nproc_per_node, 0, "launch: rank processes on this node (torchrun's name for --nproc).");
ABSL_FLAG(int, nnodes, 1, "launch: number of nodes.");
ABSL_FLAG(int, node_rank, 0, "launch: this node's index.");
ABSL_FLAG(std::string, master_addr, "127.0.0.1", "launch: where rank 0 serves the rendezvous.");
ABSL_FLAG(int, master_port, 0, "launch: rendezvous port (0: pick a free one, one node only).");
ABSL_FLAG(std::string, backend, "threads", "calibrate, demo: threads or gloo.");
ABSL_FLAG(double, timeout, 0,
          "launch, demo, boxing --execute, calibrate: collective timeout in seconds "
          "(OFS_TIMEOUT; default 60).");
ABSL_FLAG(double, heartbeat_timeout, 0,
          "launch, demo, boxing --execute, calibrate: seconds before a silent rank is reported "
          "(OFS_HEARTBEAT_TIMEOUT; default 10, 0 off).");
ABSL_FLAG(std::string, rank_prefix, "auto",
          "launch: prefix each line of a rank's output with [rank N]: auto (when stdout is a "
          "terminal), yes or no.");
ABSL_FLAG(std::optional<std::string>, out, std::nullopt, "calibrate: file to write.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of generated data.");
ABSL_FLAG(std::optional<int>, repeat, std::nullopt,
          "boxing --execute: timed re-runs of the checked plan (default 0). embed: timed runs "
          "of the texts after loading the weights once (default 1).");
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
          "demo: write step 0's training step as a program for `sbp plan` (and a .marked twin).");
ABSL_FLAG(std::string, model, "", "embed: the model directory (tools/fetch_model.sh).");
ABSL_FLAG(std::optional<std::string>, save, std::nullopt,
          "demo: save weights, Adam state and step count to this checkpoint directory.");
ABSL_FLAG(std::optional<std::string>, resume, std::nullopt,
          "demo: resume from this checkpoint directory (saved on any mesh).");
ABSL_FLAG(std::optional<std::string>, request, std::nullopt,
          "Inference request file (JSON or text-format InferRequestProto); - for stdin.");
ABSL_FLAG(std::optional<std::string>, program, std::nullopt,
          "Program file for `sbp plan` (JSON, see docs/PLANNING.md); - for stdin.");
ABSL_FLAG(std::optional<std::string>, memory_cap, std::nullopt,
          "Per-rank memory cap in bytes for `sbp plan`.");
ABSL_FLAG(std::optional<std::string>, work_budget, std::nullopt,
          "`sbp plan`: estimated boxing-planner steps the pricing may take (default 2^28).");
ABSL_FLAG(bool, collectives_only, false,
          "`sbp plan`: price every boxing by its cheapest plan made of collectives, never a "
          "p2p exchange (large meshes within the work budget).");
ABSL_FLAG(bool, training, false,
          "plan: plan the whole training step (forward, backward, gradient reductions, "
          "Adam updates) with the program's output as the loss.");

namespace {

using oneflow_sbp::Engine;
using oneflow_sbp::QuotedInput;
using oneflow_sbp::cli::CommandLine;
using oneflow_sbp::cli::CommandSpec;
using oneflow_sbp::cli::Commands;
using oneflow_sbp::cli::FindCommandSpec;

// What a command's runner gets: its command line, the engine, the chosen
// --format. A runner returns its output, or the failure (exit 1), and may
// set *exit_code to 1 for a run that completed but whose check did not hold.
struct Invocation {
  const CommandLine& cl;
  Engine& engine;
  std::string format;
  int* exit_code;
};

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

// The engine every command shares; --calibration (where the command takes
// it) prices the planner's links.
absl::StatusOr<std::unique_ptr<Engine>> MakeEngine() {
  Engine::Options options;
  if (const std::optional<std::string> path = absl::GetFlag(FLAGS_calibration)) {
    OFS_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(*path, "calibration"));
    absl::StatusOr<oneflow_sbp::boxing::Calibration> c = oneflow_sbp::boxing::ParseCalibration(
        text, absl::StrCat("calibration file ", oneflow_sbp::QuotedInput(*path)));
    if (!c.ok()) return c.status();
    options.calibration = *std::move(c);
  }
  return Engine::Create(std::move(options));
}

// ---- the commands' runners: flags to options, then the command's library.

absl::StatusOr<std::string> ParseCmd(const Invocation& in) {
  oneflow_sbp::cli::ParseOptions o;
  o.sbp = absl::GetFlag(FLAGS_sbp);
  o.nd_sbp = absl::GetFlag(FLAGS_nd_sbp);
  o.placement = absl::GetFlag(FLAGS_placement);
  o.shape = absl::GetFlag(FLAGS_shape);
  // --dtype has a default for the other commands; only an explicit one (or a
  // positional one) is parsed here.
  if (in.cl.given.contains("dtype")) o.dtype = absl::GetFlag(FLAGS_dtype);
  o.positional = in.cl.positional;
  o.format = in.format;
  return oneflow_sbp::cli::RunParse(o);
}

absl::StatusOr<std::string> SlicesCmd(const Invocation& in) {
  oneflow_sbp::cli::SlicesOptions o;
  o.shape = absl::GetFlag(FLAGS_shape).value_or("");
  o.dtype = absl::GetFlag(FLAGS_dtype);
  o.placement = absl::GetFlag(FLAGS_placement).value_or("");
  o.nd_sbp = absl::GetFlag(FLAGS_nd_sbp).value_or("");
  o.format = in.format;
  return oneflow_sbp::cli::RunSlices(o);
}

absl::StatusOr<std::string> InferCmd(const Invocation& in) {
  oneflow_sbp::cli::InferOptions o;
  o.op = absl::GetFlag(FLAGS_op);
  o.attrs = in.cl.attr;
  o.placement = absl::GetFlag(FLAGS_placement);
  o.inputs = in.cl.input;
  o.constraints = in.cl.constraint;
  o.cost = absl::GetFlag(FLAGS_cost);
  o.explain = absl::GetFlag(FLAGS_explain);
  o.format = in.format;
  if (const std::optional<std::string> path = absl::GetFlag(FLAGS_request)) {
    absl::StatusOr<std::string> body = ReadFlagFile(*path, "request");
    if (!body.ok()) return body.status();
    o.request = *body;
  }
  return oneflow_sbp::cli::RunInfer(o, in.engine);
}

absl::StatusOr<std::string> BoxingCmd(const Invocation& in) {
  oneflow_sbp::cli::BoxingOptions o;
  o.shape = absl::GetFlag(FLAGS_shape).value_or("");
  o.dtype = absl::GetFlag(FLAGS_dtype);
  o.placement = absl::GetFlag(FLAGS_placement).value_or("");
  o.from = absl::GetFlag(FLAGS_from).value_or("");
  o.to = absl::GetFlag(FLAGS_to).value_or("");
  o.to_placement = absl::GetFlag(FLAGS_to_placement);
  o.format = in.format;
  o.execute = absl::GetFlag(FLAGS_execute);
  o.nproc = absl::GetFlag(FLAGS_nproc);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.repeat = absl::GetFlag(FLAGS_repeat).value_or(0);
  return oneflow_sbp::cli::RunBoxing(o, in.engine, in.exit_code);
}

absl::StatusOr<std::string> CalibrateCmd(const Invocation& in) {
  oneflow_sbp::cli::CalibrateOptions o;
  o.backend = absl::GetFlag(FLAGS_backend);
  if (absl::GetFlag(FLAGS_nproc) > 0) o.nproc = absl::GetFlag(FLAGS_nproc);
  o.out = absl::GetFlag(FLAGS_out);
  o.format = in.format;
  return oneflow_sbp::cli::RunCalibrate(o);
}

absl::StatusOr<std::string> LaunchCmd(const Invocation& in) {
  oneflow_sbp::comm::LaunchOptions o;
  OFS_ASSIGN_OR_RETURN(o.nproc, oneflow_sbp::cli::LaunchRanksPerNode(
                                    in.cl.given.contains("nproc"), absl::GetFlag(FLAGS_nproc),
                                    in.cl.given.contains("nproc_per_node"),
                                    absl::GetFlag(FLAGS_nproc_per_node)));
  o.nnodes = absl::GetFlag(FLAGS_nnodes);
  o.node_rank = absl::GetFlag(FLAGS_node_rank);
  o.master_addr = absl::GetFlag(FLAGS_master_addr);
  o.master_port = absl::GetFlag(FLAGS_master_port);
  o.failure_grace = absl::Seconds(2);
  const std::string prefix = absl::GetFlag(FLAGS_rank_prefix);
  if (prefix != "auto" && prefix != "yes" && prefix != "no") {
    return oneflow_sbp::cli::UsageError(absl::StrCat(
        "--rank_prefix=", QuotedInput(prefix), ": expected auto, yes or no"));
  }
  o.prefix_output = prefix == "yes" || (prefix == "auto" && isatty(STDOUT_FILENO) == 1);
  return oneflow_sbp::cli::RunLaunch(o, in.cl.positional);
}

absl::StatusOr<std::string> PlanCmd(const Invocation& in) {
  const std::optional<std::string> path = absl::GetFlag(FLAGS_program);
  if (!path.has_value()) {
    return absl::InvalidArgumentError(
        "--program is required, e.g. --program=tests/testdata/plan_mlp.json");
  }
  OFS_ASSIGN_OR_RETURN(std::string body, ReadFlagFile(*path, "program"));
  oneflow_sbp::cli::PlanOptions o;
  o.program = std::move(body);
  // --mesh has the demo's default; plan uses it only when given.
  if (in.cl.given.contains("mesh")) o.mesh = absl::GetFlag(FLAGS_mesh);
  o.memory_cap = absl::GetFlag(FLAGS_memory_cap);
  o.work_budget = absl::GetFlag(FLAGS_work_budget);
  o.collectives_only = absl::GetFlag(FLAGS_collectives_only);
  o.training = absl::GetFlag(FLAGS_training);
  o.format = in.format;
  if (const std::optional<std::string> execute = absl::GetFlag(FLAGS_execute)) {
    if (*execute != "threads") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--execute=", *execute, ": plan runs on rank threads only (--execute or --execute=threads)"));
    }
    o.execute = true;
  }
  o.seed = absl::GetFlag(FLAGS_seed);
  bool execution_ok = true;
  absl::StatusOr<std::string> out = oneflow_sbp::cli::RunPlan(o, in.engine, &execution_ok);
  if (!execution_ok) *in.exit_code = 1;
  return out;
}

absl::StatusOr<std::string> DemoCmd(const Invocation& in) {
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
  o.save = absl::GetFlag(FLAGS_save);
  o.resume = absl::GetFlag(FLAGS_resume);
  o.cost = absl::GetFlag(FLAGS_cost).value_or("oneflow");
  o.device = absl::GetFlag(FLAGS_device);
  o.json = in.format == "json";
  // Text runs print as they go (the header at once, a line per step) so a
  // terminal is never silent for the whole run; JSON is one object at the end.
  if (!o.json) {
    o.progress = [](const std::string& line) {
      std::fputs(line.c_str(), stdout);
      std::fflush(stdout);
    };
  }
  return oneflow_sbp::cli::RunDemo(o, in.engine, in.exit_code);
}

absl::StatusOr<std::string> VerifyCmd(const Invocation& in) {
  oneflow_sbp::cli::VerifyCmdOptions o;
  o.op = absl::GetFlag(FLAGS_op);
  // --mesh has the demo's default; verify uses it only when given.
  if (in.cl.given.contains("mesh")) o.mesh = absl::GetFlag(FLAGS_mesh);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.device = absl::GetFlag(FLAGS_device);
  o.format = in.format;
  return oneflow_sbp::cli::RunVerify(o, in.engine.registry(), in.exit_code);
}

absl::StatusOr<std::string> TourCmd(const Invocation& in) {
  return oneflow_sbp::cli::RunTour(in.engine);
}

absl::StatusOr<std::string> EmbedCmd(const Invocation& in) {
  oneflow_sbp::cli::EmbedOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  if (const std::optional<std::string> p = absl::GetFlag(FLAGS_placement)) o.placement = *p;
  o.format = in.format;
  o.repeat = absl::GetFlag(FLAGS_repeat).value_or(1);
  o.texts = in.cl.positional;
  return oneflow_sbp::cli::RunEmbed(o, in.engine);
}

absl::StatusOr<std::string> CkptCmd(const Invocation& in) {
  const std::vector<std::string>& words = in.cl.positional;
  const bool inspect = words.size() == 2 && words[0] == "inspect";
  const bool export_ = words.size() == 3 && words[0] == "export";
  if (!inspect && !export_) {  // a wrong command line: exit 2, as the table's checks do
    *in.exit_code = Usage("ckpt", "expected `inspect DIR` or `export DIR OUT.safetensors`");
    return std::string();
  }
  return oneflow_sbp::cli::RunCkpt(words);
}

absl::StatusOr<std::string> OpsCmd(const Invocation& in) {
  return oneflow_sbp::cli::RunOps(in.cl.positional.empty() ? "" : in.cl.positional[0], in.format,
                                  in.engine.registry());
}

using Runner = absl::StatusOr<std::string> (*)(const Invocation&);

Runner RunnerOf(const std::string& command) {
  struct Entry {
    const char* name;
    Runner run;
  };
  static constexpr Entry kRunners[] = {
      {"parse", ParseCmd}, {"slices", SlicesCmd},       {"infer", InferCmd},
      {"boxing", BoxingCmd}, {"plan", PlanCmd},         {"calibrate", CalibrateCmd},
      {"launch", LaunchCmd}, {"demo", DemoCmd},         {"verify", VerifyCmd},
      {"tour", TourCmd},   {"ops", OpsCmd},             {"ckpt", CkptCmd},
      {"embed", EmbedCmd},
  };
  for (const Entry& e : kRunners) {
    if (command == e.name) return e.run;
  }
  return nullptr;
}

// argv with `--execute` alone made --execute=threads (absl string flags need
// a value), up to a `--` that starts a launched command.
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
  if (cl.given.contains("format") && !spec.TakesFormat(absl::GetFlag(FLAGS_format))) {
    return absl::StrCat("unknown --format ", QuotedInput(absl::GetFlag(FLAGS_format)), ": ",
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
// (tools/rank_runner.h) and ConnectFromEnvironment read them there. The
// flags win over a value the shell exported.
std::optional<std::string> ExportTimeouts(const CommandLine& cl) {
  const struct {
    const char* flag;
    const char* variable;
    double value;
    bool positive;
  } timeouts[] = {
      {"timeout", "OFS_TIMEOUT", absl::GetFlag(FLAGS_timeout), true},
      {"heartbeat_timeout", "OFS_HEARTBEAT_TIMEOUT", absl::GetFlag(FLAGS_heartbeat_timeout),
       false},
  };
  for (const auto& t : timeouts) {
    if (!cl.given.contains(t.flag)) continue;
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

  // The tool parses its flags itself (command_line.h): every wrong command
  // line is one line "sbp <command>: <why>" and exit 2, and no flag reads a
  // file behind the user's back (absl's --flagfile is refused).
  CommandLine cl;
  const absl::Status parsed = oneflow_sbp::cli::ParseCommandLine(
      args, [](const absl::CommandLineFlag& f) { return IsOurFlag(f); }, &cl);
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
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine();
  if (!engine.ok()) return Fail(cl.command, engine.status());

  int exit_code = 0;
  const std::string format = cl.given.contains("format")
                                 ? absl::GetFlag(FLAGS_format)
                                 : std::string(absl::string_view(spec->formats).substr(
                                       0, absl::string_view(spec->formats).find('|')));
  const Invocation in{cl, **engine, format, &exit_code};
  absl::StatusOr<std::string> out = RunnerOf(cl.command)(in);
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
