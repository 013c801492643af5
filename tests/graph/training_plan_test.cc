// Training-step planning: the expansion of a forward program into forward,
// backward and update ops (eager/expand_training_step.h), the per-rank memory
// split and the strategy classifier (graph/training_step_info.h), and plans of
// whole steps that never lose to the eager greedy choice.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "eager/expand_training_step.h"
#include "engine/engine.h"
#include "gmock/gmock.h"
#include "graph/greedy.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "graph/training_step_info.h"
#include "gtest/gtest.h"
#include "io/program_proto.h"
#include "tests/support/status_matchers.h"
#include "tests/support/thread_cpu_time.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::graph {
namespace {

using ::testing::ElementsAre;

// One engine for the file, with a boxing plan cache that holds every
// plan of a 24-layer GPT step on [2,4] (~6,000; the default holds 4,096),
// so the programs on one mesh share their prices as one `sbp` process
// would.
engine::Engine& Eng() {
  static engine::Engine* engine = [] {
    engine::Engine::Options o;
    o.plan_cache_capacity = 1 << 16;
    return engine::Engine::Create(std::move(o))->release();
  }();
  return *engine;
}

Placement P(const char* text) { return *Placement::Parse(text); }

Program Gpt(const char* placement, int layers) {
  GptConfig c;
  c.layers = layers;
  absl::StatusOr<Program> p = GptProgram(Eng().registry(), P(placement), c);
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

// The LLaMA block `sbp demo --record` wrote on a mesh (tests/testdata:
// "22", "24", "8"; the last at --batch=8).
Program Llama(const std::string& mesh) {
  std::stringstream text;
  text << std::ifstream("tests/testdata/demo_mesh" + mesh + ".json").rdbuf();
  absl::StatusOr<Program> p = io::ProgramFromJson(text.str(), Eng().registry());
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

TrainingStepInfo Expand(const Program& forward, eager::TrainingStepOptions options = {}) {
  absl::StatusOr<TrainingStepInfo> step = eager::ExpandTrainingStep(Eng(), forward, options);
  EXPECT_TRUE(step.ok()) << step.status();
  return *std::move(step);
}

int CountKind(const TrainingStepInfo& step, StepTensorKind kind) {
  int n = 0;
  for (StepTensorKind k : step.kinds) n += k == kind;
  return n;
}

TEST(TrainingStep, GptLayerHasForwardBackwardAndOneAdamUpdatePerWeight) {
  const Program forward = Gpt("cpu:0-3 [2,2]", 1);
  const TrainingStepInfo step = Expand(forward);
  const Program& p = step.program;
  // The forward ops in order, then the loss seed.
  ASSERT_EQ(step.num_forward_ops, static_cast<int>(forward.ops().size()) + 1);
  for (size_t i = 0; i < forward.ops().size(); ++i) {
    EXPECT_EQ(p.ops()[i].label, forward.ops()[i].label);
  }
  EXPECT_EQ(p.ops()[forward.ops().size()].call->type_name(), "fill");
  // Backward of a layer: at least one op per differentiable forward op.
  EXPECT_GE(step.num_backward_ops, static_cast<int>(forward.ops().size()));
  ASSERT_EQ(step.parameters.size(), forward.FreeTensors().size());
  EXPECT_EQ(static_cast<int>(p.ops().size()),
            step.num_forward_ops + step.num_backward_ops + static_cast<int>(step.parameters.size()));
  for (const TrainingStepInfo::Parameter& w : step.parameters) {
    const ProgramTensor& t = p.tensors()[w.tensor];
    ASSERT_GE(w.update_op, step.num_forward_ops + step.num_backward_ops) << t.name;
    const ProgramOp& update = p.ops()[w.update_op];
    EXPECT_EQ(update.call->type_name(), "adam_update");
    EXPECT_EQ(update.label, "update " + t.name);
    ASSERT_EQ(w.state.size(), 2u);
    // model, model_diff, m, v: the gradient a backward op made, the state
    // free beside the parameter.
    EXPECT_THAT(update.inputs, ElementsAre(w.tensor, w.gradient, w.state[0], w.state[1]));
    EXPECT_EQ(t.role, TensorRole::kFree);
    const ProgramTensor& g = p.tensors()[w.gradient];
    EXPECT_EQ(g.role, TensorRole::kActivation);
    EXPECT_GE(g.producer, step.num_forward_ops);
    EXPECT_LT(g.producer, step.num_forward_ops + step.num_backward_ops);
    EXPECT_EQ(g.desc, t.desc);
    EXPECT_EQ(p.tensors()[w.state[0]].name, t.name + ".adam_m");
    EXPECT_EQ(p.tensors()[w.state[1]].role, TensorRole::kFree);
  }
  EXPECT_EQ(CountKind(step, StepTensorKind::kParameter), 8);
  EXPECT_EQ(CountKind(step, StepTensorKind::kGradient), 8);
  EXPECT_EQ(CountKind(step, StepTensorKind::kOptimizerState), 16);
  EXPECT_EQ(CountKind(step, StepTensorKind::kInput), 1);
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0].tensor, step.loss);
  EXPECT_EQ(p.tensors()[step.loss].name, forward.tensors()[forward.outputs()[0].tensor].name);
}

TEST(TrainingStep, SgdHasNoState) {
  eager::TrainingStepOptions o;
  o.optimizer = eager::Optimizer::kSgd;
  const TrainingStepInfo step = Expand(Gpt("cpu:0-3 [2,2]", 1), o);
  EXPECT_EQ(CountKind(step, StepTensorKind::kOptimizerState), 0);
  for (const TrainingStepInfo::Parameter& w : step.parameters) {
    EXPECT_EQ(step.program.ops()[w.update_op].call->type_name(), "sgd_update");
    EXPECT_THAT(step.program.ops()[w.update_op].inputs, ElementsAre(w.tensor, w.gradient));
  }
}

// The backward ops are the rules' own: the LLaMA block's backward has the
// gradient ops of its forward ops (the rules' names), and every forward op
// output a backward rule reads (softmax, rms_norm's inv_rms, ...) is read
// by the backward, not copied into a new input.
TEST(TrainingStep, LlamaBackwardUsesTheRulesOps) {
  const Program forward = Llama("22");
  const TrainingStepInfo step = Expand(forward);
  absl::flat_hash_map<std::string, int> types;
  for (int i = step.num_forward_ops; i < step.num_forward_ops + step.num_backward_ops; ++i) {
    ++types[std::string(step.program.ops()[i].call->type_name())];
  }
  EXPECT_GT(types["rms_norm_grad"], 0);
  EXPECT_GT(types["embedding_grad"], 0);
  EXPECT_GT(types["matmul"], 0);
  // No tensor of the step is a marked input that the forward did not mark.
  for (size_t t = 0; t < step.program.tensors().size(); ++t) {
    if (step.program.tensors()[t].role != TensorRole::kFixed) continue;
    EXPECT_GE(forward.FindTensor(step.program.tensors()[t].name), 0)
        << step.program.tensors()[t].name;
  }
  EXPECT_EQ(step.parameters.size(), forward.FreeTensors().size());
}

// A weight marked in a layout and flagged "parameter" is trained in that
// layout: it gets a gradient and an update, and Adam's state is marked
// beside it (so the greedy baseline, which keeps free tensors all-B, still
// finds a signature).
TEST(TrainingStep, MarkedParameterKeepsItsLayout) {
  ProgramBuilder b(Eng().registry(), P("cpu:0-1"));
  ASSERT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[4,8]"), *NdSbp::Parse("(B)")).ok());
  ASSERT_TRUE(
      b.AddInput("w", *TensorDesc::Parse("f32[8,6]"), *NdSbp::Parse("(S(1))"), /*parameter=*/true)
          .ok());
  ASSERT_TRUE(b.AddOp("matmul", {"x", "w"}, {"y"}, AttrMap()).ok());
  absl::StatusOr<Program> forward = std::move(b).Build();
  ASSERT_TRUE(forward.ok()) << forward.status();
  const TrainingStepInfo step = Expand(*forward);
  ASSERT_EQ(step.parameters.size(), 1u);
  const TrainingStepInfo::Parameter& w = step.parameters[0];
  EXPECT_EQ(step.kinds[w.tensor], StepTensorKind::kParameter);
  EXPECT_EQ(step.program.tensors()[w.tensor].role, TensorRole::kFixed);
  EXPECT_TRUE(step.program.tensors()[w.tensor].parameter);
  ASSERT_GE(w.update_op, 0);
  ASSERT_EQ(w.state.size(), 2u);
  for (int s : w.state) {
    EXPECT_EQ(step.program.tensors()[s].role, TensorRole::kFixed);
    EXPECT_EQ(step.program.tensors()[s].nd_sbp, *NdSbp::Parse("(S(1))"));
    EXPECT_EQ(step.kinds[s], StepTensorKind::kOptimizerState);
  }
  EXPECT_FALSE(step.program.tensors()[step.program.FindTensor("x")].parameter);
  absl::StatusOr<ProgramPlan> plan = PlanProgram(step.program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->chosen.op_signatures[w.update_op][0], *NdSbp::Parse("(S(1))"));
  EXPECT_EQ(ClassifyStrategy(step, plan->chosen).name, "Megatron");
}

TEST(TrainingStep, Errors) {
  // Two outputs: which is the loss?
  ProgramBuilder b(Eng().registry(), P("cpu:0-1"));
  ASSERT_TRUE(b.AddInput("x", *TensorDesc::Parse("f32[4,4]"), *NdSbp::Parse("(S(0))")).ok());
  ASSERT_TRUE(b.AddParameter("w", *TensorDesc::Parse("f32[4,4]")).ok());
  ASSERT_TRUE(b.AddOp("matmul", {"x", "w"}, {"y"}, AttrMap()).ok());
  ASSERT_TRUE(b.AddOp("relu", {"x"}, {"z"}, AttrMap()).ok());
  absl::StatusOr<Program> two = std::move(b).Build();
  ASSERT_TRUE(two.ok()) << two.status();
  absl::StatusOr<TrainingStepInfo> r = eager::ExpandTrainingStep(Eng(), *two, {});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("exactly one output"));

