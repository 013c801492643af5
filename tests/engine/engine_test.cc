// The Engine facade: cost policies by name, exact cache keys (OpDef
// identity, calibration fingerprints), stats and bounded caches.
#include "engine/engine.h"

#include <memory>
#include <string>

#include "boxing/planned_cost_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/infer_cache.h"
#include "oneflow_sbp/inference/infer_key.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/inference/planned_selection.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status SameShape(ShapeContext& ctx) {
  ctx.set_output("y", 0, ctx.input("x"));
  return absl::OkStatus();
}

InferRequest RequestFor(const OpRegistry& registry, const std::string& op,
                        const std::string& placement, const std::string& tensor,
                        const std::string& nd_sbp) {
  InferRequest r;
  r.op = *OpCall::Make(registry.Find(op), {1}, AttrMap());
  r.placement = *Placement::Parse(placement);
  r.inputs = {InferInput(*TensorDesc::Parse(tensor), *NdSbp::Parse(nd_sbp))};
  return r;
}

// Two registries define "twin" differently; one cache serves both. Before
// OpCall keys included the OpDef's identity, the second call was answered
// with the first op's signature.
TEST(EngineKeys, SameOpNameInTwoRegistriesNeverSharesAnEntry) {
  OpRegistry splits;
  OpRegistry partial;
  ASSERT_TRUE(splits
                  .Register(OpDefBuilder("twin").Input("x").Output("y").SetShapeFn(SameShape)
                                .SetGetSbpFn([](SbpContext& ctx) { return SplitForEachAxis(ctx); }))
                  .ok());
  ASSERT_TRUE(partial
                  .Register(OpDefBuilder("twin").Input("x").Output("y").SetShapeFn(SameShape)
                                .SetGetSbpFn([](SbpContext& ctx) {
                                  ctx.NewBuilder().PartialSum(ctx.inputs()).PartialSum(ctx.outputs()).Build();
                                  return absl::OkStatus();
                                }))
                  .ok());
  const InferRequest a = RequestFor(splits, "twin", "cpu:0-1", "f32[8,4]", "S(0)");
  const InferRequest b = RequestFor(partial, "twin", "cpu:0-1", "f32[8,4]", "S(0)");
  EXPECT_FALSE(InferKeyEquals(a, b));
  EXPECT_FALSE(*a.op == *b.op);

  InferCache cache;
  const auto policy = OneFlowSelectionFor(a.placement);
  absl::StatusOr<std::shared_ptr<const InferResult>> ra = cache.GetOrInfer(a, policy);
  absl::StatusOr<std::shared_ptr<const InferResult>> rb = cache.GetOrInfer(b, policy);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(SignatureToString(*a.op, (*ra)->signature), "x_0:S(0) -> y_0:S(0)");
  // "twin" from `partial` has no S(0) candidate: the input is gathered.
  EXPECT_EQ(SignatureToString(*b.op, (*rb)->signature), "x_0:B -> y_0:B");
  EXPECT_EQ(cache.stats().size, 2u);
}

// Two planned policies whose calibrations differ in the 7th significant
// digit must not share entries (the old 6-digit fingerprint merged them).
TEST(EngineKeys, CalibrationsThatDifferSlightlyAreDifferentKeys) {
  boxing::Calibration fast = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
  boxing::Calibration faster = fast;
  faster.axis(0).bandwidth_bytes_per_s = 25.00001e9;
  auto policy = [](boxing::Calibration c) -> std::shared_ptr<const SelectionPolicy> {
    auto planner = std::make_shared<boxing::BoxingPlanner>(std::move(c));
    return std::make_shared<const PlannedSelection>(
        std::make_shared<const boxing::PlannedCostModel>(planner));
  };
  const auto p1 = policy(fast);
  const auto p2 = policy(faster);
  const auto p1_again = policy(fast);
  EXPECT_NE(p1->fingerprint(), p2->fingerprint());
  EXPECT_EQ(p1->fingerprint(), p1_again->fingerprint());

  InferRequest r = RequestFor(Registry(), "relu", "cpu:0-3 [2,2]", "f32[8,8]", "(P,P)");
  r.cost.policy = PolicyName::Planned();
  InferCache cache;
  ASSERT_TRUE(cache.GetOrInfer(r, p1).ok());
  ASSERT_TRUE(cache.GetOrInfer(r, p2).ok());
  EXPECT_EQ(cache.stats().size, 2u);
  // An equal calibration in another policy object shares the entry.
  ASSERT_TRUE(cache.GetOrInfer(r, p1_again).ok());
  EXPECT_EQ(cache.stats().size, 2u);
  EXPECT_EQ(cache.stats().hits, 1u);
}

