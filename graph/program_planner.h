// PlanProgram: chooses every op's N-D signature and every free tensor's
// layout jointly over a whole program, and the eager greedy choice beside
// it for comparison (what `sbp plan` prints).
//
//   absl::StatusOr<Program> program = ...;         // program.h or io/program_proto.h
//   absl::StatusOr<ProgramPlan> plan = PlanProgram(*program, *engine, {});
//   plan->costs.total_time_s <= plan->greedy_costs.total_time_s;   // always
//
// Steps:
//   1. the eager greedy choice (greedy.h);
//   2. the SelectionProblem (selection_problem.h), with the greedy
//      signatures required as candidates, so the greedy choice is one of
//      the choices the solver weighs;
//   3. SolveCostGraph (graph_solver.h) with two starts, the greedy choice
//      and the all-B-like choice (per op the candidate with the most B
//      entries, lowest index first; free tensors all-B): exact where the
//      reduced graph is small, and never worse than the greedy choice;
//   4. ties in time go to less memory per rank: each node in turn (ops in
//      program order, then free tensors) takes, among the candidates that
//      cost no more given its neighbours' choices, the one with the fewest
//      bytes given its neighbours' choices (its own tensors and the boxed
//      copies of its reads; then the lower cost, then the lower index), so a
//      parameter read only as (B, S(1)) is stored so, not replicated;
//   5. EvaluateAssignment (program_costs.h) of both choices.
//
// Memory cap (optional, bytes per rank; memory as program_costs.h counts
// it, boxed copies included, which SelectionProblem::memory prices): a
// candidate whose own tensors and copies with the fixed ones already
// exceed the cap is infeasible; if the best choice still exceeds it,
// memory is priced at lambda seconds per byte (Lagrangian relaxation) and
// the search looks for the fitting choice with the least time:
//   1. lambda doubles from time/peak of the unpriced choice until a choice
//      fits: a bracket (lo does not fit, hi does); after 3 doublings in a
//      row that meet no smaller peak the search gives up;
//   2. the next solve is at the bracket's breakpoint, the lambda at which
//      lo and hi cost the same, (time_hi - time_lo) / (peak_lo - peak_hi),
//      which lands on a choice of the time/memory trade-off's lower hull
//      between them if there is one; repeated until a solve finds no new
//      (time, peak), at most 16 times;
//   3. bisection of the bracket while it improves the best fitting choice
//      (3 solves in a row without improvement end it, 40 at most), since
//      local search also lands on choices off the hull.
// Each priced solve starts from the two starts below, the bracket's two
// choices and the random starts, and every start's end is weighed (not
// only the solve's best): the fitting one with the least time wins (ties:
// the smaller peak, then the one met first). This is a heuristic for the
// capped problem (exact only for the priced one); kResourceExhausted if no
// choice met fits.
//
// Deterministic: the same program, engine calibration and options give the
// same plan on every run (tie orders: graph_solver.h).
#ifndef GRAPH_PROGRAM_PLANNER_H_
#define GRAPH_PROGRAM_PLANNER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "graph/boxing_prices.h"
#include "graph/graph_solver.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/inference/policy_name.h"

namespace oneflow_sbp::graph {

struct PlanProgramOptions {
  SolverOptions solver;
  // Per-rank memory cap in bytes; unset means none. Must be > 0.
  std::optional<int64_t> memory_cap_bytes;
  // The policy of the greedy baseline.
  PolicyName greedy_policy = PolicyName::OneFlow();
  // Threads that plan boxing prices; 0: the hardware's, at most 8. The
  // plan does not depend on it.
  int pricing_threads = 0;
  // Estimated boxing-planner steps the pricing may take (BoxingPrices's
  // work budget); over it, PlanProgram is kResourceExhausted before
  // pricing. Must be > 0.
  int64_t work_budget = BoxingPrices::kDefaultWorkBudget;
  // Price every boxing by its cheapest plan made of collectives, never a
  // p2p exchange (BoxingPrices): large meshes within the budget, at the
  // price of missing a cheaper exchange. The plan reports it.
  bool collectives_only = false;
};

struct ProgramPlan {
  Assignment chosen;
  ProgramCosts costs;
  Assignment greedy;
  ProgramCosts greedy_costs;
  SolverStats stats;
  // Per node (ops in program order, then free tensors): candidates weighed.
  std::vector<int> num_candidates;
  // Greedy signatures the shared stages did not list (appended).
  int greedy_candidates_added = 0;
  // The price of memory that met the cap (0 without a cap, or when the
  // cheapest choice already fits).
  double memory_price_s_per_byte = 0;
  // Solves the memory cap search ran with memory priced (0 without a cap
  // or when the cheapest choice already fits).
  int priced_solves = 0;
  // Boxing plans made to price the tables (pairs sharing one counted once).
  int64_t boxing_plans = 0;
  // Their estimated planner steps (charged against the work budget).
  int64_t boxing_work = 0;
  // Of boxing_plans, those priced by collectives alone (no p2p exchange
  // priced, so one might have been cheaper): every one with
  // PlanProgramOptions::collectives_only, else those over the planner's
  // own limit (BoxingPrices::pairs_without_exchanges).
  int64_t boxing_plans_without_exchanges = 0;
  // Wall time of PlanProgram.
  double seconds = 0;
};

// Errors: those of the greedy pass and of building the problem (named by
// op label); kInvalidArgument for a memory cap <= 0; kResourceExhausted if
// no choice fits the cap, or if pricing the boxing the choices need would
// go over options.work_budget (checked before pricing); kUnimplemented if every choice needs a boxing
// the planner cannot do (or boxes a mutable input).
absl::StatusOr<ProgramPlan> PlanProgram(const Program& program, engine::Engine& engine,
                                        const PlanProgramOptions& options);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_PROGRAM_PLANNER_H_
