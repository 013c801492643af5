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

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "io/bounded_read.h"
#include "cli/cmd_boxing.h"
#include "cli/cmd_calibrate.h"
#include "cli/cmd_ckpt.h"
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
#include "cli/sbp_flags.h"

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
    OFS_ASSIGN_OR_RETURN(o.request, ReadFlagFile(*path, "request"));
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
    return UsageError("expected `inspect DIR` or `export DIR OUT.safetensors`");
  }
  return oneflow_sbp::cli::RunCkpt(words);
}

absl::StatusOr<std::string> OpsCmd(const Invocation& in) {
  return oneflow_sbp::cli::RunOps(in.cl.positional.empty() ? "" : in.cl.positional[0], in.format,
                                  in.engine.registry());
}

}  // namespace oneflow_sbp::cli
