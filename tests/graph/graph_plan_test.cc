// Graph-level selection on programs: cost tables agree with the reference
// evaluation, the planner equals brute force over every candidate
// combination on random programs, never loses to the eager greedy choice,
// and finds Megatron's MLP split by itself.
#include <cmath>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/boxing_prices.h"
#include "graph/compute_model.h"
#include "graph/greedy.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "graph/selection_problem.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "ops/builtin_ops.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::graph {
namespace {

// The built-in ops' shared test engine.
engine::Engine& Eng() { return **testing::EngineFor(); }

Placement P(const char* text) { return *Placement::Parse(text); }

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1e-6, std::fabs(b)); }

// Exhaustive depth-first enumeration of every choice, paying each edge when
// its later end is chosen: the minimum. Independent of the solver.
double Exhaustive(const CostGraph& g) {
  const int n = g.num_nodes();
  std::vector<std::vector<std::pair<int, int>>> back(n);  // (edge, earlier end)
  for (size_t e = 0; e < g.edges().size(); ++e) {
    const CostEdge& edge = g.edges()[e];
    back[std::max(edge.a, edge.b)].push_back({static_cast<int>(e), std::min(edge.a, edge.b)});
  }
  std::vector<int> cur(n, 0);
  double best = kInfeasible;
  std::function<void(int, double)> visit = [&](int d, double partial) {
    if (d == n) {
      best = std::min(best, partial);
      return;
    }
    for (int x = 0; x < g.num_candidates(d); ++x) {
      double c = partial + g.unary(d)[x];
      for (const auto& [e, other] : back[d]) {
        const CostEdge& edge = g.edges()[e];
        c += edge.a == d ? edge.cost[x * g.num_candidates(edge.b) + cur[other]]
                         : edge.cost[cur[other] * g.num_candidates(d) + x];
      }
      cur[d] = x;
      visit(d + 1, c);
    }
  };
  visit(0, 0);
  return best;
}

double Product(const CostGraph& g) {
  double p = 1;
  for (int v = 0; v < g.num_nodes(); ++v) p *= g.num_candidates(v);
  return p;
}

// The problem PlanProgram solves (greedy signatures required).
SelectionProblem ProblemOf(const Program& program, BoxingPrices& prices) {
  Assignment greedy = *GreedyAssignment(program, Eng());
  return *BuildSelectionProblem(program, prices, greedy.op_signatures);
}

TEST(BoxingPrices, SharedPlansPriceLikeExactOnes) {
  int pairs = 0;
  for (const char* mesh : {"cpu:0-3 [2,2]", "cpu:0-7 [2,4]"}) {
    for (const char* desc : {"f32[8,8,4]", "f32[6,5,6]", "f32[5,5,5]", "f32[4,4]"}) {
      BoxingPrices prices(Eng(), P(mesh));
      const TensorDesc d = *TensorDesc::Parse(desc);
      std::vector<NdSbp> layouts;
      std::vector<SbpParallel> sbp = {SbpParallel::Broadcast(), SbpParallel::PartialSum()};
      for (int k = 0; k < d.shape.rank(); ++k) sbp.push_back(SbpParallel::Split(k));
      for (SbpParallel a : sbp) {
        for (SbpParallel b : sbp) {
          NdSbp nd{a, b};
          if (IsSplittable(d.shape, nd, P(mesh).hierarchy())) layouts.push_back(nd);
        }
      }
      for (const NdSbp& from : layouts) {
        for (const NdSbp& to : layouts) {
          absl::StatusOr<double> shared = prices.Time(d, from, to);
          absl::StatusOr<BoxingPrice> exact = prices.Price(d, from, to);
          ASSERT_TRUE(shared.ok() && exact.ok());
          EXPECT_EQ(*shared, exact->time_s) << desc << " " << from.ToString() << " -> " << to.ToString();
          ++pairs;
        }
      }
      EXPECT_LT(prices.num_time_plans(), static_cast<size_t>(pairs));
    }
  }
  EXPECT_GT(pairs, 1000);
}

