#include "graph/program_planner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "graph/boxing_prices.h"
#include "graph/greedy.h"
#include "graph/selection_problem.h"
#include "oneflow_sbp/values/status_macros.h"

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

// A choice the cap search has met: its time (the unpriced objective), its
// peak, and the price of memory it was found at.
struct Point {
  std::vector<int> choice;
  double time = 0;
  int64_t peak = 0;
  double lambda = 0;
};

// Bounds of the memory cap search (program_planner.h): priced solves to
// find a price at which the choice fits, to narrow the bracket at its
// breakpoints, and to bisect it afterwards; the bisection stops after
// kPatience solves in a row that did not improve the best fitting choice.
constexpr int kMaxDoublings = 64;
constexpr int kMaxNarrowings = 16;
constexpr int kMaxBisections = 40;
constexpr int kPatience = 3;

// The fitting choice with the least time under a cap, searched over the
// price of memory (program_planner.h, "Memory cap").
class CapSearch {
 public:
  CapSearch(const SelectionProblem& p, int64_t cap, const SolverOptions& options,
            const std::vector<std::vector<int>>& starts)
      : p_(p), cap_(cap), options_(options), starts_(starts), capped_(p.graph) {
    // A candidate whose own tensors and copies with the fixed ones exceed
    // the cap can never fit.
    for (int v = 0; v < capped_.num_nodes(); ++v) {
      std::vector<double>& u = capped_.mutable_unary(v);
      for (size_t c = 0; c < u.size(); ++c) {
        if (static_cast<double>(p.fixed_memory_bytes) + p.memory.unary(v)[c] >
            static_cast<double>(cap)) {
          u[c] = kInfeasible;
        }
      }
    }
    options_.keep_ends = true;
    // Memory is a pairwise cost (boxed copies), so leaner choices differ
    // from the unpriced one in many nodes at once: block descent moves
    // whole forests of the core.
    options_.block_descent = true;
  }

  absl::StatusOr<Solution> Run(double* lambda_used, int* solves) {
    absl::Status s = Search();
    *solves = solves_ - 1;  // the unpriced one is not a priced solve
    OFS_RETURN_IF_ERROR(s);
    if (!best_.has_value()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "memory cap ", cap_, " bytes per rank: the least memory any choice found needs is ",
          least_peak_, " bytes per rank (fixed tensors alone: ", p_.fixed_memory_bytes, ")"));
    }
    *lambda_used = best_lambda_;
    return *std::move(best_);
  }

 private:
  bool Fits(const Point& x) const { return x.peak <= cap_ && x.time < kInfeasible; }

  absl::Status Search() {
    // 1. Memory unpriced.
    OFS_ASSIGN_OR_RETURN(Point first, Attempt(0, {}));
    if (Fits(first)) return absl::OkStatus();
    // 2. A price at which the choice fits: from the unpriced choice's time
    // per byte of its peak, doubling. `lo` does not fit, `hi` does.
    Point lo = std::move(first);
    double lambda = (lo.time < kInfeasible ? std::max(lo.time, 1e-9) : 1.0) /
                    static_cast<double>(std::max<int64_t>(lo.peak, 1));
    // Gives up (no choice fits) after kPatience doublings in a row that
    // met no smaller peak: pricing memory higher no longer finds less.
    std::optional<Point> hi;
    for (int i = 0, idle = 0; i < kMaxDoublings && idle < kPatience && !hi.has_value();
         ++i, lambda *= 2) {
      const int64_t least = least_peak_;
      OFS_ASSIGN_OR_RETURN(Point x, Attempt(lambda, {&lo}));
      idle = least_peak_ < least ? 0 : idle + 1;
      if (Fits(x)) {
        hi = std::move(x);
      } else {
        lo = std::move(x);
      }
    }
    if (!hi.has_value()) return absl::OkStatus();
    auto closed = [&] { return hi->lambda - lo.lambda <= 1e-9 * hi->lambda; };
    auto narrow = [&](Point x) { (Fits(x) ? *hi : lo) = std::move(x); };
    // 3. The breakpoint of the bracket: the price at which lo and hi cost
    // the same, (time_hi - time_lo) / (peak_lo - peak_hi). An exact solver
    // there returns lo or hi unless a choice lies below the line between
    // them (on the trade-off's lower hull), so this stops when a solve
    // meets neither a new time nor a new peak, when hi is no slower than
    // lo (nothing between can beat it) or when the bracket has closed. A
    // breakpoint outside the bracket (local search is not monotone in the
    // price) is replaced by the midpoint.
    for (int i = 0; i < kMaxNarrowings && hi->time > lo.time && !closed(); ++i) {
      double mid = (hi->time - lo.time) / static_cast<double>(lo.peak - hi->peak);
      if (!(mid > lo.lambda && mid < hi->lambda)) mid = 0.5 * (lo.lambda + hi->lambda);
      OFS_ASSIGN_OR_RETURN(Point x, Attempt(mid, {&lo, &*hi}));
      const bool seen = (x.time == lo.time && x.peak == lo.peak) ||
                        (x.time == hi->time && x.peak == hi->peak);
      if (seen) break;
      narrow(std::move(x));
    }
    // 4. Local search is not exact, so choices off the hull (which may fit
    // with less time) show up near the breakpoint: bisect the bracket
    // while that keeps improving the best fitting choice.
    for (int i = 0, idle = 0; i < kMaxBisections && idle < kPatience && !closed(); ++i) {
      const double before = best_->objective;
      OFS_ASSIGN_OR_RETURN(Point x, Attempt(0.5 * (lo.lambda + hi->lambda), {&lo, &*hi}));
      idle = best_->objective < before ? 0 : idle + 1;
      narrow(std::move(x));
    }
    return absl::OkStatus();
  }

  // Solves at `lambda` from the caller's starts, `from` and the random
  // starts (seeded alike in every solve), weighs every start's end, and
  // returns the solve's own choice.
  absl::StatusOr<Point> Attempt(double lambda, const std::vector<const Point*>& from) {
    ++solves_;
    std::vector<std::vector<int>> starts = starts_;
    for (const Point* x : from) starts.push_back(x->choice);
    absl::StatusOr<Solution> s;
    if (lambda == 0) {
      s = SolveCostGraph(capped_, options_, starts);
    } else {
      CostGraph priced = capped_;
      priced.AddScaled(p_.memory, lambda);
      s = SolveCostGraph(priced, options_, starts);
    }
    OFS_RETURN_IF_ERROR(s.status());
    for (const std::vector<int>& end : s->ends) Weigh(end, lambda, s->stats);
    return Weigh(s->choice, lambda, s->stats);
  }

  // Every choice met is weighed, not only each solve's best: one that is
  // not the priced optimum may still fit with less time. The best fitting
  // choice is replaced only by a strictly faster one, or an equally fast
  // one with a strictly smaller peak (ties: the one met first: earlier
  // solve, earlier start).
  Point Weigh(const std::vector<int>& choice, double lambda, const SolverStats& stats) {
    Point x{choice, capped_.Objective(choice), p_.PeakBytes(choice), lambda};
    if (least_peak_ < 0 || x.peak < least_peak_) least_peak_ = x.peak;
    if (Fits(x) && (!best_.has_value() || x.time < best_->objective ||
                    (x.time == best_->objective && x.peak < best_peak_))) {
      best_ = Solution{x.choice, x.time, stats, {}};
      best_peak_ = x.peak;
      best_lambda_ = lambda;
    }
    return x;
  }

  const SelectionProblem& p_;
  const int64_t cap_;
  SolverOptions options_;
  const std::vector<std::vector<int>>& starts_;
  // The problem with the candidates that cannot fit made infeasible.
  CostGraph capped_;
  std::optional<Solution> best_;
  int64_t best_peak_ = 0;
  double best_lambda_ = 0;
  int64_t least_peak_ = -1;
  int solves_ = 0;
};

}  // namespace

