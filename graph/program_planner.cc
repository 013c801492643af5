#include "graph/program_planner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "graph/boxing_prices.h"
#include "graph/greedy.h"
#include "graph/selection_problem.h"

namespace oneflow_sbp::graph {
namespace {

// Per op the candidate with the most B entries (lowest index first); free
// tensors all-B (their layout 0).
std::vector<int> AllBroadcastLike(const SelectionProblem& p) {
  std::vector<int> choice(p.graph.num_nodes(), 0);
  for (int i = 0; i < p.num_ops; ++i) {
    int best = -1;
    for (size_t c = 0; c < p.op_candidates[i].size(); ++c) {
      int b = 0;
      for (const NdSbp& nd : p.op_candidates[i][c]) {
        for (int a = 0; a < nd.size(); ++a) b += nd[a].is_broadcast() ? 1 : 0;
      }
      if (b > best) {
        best = b;
        choice[i] = static_cast<int>(c);
      }
    }
  }
  return choice;
}

int64_t PeakBytes(const SelectionProblem& p, const std::vector<int>& choice) {
  int64_t bytes = p.fixed_memory_bytes;
  for (int v = 0; v < p.graph.num_nodes(); ++v) bytes += p.memory_bytes[v][choice[v]];
  return bytes;
}

// Solves with memory priced at `lambda` s/byte on top of `base`.
absl::StatusOr<Solution> SolvePriced(const CostGraph& base, const SelectionProblem& p,
                                     double lambda, const SolverOptions& options,
                                     const std::vector<std::vector<int>>& starts) {
  if (lambda == 0) return SolveCostGraph(base, options, starts);
  CostGraph g = base;
  for (int v = 0; v < g.num_nodes(); ++v) {
    std::vector<double>& u = g.mutable_unary(v);
    for (size_t c = 0; c < u.size(); ++c) u[c] += lambda * static_cast<double>(p.memory_bytes[v][c]);
  }
  return SolveCostGraph(g, options, starts);
}

// The fitting choice with the least time, or kResourceExhausted.
absl::StatusOr<Solution> SolveUnderCap(const SelectionProblem& p, int64_t cap,
                                       const SolverOptions& options,
                                       const std::vector<std::vector<int>>& starts,
                                       double* lambda_used) {
  CostGraph capped = p.graph;
  for (int v = 0; v < capped.num_nodes(); ++v) {
    std::vector<double>& u = capped.mutable_unary(v);
    for (size_t c = 0; c < u.size(); ++c) {
      if (p.fixed_memory_bytes + p.memory_bytes[v][c] > cap) u[c] = kInfeasible;
    }
  }
  std::optional<Solution> best;
  int64_t least_peak = -1;
  // Solves at `lambda`; keeps the solution if it fits and beats the best
  // (strictly: ties keep the earlier, smaller lambda). Returns its peak
  // and time.
  auto attempt = [&](double lambda, int64_t* peak, double* time) -> absl::Status {
    absl::StatusOr<Solution> s = SolvePriced(capped, p, lambda, options, starts);
    if (!s.ok()) return s.status();
    *peak = PeakBytes(p, s->choice);
    *time = capped.Objective(s->choice);
    if (least_peak < 0 || *peak < least_peak) least_peak = *peak;
    if (*peak <= cap && *time < kInfeasible && (!best.has_value() || *time < best->objective)) {
      s->objective = *time;
      best = *std::move(s);
      *lambda_used = lambda;
    }
    return absl::OkStatus();
  };
  int64_t peak = 0;
  double time = 0;
  absl::Status s = attempt(0, &peak, &time);
  if (!s.ok()) return s;
  if (peak > cap || !(time < kInfeasible)) {
    // Start at the unpriced choice's time per byte of its peak.
    double lo = 0;
    double hi = (time < kInfeasible ? std::max(time, 1e-9) : 1.0) /
                static_cast<double>(std::max<int64_t>(peak, 1));
    bool fits = false;
    for (int i = 0; i < 64 && !fits; ++i) {
      s = attempt(hi, &peak, &time);
      if (!s.ok()) return s;
      fits = peak <= cap && time < kInfeasible;
      if (!fits) {
        lo = hi;
        hi *= 2;
      }
    }
    if (!fits) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "memory cap ", cap, " bytes per rank: the least memory any choice found needs is ",
          least_peak, " bytes per rank (fixed tensors alone: ", p.fixed_memory_bytes, ")"));
    }
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      s = attempt(mid, &peak, &time);
      if (!s.ok()) return s;
      (peak <= cap && time < kInfeasible ? hi : lo) = mid;
    }
  }
  return *std::move(best);
}

}  // namespace