TEST(ComputeModel, LocalShapesAndWork) {
  EXPECT_EQ(LocalShape(Shape{10, 6}, *NdSbp::Parse("(S(0),S(0))"), {2, 2}).ToString(), "[3,6]");
  EXPECT_EQ(LocalBytes(*TensorDesc::Parse("f32[10,6]"), *NdSbp::Parse("(S(0),B)"), {2, 2}), 120);
  const auto call = *OpCall::Make(ops::BuiltinOpRegistry().Find("matmul"), {1, 1, 0}, AttrMap());
  const std::vector<TensorDesc> descs = {*TensorDesc::Parse("f32[64,32]"),
                                         *TensorDesc::Parse("f32[32,16]"),
                                         *TensorDesc::Parse("f32[64,16]")};
  const boxing::Calibration cal = boxing::Calibration::Defaults(8);
  auto work = [&](const char* a, const char* b, const char* out) {
    return EstimateOpWork(*call, descs, {*NdSbp::Parse(a), *NdSbp::Parse(b), *NdSbp::Parse(out)},
                          {2}, cal);
  };
  EXPECT_EQ(work("B", "B", "B").flops, 2.0 * 64 * 16 * 32);
  EXPECT_EQ(work("S(0)", "B", "S(0)").flops, 2.0 * 32 * 16 * 32);
  EXPECT_EQ(work("S(1)", "S(0)", "P").flops, 2.0 * 64 * 16 * 16);  // k split: out P, half the work
  EXPECT_DOUBLE_EQ(work("B", "B", "B").time_s, 2.0 * 64 * 16 * 32 / cal.compute_flops_per_s());
  const auto relu = *OpCall::Make(ops::BuiltinOpRegistry().Find("relu"), {1}, AttrMap());
  const std::vector<TensorDesc> two = {descs[0], descs[0]};
  EXPECT_EQ(EstimateOpWork(*relu, two, {*NdSbp::Parse("S(0)"), *NdSbp::Parse("S(0)")}, {2}, cal)
                .bytes,
            2.0 * 32 * 32 * 4);
}

// The tables' objective is the reference evaluation's total time, and the
// memory accounting matches, for random choices on random programs.
TEST(SelectionProblem, ObjectiveIsTheEvaluatedTime) {
  std::mt19937_64 rng(5);
  int checked = 0;
  for (const char* mesh : {"cpu:0-1", "cpu:0-3 [2,2]"}) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      const Program program = *RandomProgram(ops::BuiltinOpRegistry(), P(mesh), seed, 8);
      BoxingPrices prices(Eng(), program.placement());
      const SelectionProblem p = ProblemOf(program, prices);
      for (int trial = 0; trial < 10; ++trial) {
        std::vector<int> choice;
        for (int v = 0; v < p.graph.num_nodes(); ++v) {
          choice.push_back(static_cast<int>(rng() % p.graph.num_candidates(v)));
        }
        absl::StatusOr<ProgramCosts> c = EvaluateAssignment(program, p.ToAssignment(choice), prices);
        ASSERT_TRUE(c.ok()) << c.status();
        const double objective = p.graph.Objective(choice) + p.constant_time_s;
        if (std::isfinite(c->total_time_s)) {
          EXPECT_TRUE(Near(objective, c->total_time_s)) << objective << " vs " << c->total_time_s;
        } else {
          EXPECT_FALSE(std::isfinite(objective));
        }
        EXPECT_EQ(p.PeakBytes(choice), c->peak_memory_bytes);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 160);
}