absl::StatusOr<ProgramPlan> PlanProgram(const Program& program, engine::Engine& engine,
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
  OFS_ASSIGN_OR_RETURN(Assignment greedy, GreedyAssignment(program, engine, options.greedy_policy));
  plan.greedy = std::move(greedy);

  BoxingPrices prices(engine, program.placement(), options.work_budget,
                      options.collectives_only);
  int threads = options.pricing_threads;
  if (threads <= 0) threads = std::min(8, std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  OFS_ASSIGN_OR_RETURN(SelectionProblem problem, BuildSelectionProblem(program, prices,
      plan.greedy.op_signatures, threads));
  const SelectionProblem& p = problem;
  plan.boxing_plans = static_cast<int64_t>(prices.num_time_plans());
  for (int v = 0; v < p.graph.num_nodes(); ++v) plan.num_candidates.push_back(p.graph.num_candidates(v));
  absl::StatusOr<std::vector<int>> greedy_choice = p.ToChoice(program, plan.greedy);
  if (!greedy_choice.ok()) return absl::InternalError(greedy_choice.status().message());
  for (int i = 0; i < p.num_ops; ++i) {
    plan.greedy_candidates_added +=
        static_cast<int>(p.op_candidates[i].size()) - p.stage_candidates[i];
  }
  const std::vector<std::vector<int>> starts = {*greedy_choice, AllBroadcastLike(p)};

  OFS_ASSIGN_OR_RETURN(Solution sol, options.memory_cap_bytes.has_value() ? CapSearch(p,
      *options.memory_cap_bytes, options.solver, starts) .Run(&plan.memory_price_s_per_byte,
      &plan.priced_solves) : SolveCostGraph(p.graph, options.solver, starts));
  if (!(sol.objective < kInfeasible)) {
    return absl::UnimplementedError(
        "no choice of signatures can be carried out: every one needs a boxing the planner has "
        "no path for, or boxes a mutable input");
  }
  plan.stats = sol.stats;
  PreferLowerSecondary(p.graph, p.memory, &sol.choice);
  plan.chosen = p.ToAssignment(sol.choice);
  OFS_ASSIGN_OR_RETURN(ProgramCosts costs, EvaluateAssignment(program, plan.chosen, prices));
  plan.costs = std::move(costs);
  OFS_ASSIGN_OR_RETURN(ProgramCosts greedy_costs, EvaluateAssignment(program, plan.greedy, prices));
  plan.greedy_costs = std::move(greedy_costs);
  plan.boxing_work = prices.work_spent();
  plan.boxing_plans_without_exchanges = prices.pairs_without_exchanges();
  plan.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  return plan;
}

}  // namespace oneflow_sbp::graph
