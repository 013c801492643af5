#include "cli/plan_execution.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "comm/inprocess_world.h"
#include "eager/program_runner.h"
#include "oneflow_sbp/storage/tensor_difference.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

struct RunTotals {
  eager::ProgramRunResult rank0;
  int64_t bytes_received = 0;
  double wall_s = 0;
};

// One run on every device rank; rank 0's result plus the bytes of all.
absl::StatusOr<RunTotals> RunOnRanks(const graph::Program& program,
                                     const graph::Assignment& assignment,
                                     eager::ProgramRunMode mode, engine::Engine& engine,
                                     const eager::ProgramRunOptions& options) {
  const absl::Span<const int64_t> ranks = program.placement().ranks();
  const int world = static_cast<int>(*std::max_element(ranks.begin(), ranks.end()) + 1);
  RunTotals totals;
  std::mutex mu;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<absl::Status>> ran =
      comm::RunRanks(world, [&](comm::Communicator& comm) -> absl::Status {
        eager::EagerContext ctx(engine, comm);
        OFS_ASSIGN_OR_RETURN(eager::ProgramRunResult r, eager::RunProgram(ctx, program,
            assignment, mode, options));
        std::lock_guard<std::mutex> lock(mu);
        totals.bytes_received += r.traffic.bytes_received;
        if (comm.rank() == ranks[0]) totals.rank0 = std::move(r);
        return absl::OkStatus();
      });
  totals.wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  OFS_RETURN_IF_ERROR(ran.status());
  // The first failing rank's own error, not a peer's "aborted" echo.
  for (const absl::Status& s : *ran) {
    if (!s.ok() && s.code() != absl::StatusCode::kAborted) return s;
  }
  for (const absl::Status& s : *ran) {
    OFS_RETURN_IF_ERROR(s);
  }
  return totals;
}

int OpsAsPredicted(const std::vector<NdSbpSignature>& ran,
                   const std::vector<NdSbpSignature>& predicted) {
  int same = 0;
  for (size_t i = 0; i < ran.size() && i < predicted.size(); ++i) {
    if (ran[i] == predicted[i]) ++same;
  }
  return same;
}

}  // namespace

absl::StatusOr<oneflow::PlanExecutionProto> ExecuteProgramPlan(
    const graph::Program& program, const graph::ProgramPlan& plan, engine::Engine& engine, uint64_t seed,
    const graph::TrainingStepInfo* step) {
  eager::ProgramRunOptions options;
  options.seed = seed;
  if (step != nullptr) {
    for (const graph::TrainingStepInfo::Parameter& p : step->parameters) {
      if (p.gradient < 0) continue;
      options.gather.push_back(p.gradient);
      options.gather.push_back(p.tensor);  // as its update left it
      // Adam's v (the second of its state) is a running mean of squares.
      if (p.state.size() == 2) options.nonnegative.push_back(p.state[1]);
    }
  }
  OFS_ASSIGN_OR_RETURN(RunTotals planned, RunOnRanks( program, plan.chosen,
      eager::ProgramRunMode::kFollowPlan, engine, options));
  OFS_ASSIGN_OR_RETURN(RunTotals greedy, RunOnRanks( program, plan.greedy,
      eager::ProgramRunMode::kEagerInference, engine, options));

  oneflow::PlanExecutionProto e;
  e.set_ranks(static_cast<int>(program.placement().parallel_num()));
  e.set_seed(seed);
  e.set_ops(static_cast<int>(program.ops().size()));
  auto fill = [](const RunTotals& t, int64_t predicted, int as_predicted,
                 oneflow::PlanRunProto* p) {
    p->set_measured_bytes(t.bytes_received);
    p->set_predicted_bytes(predicted);
    p->set_wall_s(t.wall_s);
    p->set_ops_as_predicted(as_predicted);
  };
  fill(planned, plan.costs.comm_bytes,
       OpsAsPredicted(planned.rank0.signatures, plan.chosen.op_signatures), e.mutable_plan());
  fill(greedy, plan.greedy_costs.comm_bytes,
       OpsAsPredicted(greedy.rank0.signatures, plan.greedy.op_signatures), e.mutable_greedy());
  e.set_outputs(static_cast<int>(planned.rank0.outputs.size()));
  e.set_max_output_diff(
      MaxRelativeDifference(planned.rank0.outputs, greedy.rank0.outputs, /*scale_floor=*/1));
  if (step != nullptr) {
    e.set_step_tensors(static_cast<int>(options.gather.size()));
    e.set_max_step_tensor_diff(MaxRelativeDifference(planned.rank0.gathered,
                                                     greedy.rank0.gathered, /*scale_floor=*/1));
  }

  std::vector<std::string> problems;
  const int num_ops = static_cast<int>(program.ops().size());
  for (const auto& [name, run] : {std::pair<const char*, const oneflow::PlanRunProto*>{
                                      "plan", &e.plan()},
                                  {"greedy", &e.greedy()}}) {
    if (run->measured_bytes() != run->predicted_bytes()) {
      problems.push_back(absl::StrCat(name, " moved ", run->measured_bytes(),
                                      " B where the cost model predicted ",
                                      run->predicted_bytes(), " B"));
    }
    if (run->ops_as_predicted() != num_ops) {
      problems.push_back(absl::StrCat(name, ": ", num_ops - run->ops_as_predicted(), " of ",
                                      num_ops, " ops ran with another signature"));
    }
  }
  if (!(e.max_output_diff() <= kOutputTolerance)) {
    problems.push_back(absl::StrFormat("outputs differ by %.3g (tolerance %.0e)",
                                       e.max_output_diff(), kOutputTolerance));
  }
  if (e.has_step_tensors() && !(e.max_step_tensor_diff() <= kOutputTolerance)) {
    problems.push_back(absl::StrFormat("gradients or updated parameters differ by %.3g (tolerance %.0e)",
                                       e.max_step_tensor_diff(), kOutputTolerance));
  }
  e.set_ok(problems.empty());
  if (!problems.empty()) e.set_mismatch(absl::StrJoin(problems, "; "));
  return e;
}

std::string PlanExecutionText(const oneflow::PlanExecutionProto& e) {
  auto line = [](const char* name, const oneflow::PlanRunProto& r, int ops) {
    return absl::StrFormat("  %-7s %d B moved (predicted %d B), %d/%d ops as predicted, %.3f s\n",
                           name, r.measured_bytes(), r.predicted_bytes(), r.ops_as_predicted(),
                           ops, r.wall_s());
  };
  const int ops = e.ops();
  std::string out = absl::StrCat("\nexecuted on ", e.ranks(), " rank threads (seed ", e.seed(),
                                 "):\n");
  absl::StrAppend(&out, line("plan", e.plan(), ops), line("greedy", e.greedy(), ops));
  absl::StrAppend(&out, absl::StrFormat("  outputs %d, max difference plan vs greedy %.3g\n",
                                        e.outputs(), e.max_output_diff()));
  if (e.has_step_tensors()) {
    absl::StrAppend(&out, absl::StrFormat("  gradients and updated parameters %d, max difference "
                                          "plan vs greedy %.3g\n",
                                          e.step_tensors(), e.max_step_tensor_diff()));
  }
  absl::StrAppend(&out, e.ok() ? absl::StrCat("  OK: bytes as predicted, same outputs",
                                              e.has_step_tensors() ? " and gradients" : "", "\n")
                               : absl::StrCat("  MISMATCH: ", e.mismatch(), "\n"));
  return out;
}

}  // namespace oneflow_sbp::cli
