// The commands' runners: flags to options, then the command's library.
#include "cli/command_runners.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "io/bounded_read.h"
#include "cli/cmd_boxing.h"
#include "cli/cmd_calibrate.h"
#include "cli/cmd_ckpt.h"
#include "cli/cmd_import.h"
#include "cli/cmd_run.h"
#include "cli/cmd_demo.h"
#include "cli/cmd_embed.h"
#include "cli/cmd_infer.h"
#include "cli/cmd_launch.h"
#include "cli/cmd_ops.h"
#include "cli/cmd_parse.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_slices.h"
#include "cli/cmd_tour.h"
#include "cli/cmd_verify.h"

namespace oneflow_sbp::cli {

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
  absl::StatusOr<std::string> data = oneflow_sbp::io::ReadBounded(
      f, absl::StrCat("--", flag, " file ", oneflow_sbp::QuotedInput(path)));
  if (f != stdin) std::fclose(f);
  return data;
}

absl::StatusOr<std::string> ParseCmd(const Invocation& in) {
  oneflow_sbp::cli::ParseOptions o;
  o.sbp = in.cl.flags.Text("sbp");
  o.nd_sbp = in.cl.flags.Text("nd_sbp");
  o.placement = in.cl.flags.Text("placement");
  o.shape = in.cl.flags.Text("shape");
  // --dtype has a default for the other commands; only an explicit one (or a
  // positional one) is parsed here.
  if (in.cl.flags.given("dtype")) o.dtype = in.cl.flags.String("dtype");
  o.positional = in.cl.positional;
  o.format = in.format;
  return oneflow_sbp::cli::RunParse(o);
}

absl::StatusOr<std::string> SlicesCmd(const Invocation& in) {
  oneflow_sbp::cli::SlicesOptions o;
  o.shape = in.cl.flags.Text("shape").value_or("");
  o.dtype = in.cl.flags.String("dtype");
  o.placement = in.cl.flags.Text("placement").value_or("");
  o.nd_sbp = in.cl.flags.Text("nd_sbp").value_or("");
  o.format = in.format;
  return oneflow_sbp::cli::RunSlices(o);
}

absl::StatusOr<std::string> InferCmd(const Invocation& in) {
  oneflow_sbp::cli::InferOptions o;
  o.op = in.cl.flags.Text("op");
  o.attrs = in.cl.attr;
  o.placement = in.cl.flags.Text("placement");
  o.inputs = in.cl.input;
  o.constraints = in.cl.constraint;
  o.cost = in.cl.flags.Text("cost");
  o.explain = in.cl.flags.Bool("explain");
  o.format = in.format;
  if (const std::optional<std::string> path = in.cl.flags.Text("request")) {
    OFS_ASSIGN_OR_RETURN(o.request, ReadFlagFile(*path, "request"));
  }
  return oneflow_sbp::cli::RunInfer(o, in.engine);
}

absl::StatusOr<std::string> BoxingCmd(const Invocation& in) {
  oneflow_sbp::cli::BoxingOptions o;
  o.shape = in.cl.flags.Text("shape").value_or("");
  o.dtype = in.cl.flags.String("dtype");
  o.placement = in.cl.flags.Text("placement").value_or("");
  o.from = in.cl.flags.Text("from").value_or("");
  o.to = in.cl.flags.Text("to").value_or("");
  o.to_placement = in.cl.flags.Text("to_placement");
  o.format = in.format;
  o.execute = in.cl.flags.Text("execute");
  o.nproc = in.cl.flags.Int("nproc");
  o.seed = in.cl.flags.Uint64("seed");
  o.repeat = in.cl.flags.OptionalInt("repeat").value_or(0);
  return oneflow_sbp::cli::RunBoxing(o, in.engine, in.exit_code);
}

absl::StatusOr<std::string> CalibrateCmd(const Invocation& in) {
  oneflow_sbp::cli::CalibrateOptions o;
  o.backend = in.cl.flags.String("backend");
  if (in.cl.flags.Int("nproc") > 0) o.nproc = in.cl.flags.Int("nproc");
  o.out = in.cl.flags.Text("out");
  o.format = in.format;
  return oneflow_sbp::cli::RunCalibrate(o);
}

