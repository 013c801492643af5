// `sbp plan --execute`: runs a solved program plan and its eager greedy
// baseline on real ranks (threads of this process) through the eager
// interpreter (eager/program_runner.h), and checks what the plan claims:
// both runs move exactly the bytes the cost model predicted, eager
// inference makes the greedy choices the planner predicted, and the two
// choices compute the same outputs (up to floating-point summation order);
// for a training step also the same gradients and updated parameters.
#ifndef CLI_PLAN_EXECUTION_H_
#define CLI_PLAN_EXECUTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "graph/program.h"
#include "graph/program_planner.h"
#include "graph/training_step_info.h"
#include "proto/program.pb.h"

namespace oneflow_sbp::cli {

// Outputs agree when max |plan - greedy| <= kOutputTolerance * max(1,
// max |greedy|): f32 sums in another order differ by a few ulps per term.
inline constexpr double kOutputTolerance = 1e-4;

// Runs both choices on one thread per device rank of the program's
// placement. With `step` (the program is step->program, a training step:
// forward, the backward ops autograd runs, gradient reductions, updates),
// each parameter's gradient and its value after the update are compared
// between the two runs too, with the same tolerance (Adam's v is seeded
// non-negative). Errors: op errors (named by the op's label) and
// timeouts; disagreements are not errors but come back with ok() false.
absl::StatusOr<oneflow::PlanExecutionProto> ExecuteProgramPlan(
    const graph::Program& program, const graph::ProgramPlan& plan, engine::Engine& engine, uint64_t seed,
    const graph::TrainingStepInfo* step = nullptr);

// Indented lines appended to `sbp plan`'s text report.
std::string PlanExecutionText(const oneflow::PlanExecutionProto& e);

}  // namespace oneflow_sbp::cli

#endif  // CLI_PLAN_EXECUTION_H_