// Picks the last survivor: a policy only an application would register.
class LastCandidate : public SelectionPolicy {
 public:
  LastCandidate() : SelectionPolicy("test/last") {}
  const StageRules& rules() const override { return OneFlowNd()->rules(); }
  absl::Status EmptyAfterFiltering(const SelectionInput& in) const override {
    return EmptySignatureListError(in);
  }
  absl::StatusOr<int> Choose(const SelectionInput& in, ExplainRecorder&) const override {
    return static_cast<int>(in.survivors.size()) - 1;
  }
};

// Engine::Create() serves the built-in catalog, and an unknown op is a
// status from MakeCall and from OpCall::Make (a null definition), never an
// abort.
TEST(Engine, DefaultEngineServesTheBuiltInCatalog) {
  absl::StatusOr<std::unique_ptr<engine::Engine>> engine = engine::Engine::Create();
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_GE((*engine)->registry().OpNames().size(), 100u);
  absl::StatusOr<std::shared_ptr<const OpCall>> call = (*engine)->MakeCall("matmul", 2);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ((*call)->ToString(), "matmul(a_0, b_0 -> out_0; alpha=1 transpose_a=false transpose_b=false)");

  absl::StatusOr<std::shared_ptr<const OpCall>> typo = (*engine)->MakeCall("matmull", 2);
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(std::string(typo.status().message()), HasSubstr("did you mean matmul?"));

  absl::StatusOr<std::shared_ptr<const OpCall>> too_many = (*engine)->MakeCall("relu", 3);
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many, StatusIs(absl::StatusCode::kInvalidArgument));

  absl::StatusOr<std::shared_ptr<const OpCall>> null_def =
      OpCall::Make((*engine)->registry().Find("no_such_op"), {1}, AttrMap());
  ASSERT_FALSE(null_def.ok());
  EXPECT_THAT(null_def, StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Engine, CostPoliciesByName) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  EXPECT_THAT(engine->CostPolicyNames(), ElementsAre("oneflow", "planned"));
  InferRequest r = RequestFor(Registry(), "relu", "cpu:0-3 [2,2]", "f32[8,8]", "(S(0),B)");
  ASSERT_TRUE(engine->Infer(r).ok());

  r.cost.policy = PolicyName::Of("last");
  absl::StatusOr<std::shared_ptr<const InferResult>> unknown = engine->Infer(r);
  EXPECT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("unknown cost policy 'last': expected oneflow or planned"));

  auto last = std::make_shared<const LastCandidate>();
  ASSERT_TRUE(engine->RegisterCostPolicy("last", last, last).ok());
  EXPECT_THAT(engine->RegisterCostPolicy("last", last, last),
            StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(engine->RegisterCostPolicy("", last, last),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(engine->RegisterCostPolicy("null", nullptr, last),
            StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<std::shared_ptr<const InferResult>> chosen = engine->Infer(r);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  // relu's product on [2,2] ends with the all-B candidate.
  EXPECT_EQ(SignatureToString(*r.op, (*chosen)->signature), "x_0:(B,B) -> y_0:(B,B)");
}

// Prepared keys (infer_key.h) through the engine: the answers and counts
// of their requests, per policy name, per engine, and after a clear.
TEST(Engine, PreparedKeysAnswerAsTheirRequests) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const InferRequest r = RequestFor(Registry(), "relu", "cpu:0-3 [2,2]", "f32[8,8]", "(S(0),B)");
  const InferKey key(r);
  absl::StatusOr<const InferResult*> cold = engine->InferBorrowed(key);
  ASSERT_TRUE(cold.ok()) << cold.status();
  absl::StatusOr<const InferResult*> warm = engine->InferBorrowed(key);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(*warm, *cold);
  absl::StatusOr<std::shared_ptr<const InferResult>> shared = engine->Infer(r);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->get(), *cold);
  absl::StatusOr<std::shared_ptr<const InferResult>> by_key = engine->Infer(key);
  ASSERT_TRUE(by_key.ok()) << by_key.status();
  EXPECT_EQ(by_key->get(), *cold);
  EXPECT_EQ(engine->infer_cache_stats().misses, 1u);
  EXPECT_EQ(engine->infer_cache_stats().hits, 3u);

  // Another engine has its own cache: the slot this thread filled for the
  // key answers nothing there.
  std::unique_ptr<engine::Engine> other = *engine::Engine::Create();
  ASSERT_TRUE(other->InferBorrowed(key).ok());
  EXPECT_EQ(other->infer_cache_stats().misses, 1u);
  ASSERT_TRUE(engine->InferBorrowed(key).ok());
  EXPECT_EQ(engine->infer_cache_stats().hits, 4u);

  // A key naming a policy the engine lacks is the request's error; once
  // registered, the key gets that policy's answer, not "oneflow"'s.
  InferRequest by_last = r;
  by_last.cost.policy = PolicyName::Of("last");
  const InferKey last_key(by_last);
  absl::StatusOr<const InferResult*> unknown = engine->InferBorrowed(last_key);
  EXPECT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unknown cost policy 'last'"));
  auto last = std::make_shared<const LastCandidate>();
  ASSERT_TRUE(engine->RegisterCostPolicy("last", last, last).ok());
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<const InferResult*> chosen = engine->InferBorrowed(last_key);
    ASSERT_TRUE(chosen.ok()) << chosen.status();
    EXPECT_EQ(SignatureToString(*r.op, (*chosen)->signature), "x_0:(B,B) -> y_0:(B,B)");
    absl::StatusOr<const InferResult*> oneflow = engine->InferBorrowed(key);
    ASSERT_TRUE(oneflow.ok()) << oneflow.status();
    EXPECT_EQ(SignatureToString(*r.op, (*oneflow)->signature), "x_0:(S(0),B) -> y_0:(S(0),B)");
  }

  // After a clear the key is a miss again, inferred afresh.
  engine->ClearCaches();
  const uint64_t misses = engine->infer_cache_stats().misses;
  absl::StatusOr<const InferResult*> again = engine->InferBorrowed(key);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(engine->infer_cache_stats().misses, misses + 1);
  EXPECT_EQ(SignatureToString(*r.op, (*again)->signature), "x_0:(S(0),B) -> y_0:(S(0),B)");
}

