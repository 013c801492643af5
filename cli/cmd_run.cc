#include "cli/cmd_run.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/safetensors.h"
#include "cli/rank_runner.h"
#include "eager/program_runner.h"
#include "graph/program_planner.h"
#include "io/dtensor_plan.h"
#include "io/json_string.h"
#include "io/program_proto.h"
#include "oneflow_sbp/storage/tensor_difference.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

using checkpoint::SafetensorsFile;

// What the ranks run: the program, every leaf's value, the assignment.
struct PreparedRun {
  graph::Program program;
  eager::ProgramRunOptions options;
  graph::Assignment assignment;
  eager::ProgramRunMode mode = eager::ProgramRunMode::kFollowPlan;
  std::string chosen_by;
};

absl::StatusOr<std::unique_ptr<SafetensorsFile>> OpenValues(const std::string& path,
                                                            absl::string_view flag) {
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> f = SafetensorsFile::Open(path);
  const absl::Status s = f.status();
  return s.ok() ? std::move(f) : absl::Status(s.code(), absl::StrCat("--", flag, ": ", s.message()));
}

// Every leaf's value from the weights (by name) and inputs (by name or
// position); see the header.
absl::Status GiveLeaves(const RunModelOptions& o, const graph::Program& program,
                        eager::ProgramRunOptions* options) {
  std::unique_ptr<SafetensorsFile> weights, inputs;
  if (o.weights) {
    OFS_ASSIGN_OR_RETURN(weights, OpenValues(*o.weights, "weights"));
  }
  if (o.inputs) {
    OFS_ASSIGN_OR_RETURN(inputs, OpenValues(*o.inputs, "inputs"));
  }
  int position = 0;
  for (size_t id = 0; id < program.tensors().size(); ++id) {
    const graph::ProgramTensor& t = program.tensors()[id];
    if (t.role == graph::TensorRole::kActivation) continue;
    SafetensorsFile* from = nullptr;
    std::string name = t.name;
    if (weights != nullptr && weights->Find(t.name) != nullptr) {
      from = weights.get();
    } else if (t.role == graph::TensorRole::kFixed && !t.parameter) {
      const std::string positional = absl::StrCat("input_", position++);
      if (inputs != nullptr && inputs->Find(t.name) != nullptr) {
        from = inputs.get();
      } else if (inputs != nullptr && inputs->Find(positional) != nullptr) {
        from = inputs.get();
        name = positional;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", QuotedInput(t.name), " (", t.desc.ToString(), "): not in --inputs",
            inputs ? absl::StrCat(" ", inputs->path()) : std::string(" (none given)"),
            " under its name or as ", positional));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "weight ", QuotedInput(t.name), " (", t.desc.ToString(), "): not in --weights",
          weights ? absl::StrCat(" ", weights->path()) : std::string(" (none given)")));
    }
    OFS_ASSIGN_OR_RETURN(options->given[static_cast<int>(id)], from->Read(name));
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedRun> Prepare(const RunModelOptions& o, engine::Engine& engine) {
  OFS_ASSIGN_OR_RETURN(oneflow::ProgramProto proto, io::ProgramProtoFromJson(o.program));
  if (o.placement) proto.set_placement(*o.placement);
  OFS_ASSIGN_OR_RETURN(graph::Program program, io::ProgramFromProto(proto, engine.registry()));
  PreparedRun run{std::move(program), {}, {}, eager::ProgramRunMode::kFollowPlan, ""};
  OFS_RETURN_IF_ERROR(GiveLeaves(o, run.program, &run.options));
  if (o.plan) {
    OFS_ASSIGN_OR_RETURN(run.assignment.free_layouts,
                         io::FreeLayoutsFromDtensorPlan(*o.plan, o.plan_path, run.program));
    run.mode = eager::ProgramRunMode::kEagerInference;
    run.chosen_by = absl::StrCat("parameters as ", o.plan_path, " says, ops by eager inference");
  } else {
    OFS_ASSIGN_OR_RETURN(graph::ProgramPlan plan, graph::PlanProgram(run.program, engine, {}));
    run.assignment = std::move(plan.chosen);
    run.chosen_by = "the planner's choice (sbp plan)";
  }
  return run;
}

// The reference's tensor for output `k` named `name`: by name, else by position.
absl::StatusOr<LocalTensor> Expected(SafetensorsFile& ref, int k, const std::string& name) {
  if (ref.Find(name) != nullptr) return ref.Read(name);
  const std::string positional = absl::StrCat("output_", k);
  if (ref.Find(positional) != nullptr) return ref.Read(positional);
  return absl::InvalidArgumentError(absl::StrCat("--expect ", ref.path(), ": no ",
                                                 QuotedInput(name), " or ", positional));
}

// Rank 0's part after the run: write, compare, report.
absl::StatusOr<std::string> Report(const RunModelOptions& o, const PreparedRun& run,
                                   const eager::ProgramRunResult& r, bool* matched) {
  std::vector<std::pair<std::string, LocalTensor>> named;
  std::string out = absl::StrCat("ran ", run.program.ops().size(), " ops on ",
                                 run.program.placement().ToString(), " (", o.backend, "), ",
                                 run.chosen_by, "; rank ", run.program.placement().ranks()[0], " received ",
                                 r.traffic.bytes_received, " bytes in boxing\n");
  std::unique_ptr<SafetensorsFile> ref;
  if (o.expect) {
    OFS_ASSIGN_OR_RETURN(ref, OpenValues(*o.expect, "expect"));
  }
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    const graph::ProgramTensor& t = run.program.tensors()[run.program.outputs()[k].tensor];
    named.emplace_back(absl::StrCat("output_", k), r.outputs[k]);
    if (t.name != named.back().first) named.emplace_back(t.name, r.outputs[k]);
    absl::StrAppend(&out, "  output_", k, " ", t.name, " ", t.desc.ToString());
    if (ref != nullptr) {
      OFS_ASSIGN_OR_RETURN(LocalTensor want, Expected(*ref, static_cast<int>(k), t.name));
      const double d = MaxRelativeDifference({r.outputs[k]}, {want}, 1e-30);
      const bool ok = d <= o.rtol;
      if (!ok) *matched = false;
      absl::StrAppend(&out, absl::StrFormat(": max relative difference %.3g from %s (%s %g)",
                                            d, *o.expect, ok ? "within" : "OVER", o.rtol));
    }
    absl::StrAppend(&out, "\n");
  }
  if (o.out) {
    OFS_RETURN_IF_ERROR(checkpoint::WriteSafetensors(*o.out, named));
    absl::StrAppend(&out, "wrote ", *o.out, "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunModel(const RunModelOptions& o, engine::Engine& engine,
                                     bool* matched) {
  OFS_ASSIGN_OR_RETURN(Backend backend, ParseBackend(o.backend));
  OFS_ASSIGN_OR_RETURN(PreparedRun run, Prepare(o, engine));
  const absl::Span<const int64_t> ranks = run.program.placement().ranks();
  const int world = static_cast<int>(*std::max_element(ranks.begin(), ranks.end()) + 1);
  OFS_ASSIGN_OR_RETURN(std::string text, RunOnRanks(backend, world,
      [&](comm::Communicator& comm) -> absl::StatusOr<std::string> {
        eager::EagerContext ctx(engine, comm);
        OFS_ASSIGN_OR_RETURN(eager::ProgramRunResult r, eager::RunProgram(ctx, run.program,
            run.assignment, run.mode, run.options));
        if (comm.rank() != ranks[0]) return std::string();
        return Report(o, run, r, matched);
      }));
  return text;
}

}  // namespace oneflow_sbp::cli
