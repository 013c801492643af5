// `sbp plan` through its command function: every output format, --mesh,
// --memory_cap, --training, and the bad-flag and bad-program errors.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/proto_io.h"
#include "ops/builtin_ops.h"
#include "proto/program.pb.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"
#include "tests/support/thread_cpu_time.h"
#include "cli/cmd_plan.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The built-in ops' shared test engine.
engine::Engine& Eng() { return **testing::EngineFor(); }

// The docs' MLP at batch 2: Megatron's split without any cap.
constexpr char kMlp[] = R"j({"placement": "cpu:0-3 [2,2]",
 "tensors": [{"name": "x",  "shape": [2, 1024], "nd_sbp": "(S(0),B)"},
             {"name": "w1", "shape": [1024, 4096]},
             {"name": "w2", "shape": [4096, 1024]}],
 "ops": [{"op": "matmul", "name": "fc1", "inputs": ["x", "w1"], "outputs": ["h"]},
         {"op": "gelu",   "name": "act", "inputs": ["h"], "outputs": ["a"]},
         {"op": "matmul", "name": "fc2", "inputs": ["a", "w2"], "outputs": ["y"]}],
 "outputs": [{"name": "y", "nd_sbp": "(S(0),B)"}]})j";

PlanOptions Mlp(const std::string& format) {
  PlanOptions o;
  o.program = kMlp;
  o.format = format;
  return o;
}

std::string ErrorOf(const absl::StatusOr<std::string>& r) {
  return r.ok() ? "OK: " + *r : std::string(r.status().message());
}

TEST(SbpPlan, Text) {
  absl::StatusOr<std::string> out = RunPlan(Mlp("text"), Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("fc1  a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))"));
  EXPECT_THAT(*out, HasSubstr("greedy: a_0:(S(0),B) b_0:(B,B) -> out_0:(S(0),B)"));
  EXPECT_THAT(*out, HasSubstr("w2           f32[4096,1024]       (B, S(0))"));
  EXPECT_THAT(*out, HasSubstr("y: fc2.out_0 -> output  (S(0), P) -> (S(0), B)  all_reduce[1] P->B"));
  EXPECT_THAT(*out, HasSubstr("eager greedy"));
  EXPECT_THAT(*out, HasSubstr("exact"));
}

TEST(SbpPlan, JsonHasTheDocumentedFields) {
  absl::StatusOr<std::string> out = RunPlan(Mlp("json"), Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  oneflow::ProgramPlanProto plan;
  ASSERT_TRUE(io::FromJson(*out, &plan).ok());
  EXPECT_GT(plan.total_time_s(), 0);
  EXPECT_GT(plan.greedy_total_time_s(), plan.total_time_s());
  EXPECT_EQ(plan.tensors().at("w1").nd_sbp(), "(B, S(1))");
  EXPECT_EQ(plan.tensors().at("w1").role(), "free");
  EXPECT_EQ(plan.tensors().at("y").nd_sbp(), "(S(0), P)");
  ASSERT_EQ(plan.ops_size(), 3);
  EXPECT_EQ(plan.ops(2).op(), "matmul");
  EXPECT_EQ(plan.ops(2).nd_sbp_signature(), "a_0:(S(0),S(1)) b_0:(B,S(0)) -> out_0:(S(0),P)");
  EXPECT_TRUE(plan.solver().exact());
  EXPECT_THAT(*out, HasSubstr("\"total_time_s\""));
  EXPECT_THAT(*out, HasSubstr("\"greedy_total_time_s\""));
  // Map entries print sorted by key, the same on every run (ToJson
  // serializes deterministically).
  const size_t a = out->find("\"a\": {"), h = out->find("\"h\": {"), w1 = out->find("\"w1\": {"),
               x = out->find("\"x\": {"), y = out->find("\"y\": {");
  EXPECT_TRUE(a < h && h < w1 && w1 < x && x < y) << *out;
}

TEST(SbpPlan, DotColoursBoxedEdges) {
  absl::StatusOr<std::string> out = RunPlan(Mlp("dot"), Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("digraph program {"));
  EXPECT_THAT(*out, HasSubstr("all_reduce[1] P->B"));
  EXPECT_THAT(*out, HasSubstr("color=\"0.000 1.000 0.900\""));  // the costliest edge: red
  EXPECT_THAT(*out, HasSubstr("color=\"gray60\""));
}

TEST(SbpPlan, MeshAndMemoryCap) {
  PlanOptions o = Mlp("json");
  o.program = std::string(kMlp);
  o.mesh = "2,2";
  EXPECT_TRUE(RunPlan(o, Eng()).ok());
  o.mesh = "4";  // (S(0),B) no longer fits one mesh axis
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), HasSubstr("tensor 'x'"));
  o.mesh = "2,x";
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), HasSubstr("--mesh='2,x'"));
  o.mesh.reset();
  o.memory_cap = "lots";
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), HasSubstr("--memory_cap='lots'"));
  o.memory_cap = "1000";
  absl::StatusOr<std::string> tight = RunPlan(o, Eng());
  EXPECT_THAT(tight, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(ErrorOf(tight), HasSubstr("memory cap 1000 bytes per rank"));
}