TEST(Engine, CountsHitsInBothCachesAndClears) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const InferRequest r = RequestFor(Registry(), "relu", "cpu:0-3 [2,2]", "f32[8,8]", "(P,P)");
  ASSERT_TRUE(engine->Infer(r).ok());
  ASSERT_TRUE(engine->Infer(r).ok());
  EXPECT_EQ(engine->infer_cache_stats().hits, 1u);
  EXPECT_EQ(engine->infer_cache_stats().misses, 1u);
  const boxing::PlanRequest plan{Shape{8, 8}, DataType::kFloat32, r.placement,
                                 *NdSbp::Parse("(P,P)"), r.placement, *NdSbp::Parse("(B,B)")};
  ASSERT_TRUE(engine->Plan(plan).ok());
  ASSERT_TRUE(engine->Plan(plan).ok());
  EXPECT_EQ(engine->plan_cache_stats().hits, 1u);
  engine->ClearCaches();
  EXPECT_EQ(engine->infer_cache_stats().size, 0u);
  EXPECT_EQ(engine->plan_cache_stats().size, 0u);
}

TEST(Engine, PlannedPolicyUsesTheEnginesCalibration) {
  // relu of a (P,P) input must reduce over both mesh axes whatever it
  // chooses; slow links (axis 1, and p2p, the planner's way around it) in
  // the engine's calibration make that dearer.
  InferRequest r = RequestFor(Registry(), "relu", "cpu:0-3 [2,2]", "f32[64,64]", "(P,P)");
  r.cost.policy = PolicyName::Planned();
  r.explain = true;
  auto chosen_cost = [&](double axis1_bandwidth) {
    engine::Engine::Options options;
    options.calibration.axis(1).bandwidth_bytes_per_s = axis1_bandwidth;
    options.calibration.p2p().bandwidth_bytes_per_s = axis1_bandwidth;
    std::unique_ptr<engine::Engine> engine = *engine::Engine::Create(std::move(options));
    absl::StatusOr<std::shared_ptr<const InferResult>> result = engine->Infer(r);
    EXPECT_TRUE(result.ok()) << result.status();
    EXPECT_GT(engine->plan_cache_stats().misses, 0u);
    for (const CandidateRecord& c : (*result)->candidates) {
      if (c.status == CandidateStatus::kChosen) return c.copy_cost.value();
    }
    return -1.0;
  };
  const double fast = chosen_cost(25e9);
  const double slow = chosen_cost(1e6);
  EXPECT_GT(fast, 0);
  EXPECT_GT(slow, 100 * fast);
}

TEST(Engine, BadOptionsAreErrorsNotAborts) {
  engine::Engine::Options shards;
  shards.infer_cache.shards = 3;
  EXPECT_THAT(engine::Engine::Create(shards), StatusIs(absl::StatusCode::kInvalidArgument));
  engine::Engine::Options plans;
  plans.plan_cache_capacity = 0;
  EXPECT_THAT(engine::Engine::Create(plans), StatusIs(absl::StatusCode::kInvalidArgument));
  engine::Engine::Options latency;
  latency.calibration.p2p().latency_s = -1;
  EXPECT_THAT(std::string(engine::Engine::Create(latency).status().message()), HasSubstr("p2p links"));
  engine::Engine::Options axes;
  axes.calibration = boxing::Calibration::Defaults(2);
  EXPECT_THAT(engine::Engine::Create(axes), StatusIs(absl::StatusCode::kInvalidArgument));
  engine::Engine::Options compute;
  compute.calibration.set_compute_flops_per_s(0);
  EXPECT_THAT(std::string(engine::Engine::Create(compute).status().message()), HasSubstr("compute rate"));
  InferCache::Options zero;
  zero.capacity = 0;
  EXPECT_THAT(InferCache::Create(zero), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace oneflow_sbp::testing