absl::StatusOr<ProgramPlan> PlanProgram(const Program& program, Engine& engine,
                                        const PlanProgramOptions& options) {
  const auto start_time = std::chrono::steady_clock::now();
  if (options.memory_cap_bytes.has_value() && *options.memory_cap_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory cap ", *options.memory_cap_bytes, " bytes; it must be > 0"));
  }
  if (options.work_budget <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("work budget ", options.work_budget, " steps; it must be > 0"));
  }
  ProgramPlan plan;
  absl::StatusOr<Assignment> greedy = GreedyAssignment(program, engine, options.greedy_policy);
  if (!greedy.ok()) return greedy.status();
  plan.greedy = *std::move(greedy);

  BoxingPrices prices(engine, program.placement(), options.work_budget);
  int threads = options.pricing_threads;
  if (threads <= 0) threads = std::min(8, std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  absl::StatusOr<SelectionProblem> problem =
      BuildSelectionProblem(program, prices, plan.greedy.op_signatures, threads);
  if (!problem.ok()) return problem.status();
  const SelectionProblem& p = *problem;
  plan.boxing_plans = static_cast<int64_t>(prices.num_time_plans());
  for (int v = 0; v < p.graph.num_nodes(); ++v) plan.num_candidates.push_back(p.graph.num_candidates(v));
  absl::StatusOr<std::vector<int>> greedy_choice = p.ToChoice(program, plan.greedy);
  if (!greedy_choice.ok()) return absl::InternalError(greedy_choice.status().message());
  for (int i = 0; i < p.num_ops; ++i) {
    plan.greedy_candidates_added +=
        static_cast<int>(p.op_candidates[i].size()) - p.stage_candidates[i];
  }
  const std::vector<std::vector<int>> starts = {*greedy_choice, AllBroadcastLike(p)};

  absl::StatusOr<Solution> sol =
      options.memory_cap_bytes.has_value()
          ? SolveUnderCap(p, *options.memory_cap_bytes, options.solver, starts,
                          &plan.memory_price_s_per_byte)
          : SolveCostGraph(p.graph, options.solver, starts);
  if (!sol.ok()) return sol.status();
  if (!(sol->objective < kInfeasible)) {
    return absl::UnimplementedError(
        "no choice of signatures can be carried out: every one needs a boxing the planner has "
        "no path for, or boxes a mutable input");
  }
  plan.stats = sol->stats;
  PreferLowerSecondary(p.graph, p.memory_bytes, &sol->choice);
  plan.chosen = p.ToAssignment(sol->choice);
  absl::StatusOr<ProgramCosts> costs = EvaluateAssignment(program, plan.chosen, prices);
  if (!costs.ok()) return costs.status();
  plan.costs = *std::move(costs);
  absl::StatusOr<ProgramCosts> greedy_costs = EvaluateAssignment(program, plan.greedy, prices);
  if (!greedy_costs.ok()) return greedy_costs.status();
  plan.greedy_costs = *std::move(greedy_costs);
  plan.boxing_work = prices.work_spent();
  plan.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return plan;
}

}  // namespace oneflow_sbp::graph