  ProgramBuilder c(Eng().registry(), P("cpu:0-1"));
  ASSERT_TRUE(c.AddInput("x", *TensorDesc::Parse("f32[4,4]"), *NdSbp::Parse("(S(0))")).ok());
  ASSERT_TRUE(c.AddOp("relu", {"x"}, {"z"}, AttrMap()).ok());
  absl::StatusOr<Program> constant = std::move(c).Build();
  ASSERT_TRUE(constant.ok());
  r = eager::ExpandTrainingStep(Eng(), *constant, {});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("'z' depends on no parameter"));
}

// The memory split adds up to the cost model's peak, and Adam's state is
// twice the parameters in whatever layout the plan chose.
TEST(TrainingPlan, MemorySplitAddsUpToThePeak) {
  const TrainingStepInfo step = Expand(Gpt("cpu:0-7 [2,4]", 2));
  absl::StatusOr<ProgramPlan> plan = PlanProgram(step.program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const Assignment* a : {&plan->chosen, &plan->greedy}) {
    const StepMemory m = StepMemoryPerRank(step.program, *a, step.kinds);
    const ProgramCosts& costs = a == &plan->chosen ? plan->costs : plan->greedy_costs;
    EXPECT_EQ(m.total(), costs.peak_memory_bytes);
    EXPECT_EQ(m.total_copies(), costs.copy_memory_bytes);
    // Adam's state is stored like the parameters (their gathered copies
    // aside); optimizer state is never boxed (the update's inputs are
    // mutable).
    EXPECT_EQ(m.copies_of(StepTensorKind::kOptimizerState), 0);
    EXPECT_EQ(m.of(StepTensorKind::kOptimizerState),
              2 * (m.of(StepTensorKind::kParameter) - m.copies_of(StepTensorKind::kParameter)));
    EXPECT_GT(m.of(StepTensorKind::kActivation), 0);
  }
  // Greedy keeps every parameter replicated: each rank holds all of them,
  // and reads them as they are (no copy); each gradient leaves backward P
  // and is all-reduced into a full copy for its update.
  int64_t all = 0;
  for (const TrainingStepInfo::Parameter& w : step.parameters) {
    all += step.program.tensors()[w.tensor].desc.shape.elem_cnt() * 4;
  }
  const StepMemory g = StepMemoryPerRank(step.program, plan->greedy, step.kinds);
  EXPECT_EQ(g.of(StepTensorKind::kParameter), all);
  EXPECT_EQ(g.copies_of(StepTensorKind::kParameter), 0);
  EXPECT_EQ(g.copies_of(StepTensorKind::kGradient), all);
  EXPECT_EQ(g.of(StepTensorKind::kGradient), 2 * all);
}