// Dense programs: every sum reads the three latest tensors, and matmuls
// share one weight, so the reduced graph keeps a core (each op of the
// window is joined to the next three) that enumeration must solve.
Program DenseProgram(const Placement& placement, int num_ops, uint64_t seed) {
  ProgramBuilder b(ops::BuiltinOpRegistry(), placement);
  NdSbp x = NdSbp::Repeat(SbpParallel::Broadcast(), placement.num_axes());
  x.set(0, SbpParallel::Split(0));
  EXPECT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[16,16]"), x).ok());
  EXPECT_TRUE(b.AddParameter("w", *TensorDesc::Parse("f32[16,16]")).ok());
  std::vector<std::string> t = {"x"};
  for (int i = 0; i < num_ops; ++i) {
    const std::string out = absl::StrCat("t", i);
    const size_t n = t.size();
    absl::Status s;
    if (n < 3) {
      s = b.AddOp(i == 0 ? "relu" : "tanh", {t[n - 1]}, {out}, AttrMap());
    } else if ((i + seed) % 3 == 0) {
      s = b.AddOp("matmul", {t[n - 1], "w"}, {out}, AttrMap());
    } else {
      s = b.AddOp("add_n", {t[n - 1], t[n - 2], t[n - 3]}, {out}, AttrMap());
    }
    EXPECT_TRUE(s.ok()) << s;
    t.push_back(out);
  }
  return *std::move(b).Build();
}

TEST(EvaluateAssignment, BadAssignmentsAreErrors) {
  const Program program = *MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), MlpConfig());
  BoxingPrices prices(Eng(), program.placement());
  Assignment a = *GreedyAssignment(program, Eng());
  ASSERT_TRUE(EvaluateAssignment(program, a, prices).ok());
  Assignment short_list = a;
  short_list.op_signatures.pop_back();
  EXPECT_THAT(EvaluateAssignment(program, short_list, prices),
            StatusIs(absl::StatusCode::kInvalidArgument));
  Assignment bad_free = a;
  bad_free.free_layouts[0] = *NdSbp::Parse("(S(5),B)");
  EXPECT_THAT(std::string(EvaluateAssignment(program, bad_free, prices).status().message()),
              ::testing::HasSubstr("free tensor 'w1'"));
  Assignment bad_blob = a;
  bad_blob.op_signatures[1][0] = *NdSbp::Parse("(S(0))");
  EXPECT_THAT(std::string(EvaluateAssignment(program, bad_blob, prices).status().message()),
              ::testing::HasSubstr("gelu blob in_0"));
}

// The memory model counts the copies a choice materialises (issue 23: it
// summed each tensor once, in its defining layout, so ZeRO's gathered
// weight was free). y = x·w on two ranks, w f32[16,32] stored S(0)
// (ZeRO: 1 KiB a rank) and read whole (B) by the matmul: each rank also
// holds the all-gathered 2 KiB copy. The output y ends S(0) and is boxed
// to B, a 1 KiB copy on each rank.
TEST(EvaluateAssignment, PeakCountsBoxedCopies) {
  ProgramBuilder b(ops::BuiltinOpRegistry(), P("cpu:0-1"));
  ASSERT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[8,16]"), *NdSbp::Parse("(S(0))")).ok());
  ASSERT_TRUE(b.AddParameter("w", *TensorDesc::Parse("f32[16,32]")).ok());
  ASSERT_TRUE(b.AddOp("matmul", {"x", "w"}, {"y"}, AttrMap()).ok());
  ASSERT_TRUE(b.MarkOutput("y", *NdSbp::Parse("(B)")).ok());
  absl::StatusOr<Program> program = std::move(b).Build();
  ASSERT_TRUE(program.ok()) << program.status();
  BoxingPrices prices(Eng(), program->placement());
  Assignment zero;
  zero.op_signatures = {{*NdSbp::Parse("(S(0))"), *NdSbp::Parse("(B)"), *NdSbp::Parse("(S(0))")}};
  zero.free_layouts = {*NdSbp::Parse("(S(0))")};
  absl::StatusOr<ProgramCosts> c = EvaluateAssignment(*program, zero, prices);
  ASSERT_TRUE(c.ok()) << c.status();
  // x 256 B + w's shard 1 KiB + y's shard 512 B, then the copies: w
  // gathered (2 KiB) and y gathered (1 KiB).
  EXPECT_EQ(c->copy_memory_bytes, 2048 + 1024);
  EXPECT_EQ(c->peak_memory_bytes, 256 + 1024 + 512 + 2048 + 1024);
  // Replicated, w needs no copy: ZeRO is not cheaper in memory here.
  Assignment replicated = zero;
  replicated.free_layouts = {*NdSbp::Parse("(B)")};
  c = EvaluateAssignment(*program, replicated, prices);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->peak_memory_bytes, 256 + 2048 + 512 + 1024);
  // The planner's memory graph counts the same copies.
  const SelectionProblem p = ProblemOf(*program, prices);
  absl::StatusOr<std::vector<int>> choice = p.ToChoice(*program, zero);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(p.PeakBytes(*choice), 256 + 1024 + 512 + 2048 + 1024);
}