absl::StatusOr<std::string> LaunchCmd(const Invocation& in) {
  oneflow_sbp::comm::LaunchOptions o;
  OFS_ASSIGN_OR_RETURN(o.nproc, oneflow_sbp::cli::LaunchRanksPerNode(
                                    in.cl.flags.given("nproc"), in.cl.flags.Int("nproc"),
                                    in.cl.flags.given("nproc_per_node"),
                                    in.cl.flags.Int("nproc_per_node")));
  o.nnodes = in.cl.flags.Int("nnodes");
  o.node_rank = in.cl.flags.Int("node_rank");
  o.master_addr = in.cl.flags.String("master_addr");
  o.master_port = in.cl.flags.Int("master_port");
  o.failure_grace = absl::Seconds(2);
  const std::string prefix = in.cl.flags.String("rank_prefix");
  if (prefix != "auto" && prefix != "yes" && prefix != "no") {
    return oneflow_sbp::cli::UsageError(absl::StrCat(
        "--rank_prefix=", QuotedInput(prefix), ": expected auto, yes or no"));
  }
  o.prefix_output = prefix == "yes" || (prefix == "auto" && isatty(STDOUT_FILENO) == 1);
  return oneflow_sbp::cli::RunLaunch(o, in.cl.positional);
}

absl::StatusOr<std::string> PlanCmd(const Invocation& in) {
  const std::optional<std::string> path = in.cl.flags.Text("program");
  if (!path.has_value()) {
    return absl::InvalidArgumentError(
        "--program is required, e.g. --program=tests/testdata/plan_mlp.json");
  }
  OFS_ASSIGN_OR_RETURN(std::string body, ReadFlagFile(*path, "program"));
  oneflow_sbp::cli::PlanOptions o;
  o.program = std::move(body);
  // --mesh has the demo's default; plan uses it only when given.
  if (in.cl.flags.given("mesh")) o.mesh = in.cl.flags.String("mesh");
  o.memory_cap = in.cl.flags.Text("memory_cap");
  o.work_budget = in.cl.flags.Text("work_budget");
  o.collectives_only = in.cl.flags.Bool("collectives_only");
  o.training = in.cl.flags.Bool("training");
  o.format = in.format;
  if (const std::optional<std::string> execute = in.cl.flags.Text("execute")) {
    if (*execute != "threads") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--execute=", *execute, ": plan runs on rank threads only (--execute or --execute=threads)"));
    }
    o.execute = true;
  }
  o.seed = in.cl.flags.Uint64("seed");
  o.dtensor_plan = in.cl.flags.Text("dtensor_plan");
  o.mesh_dim_names = in.cl.flags.Text("mesh_dim_names").value_or("");
  bool execution_ok = true;
  absl::StatusOr<std::string> out = oneflow_sbp::cli::RunPlan(o, in.engine, &execution_ok);
  if (!execution_ok) *in.exit_code = 1;
  return out;
}

absl::StatusOr<std::string> DemoCmd(const Invocation& in) {
  oneflow_sbp::cli::DemoOptions o;
  o.mesh = in.cl.flags.String("mesh");
  o.backend = in.cl.flags.String("backend");
  o.model.batch = in.cl.flags.Int64("batch");
  o.model.seq = in.cl.flags.Int64("seq");
  o.model.hidden = in.cl.flags.Int64("hidden");
  o.model.heads = in.cl.flags.Int64("heads");
  o.model.ffn = in.cl.flags.Int64("ffn");
  o.model.vocab = in.cl.flags.Int64("vocab");
  o.model.layers = in.cl.flags.Int("layers");
  o.steps = in.cl.flags.Int("steps");
  o.trace = in.cl.flags.Text("trace");
  o.seed = in.cl.flags.Uint64("seed");
  o.all_ops = in.cl.flags.Bool("all_ops");
  o.record = in.cl.flags.Text("record");
  o.save = in.cl.flags.Text("save");
  o.resume = in.cl.flags.Text("resume");
  o.cost = in.cl.flags.Text("cost").value_or("oneflow");
  o.device = in.cl.flags.String("device");
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
  o.op = in.cl.flags.Text("op");
  // --mesh has the demo's default; verify uses it only when given.
  if (in.cl.flags.given("mesh")) o.mesh = in.cl.flags.String("mesh");
  o.seed = in.cl.flags.Uint64("seed");
  o.device = in.cl.flags.String("device");
  o.format = in.format;
  return oneflow_sbp::cli::RunVerify(o, in.engine.registry(), in.exit_code);
}