// Forward-only planning of the same program prices no gradient traffic:
// the training step moves strictly more bytes under the greedy choice
// (every replicated weight's gradient is all-reduced).
TEST(TrainingPlan, GreedyStepPaysTheGradientAllReduces) {
  const Program forward = Gpt("cpu:0-3 [2,2]", 1);
  const TrainingStepInfo step = Expand(forward);
  absl::StatusOr<ProgramPlan> fwd = PlanProgram(forward, Eng(), {});
  absl::StatusOr<ProgramPlan> train = PlanProgram(step.program, Eng(), {});
  ASSERT_TRUE(fwd.ok() && train.ok());
  int reductions = 0;
  for (const BoxingEdge& e : train->greedy_costs.edges) {
    if (e.consumer < step.num_forward_ops + step.num_backward_ops || e.from == e.to) continue;
    EXPECT_EQ(e.blob, 1);  // model_diff
    EXPECT_TRUE(e.from[0].is_partial_sum()) << e.from.ToString();
    EXPECT_EQ(e.to, *NdSbp::Parse("(B, B)"));
    ++reductions;
  }
  EXPECT_EQ(reductions, 8);
  EXPECT_GT(train->greedy_costs.comm_bytes, fwd->greedy_costs.comm_bytes);
}

// Never worse than greedy without a cap, on every (program, mesh) of
// docs/PLANNING.md's training table: the demo's LLaMA block and GPT
// stacks of 4, 8 and 24 layers on [2,2], [2,4] and [8].
struct NeverWorseCase {
  const char* name;
  // The LLaMA block's recording ("22": demo_mesh22.json) or the GPT's
  // placement.
  const char* mesh;
  const char* placement;
  int gpt_layers;  // 0: the LLaMA block
};