// The headline proof: on random programs (chains, diamonds, residual
// joins) the planner's total equals the minimum over every candidate
// combination, and is never worse than the eager greedy choice.
TEST(PlanProgram, EqualsBruteForceOnRandomPrograms) {
  struct Mesh {
    const char* placement;
    int max_ops;
  };
  int agreed = 0, compared = 0, skipped = 0, with_core = 0;
  double largest = 0;
  for (const Mesh& m : {Mesh{"cpu:0-1", 10}, Mesh{"cpu:0-3 [2,2]", 6}}) {
    for (uint64_t seed = 0; seed < 50; ++seed) {
      const int num_ops = 2 + static_cast<int>(seed % (m.max_ops - 1));
      // Three random programs in four, then a dense one.
      const Program program =
          seed % 4 == 3 ? DenseProgram(P(m.placement), num_ops, seed)
                        : *RandomProgram(ops::BuiltinOpRegistry(), P(m.placement), seed, num_ops);
      BoxingPrices prices(Eng(), program.placement());
      const SelectionProblem p = ProblemOf(program, prices);
      const double product = Product(p.graph);
      if (product > 3e7) {
        ++skipped;
        continue;
      }
      largest = std::max(largest, product);
      absl::StatusOr<ProgramPlan> plan = PlanProgram(program, Eng(), {});
      ASSERT_TRUE(plan.ok()) << plan.status();
      const double brute = Exhaustive(p.graph) + p.constant_time_s;
      ++compared;
      if (Near(plan->costs.total_time_s, brute)) {
        ++agreed;
      } else {
        ADD_FAILURE() << m.placement << " seed " << seed << ": planned " << plan->costs.total_time_s
                      << ", brute force " << brute;
      }
      EXPECT_LE(plan->costs.total_time_s, plan->greedy_costs.total_time_s * (1 + 1e-12));
      if (plan->stats.core_nodes > 0) ++with_core;
    }
  }
  std::printf("brute force: %d of %d programs agree (%d skipped as too large; largest %g "
              "combinations; %d left a core after reduction)\n",
              agreed, compared, skipped, largest, with_core);
  EXPECT_EQ(agreed, compared);
  EXPECT_GE(compared, 60);
  EXPECT_GE(with_core, 5);  // the exact enumeration of a core is exercised too
}