// The engine's calibration prices compute too: when compute is almost
// free, no split is worth a collective and the plan boxes nothing.
TEST(SbpPlan, UsesTheEnginesCalibration) {
  engine::Engine::Options options;
  options.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
  options.calibration.set_compute_flops_per_s(1e18);
  options.calibration.set_memory_bytes_per_s(1e18);
  std::unique_ptr<engine::Engine> fast = *engine::Engine::Create(std::move(options));
  absl::StatusOr<std::string> out = RunPlan(Mlp("text"), *fast);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("none: every read finds the layout it asks for"));
}

// --training plans the whole step: forward, backward, gradient reductions
// and Adam updates, and says so with the memory split and the strategy.
TEST(SbpPlan, TrainingText) {
  PlanOptions o = Mlp("text");
  o.training = true;
  absl::StatusOr<std::string> out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("training step: 4 forward ops (with the loss seed)"));
  EXPECT_THAT(*out, HasSubstr("2 updates; loss y"));
  EXPECT_THAT(*out, HasSubstr("update w1  "));
  for (const char* kind : {"parameter", "gradient", "optimizer", "activation"}) {
    EXPECT_THAT(*out, HasSubstr(absl::StrCat("\n  ", kind, " "))) << kind;
  }
  EXPECT_THAT(*out, HasSubstr("strategy: "));
  EXPECT_THAT(*out, HasSubstr("; greedy: data parallel"));
  // Forward-only: no training section.
  absl::StatusOr<std::string> forward = RunPlan(Mlp("text"), Eng());
  ASSERT_TRUE(forward.ok());
  EXPECT_THAT(*forward, Not(HasSubstr("training step")));
}

// "training": true in the program selects it as the flag does; JSON
// carries the section.
TEST(SbpPlan, TrainingFieldAndJson) {
  std::string program = kMlp;
  program.insert(program.rfind('}'), R"j(, "training": true)j");
  PlanOptions o = Mlp("json");
  o.program = program;
  absl::StatusOr<std::string> out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  oneflow::ProgramPlanProto plan;
  ASSERT_TRUE(io::FromJson(*out, &plan).ok());
  ASSERT_TRUE(plan.has_training());
  const oneflow::PlanTrainingProto& t = plan.training();
  EXPECT_EQ(t.forward_ops(), 4);
  EXPECT_EQ(t.update_ops(), 2);
  EXPECT_GT(t.backward_ops(), 0);
  EXPECT_EQ(t.loss(), "y");
  EXPECT_EQ(t.greedy_strategy(), "data parallel");
  EXPECT_FALSE(t.strategy().empty());
  EXPECT_EQ(t.strategy_per_axis_size(), 2);
  // Greedy: both weights replicated, Adam's m and v beside each.
  EXPECT_EQ(t.greedy_memory().parameters(), (1024 * 4096 * 2) * 4);
  EXPECT_EQ(t.greedy_memory().optimizer_state(), 2 * t.greedy_memory().parameters());
  EXPECT_EQ(t.memory().optimizer_state(), 2 * t.memory().parameters());
  EXPECT_EQ(t.memory().parameters() + t.memory().gradients() + t.memory().optimizer_state() +
                t.memory().activations() + t.memory().inputs(),
            plan.totals().peak_memory_bytes());
  EXPECT_TRUE(plan.tensors().contains("w1.adam_m"));
  EXPECT_FALSE(RunPlan(Mlp("json"), Eng())->empty());
}

PlanOptions DemoTraining() {
  std::stringstream text;
  text << std::ifstream("tests/testdata/demo_mesh22.json").rdbuf();
  PlanOptions o;
  o.program = text.str();
  o.training = true;
  return o;
}

// --execute --training runs the planned step and the greedy one and
// compares bytes, losses and gradients.
TEST(SbpPlan, TrainingExecute) {
  PlanOptions o = DemoTraining();
  o.execute = true;
  bool ok = false;
  absl::StatusOr<std::string> out = RunPlan(o, Eng(), &ok);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(ok) << *out;
  EXPECT_THAT(*out, HasSubstr("gradients and updated parameters 24"));
  EXPECT_THAT(*out, HasSubstr("OK: bytes as predicted, same outputs and gradients"));
}

