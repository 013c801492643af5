#include "cli/cmd_plan.h"

#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "checkpoint/safetensors.h"
#include "graph/training_step_info.h"
#include "io/dtensor_plan.h"
#include "eager/expand_training_step.h"
#include "graph/program_plan_format.h"
#include "graph/program_planner.h"
#include "io/program_proto.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/shape.h"
#include "cli/cli_format.h"
#include "cli/plan_execution.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

// The value of --`flag`, which must be an integer > 0.
absl::StatusOr<int64_t> PositiveFlag(absl::string_view flag, const std::string& value,
                                     absl::string_view expected) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v) || v <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", QuotedInput(value), ": expected ", expected));
  }
  return v;
}

// Writes --dtensor_plan; the report's line saying so.
absl::StatusOr<std::string> WriteDtensorPlan(const PlanOptions& o, const graph::Program& program,
                                             const graph::ProgramPlan& plan) {
  std::vector<int> weights;
  for (size_t id = 0; id < program.tensors().size(); ++id) {
    const graph::ProgramTensor& t = program.tensors()[id];
    if (t.role == graph::TensorRole::kFree || t.parameter) weights.push_back(static_cast<int>(id));
  }
  // A training step's forward is its first ops; an inference program is all forward.
  const graph::StrategyReport strategy = graph::ClassifyStrategy(
      program, plan.chosen, weights, static_cast<int>(program.ops().size()));
  std::vector<std::string> names = io::DefaultMeshDimNames(strategy.per_axis);
  if (!o.mesh_dim_names.empty()) {
    names = absl::StrSplit(o.mesh_dim_names, ',');
    if (static_cast<int>(names.size()) != program.placement().num_axes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mesh_dim_names=", QuotedInput(o.mesh_dim_names), ": ", names.size(),
          " names for a mesh of ", program.placement().num_axes(), " axes"));
    }
  }
  OFS_RETURN_IF_ERROR(checkpoint::WriteFileAtomically(
      *o.dtensor_plan, io::DtensorPlanJson(program, plan.chosen, names, strategy.name)));
  return absl::StrCat("wrote ", *o.dtensor_plan, " (DTensor placements on mesh (",
                      absl::StrJoin(names, ", "), "): ", strategy.name, ")\n");
}

}  // namespace

absl::StatusOr<std::string> RunPlan(const PlanOptions& o, engine::Engine& engine, bool* execution_ok) {
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(o.format, "text|json|dot"));
  std::vector<int64_t> mesh;
  if (o.mesh.has_value()) {
    absl::StatusOr<Shape> m = Shape::Parse(*o.mesh);
    if (!m.ok() || m->rank() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mesh=", QuotedInput(*o.mesh), ": expected extents like 2,2"));
    }
    mesh.assign(m->dims().begin(), m->dims().end());
  }
  graph::PlanProgramOptions options;
  if (o.memory_cap.has_value()) {
    OFS_ASSIGN_OR_RETURN(int64_t cap, PositiveFlag("memory_cap", *o.memory_cap,
        "a positive number of bytes per rank"));
    options.memory_cap_bytes = cap;
  }
  if (o.work_budget.has_value()) {
    OFS_ASSIGN_OR_RETURN(int64_t budget, PositiveFlag("work_budget", *o.work_budget,
        "a positive number of planner steps"));
    options.work_budget = budget;
  }
  if (o.collectives_only && o.execute) {
    // Execution boxes through the engine's cheapest plans, exchanges
    // included, so its bytes would not be the ones this plan predicts.
    return absl::InvalidArgumentError(
        "--collectives_only prices boxing without p2p exchanges, but --execute runs the "
        "engine's cheapest plans, which may use them: run --execute without --collectives_only");
  }
  options.collectives_only = o.collectives_only;
  OFS_ASSIGN_OR_RETURN(oneflow::ProgramProto parsed, io::ProgramProtoFromJson(o.program));
  OFS_ASSIGN_OR_RETURN(graph::Program program, io::ProgramFromProto(parsed, engine.registry(),
      mesh));
  std::optional<graph::TrainingStepInfo> step;
  if (o.training || parsed.training()) {
    OFS_ASSIGN_OR_RETURN(graph::TrainingStepInfo expanded, eager::ExpandTrainingStep(engine,
        program, {}));
    step = std::move(expanded);
    program = step->program;
  }
  OFS_ASSIGN_OR_RETURN(graph::ProgramPlan plan, graph::PlanProgram(program, engine, options));
  if (format == OutputFormat::kDot) {
    if (o.execute) {
      return absl::InvalidArgumentError("--execute reports in text or json, not dot");
    }
    return graph::ProgramPlanToDot(program, plan);
  }
  oneflow::ProgramPlanProto proto = io::ProgramPlanToProto(program, plan);
  std::string text = graph::ProgramPlanToText(program, plan);
  if (step.has_value()) {
    absl::StrAppend(&text, graph::TrainingPlanToText(*step, plan));
    *proto.mutable_training() = io::TrainingPlanToProto(*step, plan);
  }
  if (o.dtensor_plan.has_value()) {
    OFS_ASSIGN_OR_RETURN(const std::string line, WriteDtensorPlan(o, program, plan));
    absl::StrAppend(&text, line);
  }
  if (o.execute) {
    OFS_ASSIGN_OR_RETURN(oneflow::PlanExecutionProto e, ExecuteProgramPlan(program, plan, engine,
        o.seed, step ? &*step : nullptr));
    if (execution_ok != nullptr) *execution_ok = e.ok();
    absl::StrAppend(&text, PlanExecutionText(e));
    *proto.mutable_execution() = std::move(e);
  }
  return Render(format, proto, text);
}

}  // namespace oneflow_sbp::cli