// Small programs also against brute force through the reference
// evaluation itself (every combination evaluated from scratch), which
// checks the cost tables and the solver together.
TEST(PlanProgram, EqualsEvaluatedBruteForceOnSmallPrograms) {
  int compared = 0;
  for (const char* mesh : {"cpu:0-1", "cpu:0-3 [2,2]"}) {
    for (uint64_t seed = 100; seed < 112; ++seed) {
      const Program program = *RandomProgram(ops::BuiltinOpRegistry(), P(mesh), seed, 3);
      BoxingPrices prices(Eng(), program.placement());
      const SelectionProblem p = ProblemOf(program, prices);
      if (Product(p.graph) > 3000) continue;
      double best = kInfeasible;
      std::vector<int> cur(p.graph.num_nodes(), 0);
      while (true) {
        best = std::min(best, EvaluateAssignment(program, p.ToAssignment(cur), prices)->total_time_s);
        int v = p.graph.num_nodes() - 1;
        while (v >= 0 && ++cur[v] == p.graph.num_candidates(v)) cur[v--] = 0;
        if (v < 0) break;
      }
      absl::StatusOr<ProgramPlan> plan = PlanProgram(program, Eng(), {});
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_TRUE(Near(plan->costs.total_time_s, best)) << mesh << " seed " << seed;
      ++compared;
    }
  }
  std::printf("evaluated brute force: %d programs\n", compared);
  EXPECT_GE(compared, 10);
}

// Local search alone (the path for large cores) still never loses to the
// greedy choice it starts from.
TEST(PlanProgram, LocalSearchNeverWorseThanGreedy) {
  PlanProgramOptions local;
  local.solver.max_exact_product = 0;
  local.solver.reduction.max_chain_work = 0;  // keep every degree-2 node in the core
  int searched = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Program program =
        *RandomProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), seed, 4 + seed % 6);
    absl::StatusOr<ProgramPlan> plan = PlanProgram(program, Eng(), local);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_LE(plan->costs.total_time_s, plan->greedy_costs.total_time_s * (1 + 1e-12)) << seed;
    if (!plan->stats.exact) ++searched;
  }
  EXPECT_GT(searched, 5);
}