// A program whose reduced core is too large to enumerate says so.
TEST(SbpPlan, SaysWhenItFellBackToLocalSearch) {
  PlanOptions o = DemoTraining();
  absl::StatusOr<std::string> out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("fell back to local search (core too large to enumerate"));
  // The forward MLP's core is small: exact.
  EXPECT_THAT(*RunPlan(Mlp("text"), Eng()), Not(HasSubstr("fell back")));
}

// 16,384 ranks: the p2p exchanges are over the planner's limit, so each
// pair is priced by collectives alone, charged try by try by its classes
// of translated groups: within the default budget (it asked for
// --work_budget before). 65,536 ranks are still refused, naming the flag.
TEST(SbpPlan, SixteenThousandRanksPlanWithinTheDefaultBudget) {
  PlanOptions o = Mlp("text");
  absl::StrReplaceAll({{"cpu:0-3 [2,2]", "cpu:0-16383 [16,1024]"}}, &o.program);
  absl::StatusOr<std::string> out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  // The planner drops the exchanges itself there, and the report says so.
  EXPECT_THAT(*out, HasSubstr("boxing plans priced by collectives alone (no p2p exchange"));
  o = Mlp("text");
  absl::StrReplaceAll({{"cpu:0-3 [2,2]", "cpu:0-65535 [64,1024]"}}, &o.program);
  out = RunPlan(o, Eng());
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(ErrorOf(out), AllOf(HasSubstr("planner steps, over the budget"),
                                  HasSubstr("--work_budget")));
}

// 1,024 ranks: pricing exchanges is over the default budget; the refusal
// offers --collectives_only with its estimate, which answers and says so
// (text and json); not with --execute, whose plans may use exchanges.
TEST(SbpPlan, CollectivesOnlyPricesAThousandRanksWithinTheDefaultBudget) {
  PlanOptions o = Mlp("text");
  absl::StrReplaceAll({{"cpu:0-3 [2,2]", "cpu:0-1023 [32,32]"}}, &o.program);
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())),
              HasSubstr("price boxing by collectives alone (--collectives_only: ~"));
  o.collectives_only = true;
  absl::StatusOr<std::string> out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("boxing plans priced by collectives alone (no p2p exchange priced"));
  o.format = "json";
  out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("\"boxing_plans_without_exchanges\""));
  o.format = "text";
  o.execute = true;
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())),
              HasSubstr("--collectives_only prices boxing without p2p exchanges"));
  // A budget that pricing by collectives alone would not fit either: no
  // alternative offered. A small mesh's plan prices exchanges and says
  // nothing of collectives.
  o = Mlp("text");
  o.work_budget = "1000";
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), Not(HasSubstr("--collectives_only")));
  o.work_budget.reset();
  out = RunPlan(o, Eng());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, Not(HasSubstr("by collectives alone")));
}

TEST(SbpPlan, Errors) {
  PlanOptions o = Mlp("table");
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), HasSubstr("text|json|dot"));
  o = Mlp("text");
  o.program = "{";
  EXPECT_THAT(RunPlan(o, Eng()), StatusIs(absl::StatusCode::kInvalidArgument));
  o.program = R"j({"placement": "cpu:0-1", "tensors": [{"name": "x", "shape": [4], "nd_sbp": "S(0)"}],
                  "ops": [{"op": "softmax", "name": "sm", "inputs": ["y"]}]})j";
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), HasSubstr("sm: input 0 'y' is not defined"));
}

}  // namespace
// Issue 24: a 3-op MLP on 1,024 ranks took 258 s and 3.95 GB pricing
// boxing; the work is estimated first and refused at once over the budget.
TEST(SbpPlan, LargeMeshIsRefusedBeforePricingUnlessTheBudgetIsRaised) {
  PlanOptions o = Mlp("text");
  absl::StrReplaceAll({{"cpu:0-3 [2,2]", "cpu:0-1023 [32,32]"}}, &o.program);
  const absl::Duration start = testing::ProcessCpuNow();
  absl::StatusOr<std::string> out = RunPlan(o, Eng());
  // A blow-up guard (it was minutes), in CPU time: no test asserts
  // wall-clock speed.
  EXPECT_LT(testing::ProcessCpuNow() - start, absl::Seconds(20));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(ErrorOf(out), AllOf(HasSubstr("planner steps, over the budget"),
                                  HasSubstr("--work_budget"), HasSubstr("cpu:0-1023 [32,32]")));
  // A small budget refuses even the docs' program; a bad one is a flag error.
  o = Mlp("text");
  o.work_budget = "1000";
  EXPECT_THAT(RunPlan(o, Eng()), StatusIs(absl::StatusCode::kResourceExhausted));
  o.work_budget = "0";
  EXPECT_THAT(ErrorOf(RunPlan(o, Eng())), HasSubstr("--work_budget='0'"));
  o.work_budget = "100000000000";
  EXPECT_TRUE(RunPlan(o, Eng()).ok());
}

}  // namespace oneflow_sbp::cli