class NeverWorse : public ::testing::TestWithParam<NeverWorseCase> {};

TEST_P(NeverWorse, PlanIsNoSlowerThanGreedy) {
  const NeverWorseCase& c = GetParam();
  // The deep GPTs run the same code as GPT 4 on ten times the ops; under a
  // sanitizer (10-40x slower) they would take minutes, and the plain build
  // runs them.
  if (testing::kSanitizerBuild && c.gpt_layers > 4) {
    GTEST_SKIP() << "GPT " << c.gpt_layers << " layers: plain build only";
  }
  const Program forward = c.gpt_layers == 0 ? Llama(c.mesh) : Gpt(c.placement, c.gpt_layers);
  const TrainingStepInfo step = Expand(forward);
  absl::StatusOr<ProgramPlan> plan = PlanProgram(step.program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_LE(plan->costs.total_time_s, plan->greedy_costs.total_time_s);
  EXPECT_TRUE(std::isfinite(plan->costs.total_time_s));
  // The greedy baseline is the eager one under the same model.
  absl::StatusOr<Assignment> greedy = GreedyAssignment(step.program, Eng());
  ASSERT_TRUE(greedy.ok());
  EXPECT_EQ(greedy->op_signatures, plan->greedy.op_signatures);
}

INSTANTIATE_TEST_SUITE_P(
    Programs, NeverWorse,
    ::testing::Values(NeverWorseCase{"llama_2x2", "22", "", 0},
                      NeverWorseCase{"llama_2x4", "24", "", 0},
                      NeverWorseCase{"llama_8", "8", "", 0},
                      NeverWorseCase{"gpt4_2x2", "", "cpu:0-3 [2,2]", 4},
                      NeverWorseCase{"gpt4_2x4", "", "cpu:0-7 [2,4]", 4},
                      NeverWorseCase{"gpt4_8", "", "cpu:0-7", 4},
                      NeverWorseCase{"gpt8_2x2", "", "cpu:0-3 [2,2]", 8},
                      NeverWorseCase{"gpt8_2x4", "", "cpu:0-7 [2,4]", 8},
                      NeverWorseCase{"gpt8_8", "", "cpu:0-7", 8},
                      NeverWorseCase{"gpt24_2x2", "", "cpu:0-3 [2,2]", 24},
                      NeverWorseCase{"gpt24_2x4", "", "cpu:0-7 [2,4]", 24},
                      NeverWorseCase{"gpt24_8", "", "cpu:0-7", 24}),
    [](const ::testing::TestParamInfo<NeverWorseCase>& i) { return std::string(i.param.name); });

// The classifier on hand-made choices for a two-weight MLP step: all-B is
// data parallel; weights stored split and read split by the matmuls is
// Megatron; stored split but read whole is ZeRO.
TEST(ClassifyStrategy, NamesTheKnownStrategies) {
  MlpConfig c;
  c.batch = 8;
  c.hidden = 16;
  c.ffn = 32;
  c.x_nd_sbp = "(S(0))";
  c.y_nd_sbp = "";
  absl::StatusOr<Program> mlp = MlpProgram(Eng().registry(), P("cpu:0-1"), c);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  const TrainingStepInfo step = Expand(*mlp);
  absl::StatusOr<Assignment> greedy = GreedyAssignment(step.program, Eng());
  ASSERT_TRUE(greedy.ok());
  StrategyReport r = ClassifyStrategy(step, *greedy);
  EXPECT_EQ(r.name, "data parallel");
  EXPECT_EQ(r.weights, 2);
  EXPECT_EQ(r.replicated, 2);

  // ZeRO: every weight stored S(0), the forward still reads it B.
  Assignment zero = *greedy;
  const std::vector<int> free = step.program.FreeTensors();
  for (size_t j = 0; j < free.size(); ++j) zero.free_layouts[j] = *NdSbp::Parse("(S(0))");
  r = ClassifyStrategy(step, zero);
  EXPECT_EQ(r.name, "ZeRO");
  EXPECT_EQ(r.gathered, 2);
  EXPECT_THAT(r.per_axis, ElementsAre("ZeRO"));

  // Megatron: the first weight's forward matmul reads it split too.
  Assignment megatron = zero;
  const int w1 = step.parameters[0].tensor;
  const TensorUse use = step.program.tensors()[w1].uses[0];
  megatron.op_signatures[use.op][use.blob] = *NdSbp::Parse("(S(0))");
  r = ClassifyStrategy(step, megatron);
  EXPECT_EQ(r.name, "Megatron + ZeRO");
  EXPECT_EQ(r.tensor_parallel, 1);
  const int w2 = step.parameters[1].tensor;
  const TensorUse use2 = step.program.tensors()[w2].uses[0];
  megatron.op_signatures[use2.op][use2.blob] = *NdSbp::Parse("(S(0))");
  EXPECT_EQ(ClassifyStrategy(step, megatron).name, "Megatron");
}

// What the planner reproduces by itself (docs/PLANNING.md's table): the
// LLaMA block is data parallel on [2,2] and [8] without a cap (the
// forward-only answer, now with its gradient all-reduces priced) and
// shards weights at rest (ZeRO; with some weights also used split, so
// "Megatron + ZeRO", 289.6 us, where the search before the breakpoint
// narrowing found plain ZeRO at 319.6 us) under a cap of 75% of that
// plan's memory on [8]; a GPT stack on [2,4] runs Megatron on mesh axis 1.
TEST(TrainingPlan, ReproducesKnownStrategies) {
  for (const char* mesh : {"22", "8"}) {
    const TrainingStepInfo step = Expand(Llama(mesh));
    absl::StatusOr<ProgramPlan> plan = PlanProgram(step.program, Eng(), {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(ClassifyStrategy(step, plan->chosen).name, "data parallel") << mesh;
    EXPECT_EQ(ClassifyStrategy(step, plan->greedy).name, "data parallel") << mesh;
    if (std::string(mesh) != "8") continue;
    PlanProgramOptions capped;
    capped.memory_cap_bytes = plan->costs.peak_memory_bytes * 3 / 4;
    absl::StatusOr<ProgramPlan> tight = PlanProgram(step.program, Eng(), capped);
    ASSERT_TRUE(tight.ok()) << tight.status();
    EXPECT_LE(tight->costs.peak_memory_bytes, *capped.memory_cap_bytes);
    const StrategyReport r = ClassifyStrategy(step, tight->chosen);
    EXPECT_THAT(r.name, ::testing::HasSubstr("ZeRO"));
    EXPECT_GT(r.gathered, 0);
  }
  const TrainingStepInfo gpt = Expand(Gpt("cpu:0-7 [2,4]", 4));
  absl::StatusOr<ProgramPlan> plan = PlanProgram(gpt.program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const StrategyReport r = ClassifyStrategy(gpt, plan->chosen);
  ASSERT_EQ(r.per_axis.size(), 2u);
  EXPECT_THAT(r.per_axis[1], ::testing::HasSubstr("Megatron"));
  EXPECT_GT(r.tensor_parallel, 0);
}

}  // namespace
}  // namespace oneflow_sbp::graph