TEST(PlanProgram, GptBlocksNeverWorseThanGreedy) {
  for (const char* mesh : {"cpu:0-3 [2,2]", "cpu:0-7 [2,4]", "cpu:0-3"}) {
    GptConfig c;
    c.layers = 2;
    c.batch = 4;
    c.seq = 64;
    c.hidden = 256;
    c.heads = 4;
    c.ffn = 1024;
    const Program program = *GptProgram(ops::BuiltinOpRegistry(), P(mesh), c);
    absl::StatusOr<ProgramPlan> plan = PlanProgram(program, Eng(), {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(plan->stats.exact) << mesh;
    EXPECT_LE(plan->costs.total_time_s, plan->greedy_costs.total_time_s * (1 + 1e-12)) << mesh;
  }
}

// What Megatron-LM does by hand: column-parallel W1, row-parallel W2 on
// mesh axis 1, one all-reduce of the output. `batch` 2 cannot be split
// over four ranks, so pure data parallelism is out; weights replicated
// would double the matmul work per rank.
void ExpectMegatron(const Program& program, const ProgramPlan& plan) {
  const std::vector<int> free = program.FreeTensors();
  ASSERT_EQ(free.size(), 2u);
  EXPECT_EQ(plan.chosen.free_layouts[0].ToString(), "(B, S(1))");  // w1: column-parallel
  EXPECT_EQ(plan.chosen.free_layouts[1].ToString(), "(B, S(0))");  // w2: row-parallel
  EXPECT_EQ(SignatureToString(*program.ops()[0].call, plan.chosen.op_signatures[0]),
            "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))");
  EXPECT_EQ(SignatureToString(*program.ops()[1].call, plan.chosen.op_signatures[1]),
            "in_0:(S(0),S(1)) -> out_0:(S(0),S(1))");
  EXPECT_EQ(SignatureToString(*program.ops()[2].call, plan.chosen.op_signatures[2]),
            "a_0:(S(0),S(1)) b_0:(B,S(0)) -> out_0:(S(0),P)");
  int boxed = 0;
  for (const BoxingEdge& e : plan.costs.edges) {
    if (e.from == e.to) continue;
    ++boxed;
    EXPECT_EQ(e.consumer, -1);  // the program output
    EXPECT_EQ(e.price.summary, "all_reduce[1] P->B");
  }
  EXPECT_EQ(boxed, 1);
  EXPECT_LT(plan.costs.total_time_s, plan.greedy_costs.total_time_s);
  EXPECT_LT(plan.costs.peak_memory_bytes, plan.greedy_costs.peak_memory_bytes);
  std::printf("megatron: planned %.1f us (comm %.1f us, compute %.1f us, %lld B/rank), greedy "
              "%.1f us (%lld B/rank)\n",
              plan.costs.total_time_s * 1e6, plan.costs.comm_time_s * 1e6,
              plan.costs.compute_time_s * 1e6, static_cast<long long>(plan.costs.peak_memory_bytes),
              plan.greedy_costs.total_time_s * 1e6,
              static_cast<long long>(plan.greedy_costs.peak_memory_bytes));
}

TEST(PlanProgram, FindsMegatronMlpBySelf) {
  MlpConfig c;
  c.batch = 2;
  const Program program = *MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), c);
  absl::StatusOr<ProgramPlan> plan = PlanProgram(program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectMegatron(program, *plan);
}

// With a large batch, replication costs memory: under a cap that rules out
// replicated weights the planner again picks Megatron's split (23.0 MiB a
// rank, with the 1 MiB all-reduced copy of y). Without the cap it picks
// 4-way data parallelism (x split on both mesh axes, weights replicated),
// which in this forward-only cost model is cheaper: the same flops per
// rank and an all-gather of y instead of an all-reduce.
TEST(PlanProgram, FindsMegatronMlpUnderAMemoryCap) {
  MlpConfig c;
  c.batch = 512;
  const Program program = *MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), c);
  PlanProgramOptions capped;
  capped.memory_cap_bytes = 25'000'000;
  absl::StatusOr<ProgramPlan> plan = PlanProgram(program, Eng(), capped);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectMegatron(program, *plan);
  EXPECT_LE(plan->costs.peak_memory_bytes, 25'000'000);
  EXPECT_EQ(plan->costs.copy_memory_bytes, 1 << 20);
  EXPECT_GT(plan->memory_price_s_per_byte, 0);

  absl::StatusOr<ProgramPlan> free = PlanProgram(program, Eng(), {});
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_EQ(free->chosen.free_layouts[0].ToString(), "(B, B)");
  EXPECT_EQ(SignatureToString(*program.ops()[0].call, free->chosen.op_signatures[0]),
            "a_0:(S(0),S(0)) b_0:(B,B) -> out_0:(S(0),S(0))");
  EXPECT_LT(free->costs.total_time_s, plan->costs.total_time_s);
  EXPECT_GT(free->costs.peak_memory_bytes, 25'000'000);
}

TEST(PlanProgram, MemoryCapErrors) {
  const Program program = *MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), MlpConfig());
  PlanProgramOptions tiny;
  tiny.memory_cap_bytes = 1000;
  EXPECT_THAT(PlanProgram(program, Eng(), tiny), StatusIs(absl::StatusCode::kResourceExhausted));
  PlanProgramOptions zero;
  zero.memory_cap_bytes = 0;
  EXPECT_THAT(PlanProgram(program, Eng(), zero), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(PlanProgram, DeterministicWhateverTheThreads) {
  const Program program = *RandomProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), 3, 9);
  PlanProgramOptions one, four;
  one.pricing_threads = 1;
  four.pricing_threads = 4;
  absl::StatusOr<ProgramPlan> a = PlanProgram(program, Eng(), one);
  Eng().ClearCaches();
  absl::StatusOr<ProgramPlan> b = PlanProgram(program, Eng(), four);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->chosen.op_signatures, b->chosen.op_signatures);
  EXPECT_EQ(a->chosen.free_layouts, b->chosen.free_layouts);
  EXPECT_EQ(a->costs.total_time_s, b->costs.total_time_s);
}

}  // namespace
}  // namespace oneflow_sbp::graph