absl::StatusOr<std::string> TourCmd(const Invocation& in) {
  return oneflow_sbp::cli::RunTour(in.engine);
}

absl::StatusOr<std::string> EmbedCmd(const Invocation& in) {
  oneflow_sbp::cli::EmbedOptions o;
  o.model = in.cl.flags.String("model");
  if (const std::optional<std::string> p = in.cl.flags.Text("placement")) o.placement = *p;
  o.format = in.format;
  o.repeat = in.cl.flags.OptionalInt("repeat").value_or(1);
  o.texts = in.cl.positional;
  return oneflow_sbp::cli::RunEmbed(o, in.engine);
}

absl::StatusOr<std::string> CkptCmd(const Invocation& in) {
  const std::vector<std::string>& words = in.cl.positional;
  const bool inspect = words.size() == 2 && words[0] == "inspect";
  const bool export_ = words.size() == 3 && words[0] == "export";
  if (!inspect && !export_) {  // a wrong command line: exit 2, as the table's checks do
    return UsageError("expected `inspect DIR` or `export DIR OUT.safetensors`");
  }
  return oneflow_sbp::cli::RunCkpt(words);
}

absl::StatusOr<std::string> ImportCmd(const Invocation& in) {
  if (in.cl.positional.size() != 1) return UsageError("expected one MODEL.onnx");
  ImportCmdOptions o;
  o.model = in.cl.positional[0];
  std::optional<std::string> out = in.cl.flags.Text("out");
  if (!out) return UsageError("--out=DIR is required (where program.json goes)");
  o.out = *out;
  o.placement = in.cl.flags.Text("placement").value_or("cpu:0");
  o.dims = in.cl.flags.Text("dims").value_or("");
  o.format = in.format;
  return oneflow_sbp::cli::RunImport(o, in.engine.registry());
}

absl::StatusOr<std::string> RunCmd(const Invocation& in) {
  const std::optional<std::string> path = in.cl.flags.Text("program");
  if (!path.has_value()) return UsageError("--program=DIR/program.json is required");
  RunModelOptions o;
  OFS_ASSIGN_OR_RETURN(o.program, ReadFlagFile(*path, "program"));
  o.weights = in.cl.flags.Text("weights");
  o.inputs = in.cl.flags.Text("inputs");
  o.out = in.cl.flags.Text("out");
  o.placement = in.cl.flags.Text("placement");
  if (const std::optional<std::string> plan = in.cl.flags.Text("plan")) {
    OFS_ASSIGN_OR_RETURN(o.plan, ReadFlagFile(*plan, "plan"));
    o.plan_path = *plan;
  }
  o.backend = in.cl.flags.String("backend");
  o.expect = in.cl.flags.Text("expect");
  o.rtol = in.cl.flags.Double("rtol");
  o.format = in.format;
  bool matched = true;
  absl::StatusOr<std::string> out = oneflow_sbp::cli::RunModel(o, in.engine, &matched);
  if (!matched) *in.exit_code = 1;
  return out;
}

absl::StatusOr<std::string> OpsCmd(const Invocation& in) {
  return oneflow_sbp::cli::RunOps(in.cl.positional.empty() ? "" : in.cl.positional[0], in.format,
                                  in.engine.registry());
}

}  // namespace oneflow_sbp::cli
