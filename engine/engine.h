// Engine: the one seam the CLI, tests, the eager interpreter and bindings
// stand on. It owns (or borrows) an op registry, an inference cache, a
// boxing planner with a bounded plan cache, and a registry of cost policies
// by name, and answers inference and boxing requests through them.
//
// Example (docs/examples/engine_example.cc, built and run by
// //docs/examples:engine_example):
//   absl::StatusOr<std::unique_ptr<engine::Engine>> engine = engine::Engine::Create();  // the built-in ops
//   if (!engine.ok()) return engine.status();
//   InferRequest req;
//   OFS_ASSIGN_OR_RETURN(req.op, (*engine)->MakeCall("matmul", /*num_inputs=*/2));
//   OFS_ASSIGN_OR_RETURN(req.placement, Placement::Parse("cpu:0-3 [2,2]"));
//   OFS_ASSIGN_OR_RETURN(const TensorDesc a, TensorDesc::Parse("f32[64,32]"));
//   OFS_ASSIGN_OR_RETURN(const TensorDesc b, TensorDesc::Parse("f32[32,48]"));
//   OFS_ASSIGN_OR_RETURN(const NdSbp row, NdSbp::Parse("(S(0), B)"));
//   OFS_ASSIGN_OR_RETURN(const NdSbp col, NdSbp::Parse("[Replicate(), Shard(1)]"));
//   req.inputs = {InferInput(a, row), InferInput(b, col)};
//   req.cost.policy = PolicyName::Planned();  // or leave the default "oneflow"
//   OFS_ASSIGN_OR_RETURN(std::shared_ptr<const InferResult> result, (*engine)->Infer(req));
//   std::cout << SignatureToString(*req.op, result->signature) << "\n";
//   OFS_ASSIGN_OR_RETURN(std::shared_ptr<const boxing::BoxingPlan> plan,
//                        (*engine)->Plan({a.shape, a.dtype, req.placement, row,
//                                         req.placement, *NdSbp::Parse("(B, S(0))")}));
//   std::cout << plan->Summary() << "\n";
//
// Cost policies: a request names one (CostOptions::policy) and the engine
// supplies its selection policy and model; no caller wires a model into a
// request. Built in: "oneflow" (OneFlow1DSelection on 1-D placements,
// OneFlowNdSelection on N-D ones) and "planned" (PlannedSelection priced by
// this engine's planner and calibration). RegisterCostPolicy adds more.
//
// Thread-safe: Infer and Plan may be called concurrently; policy lookups
// take no lock. Results are deterministic whatever the thread count.
#ifndef ENGINE_ENGINE_H_
#define ENGINE_ENGINE_H_

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "boxing/planner.h"
#include "oneflow_sbp/inference/infer_cache.h"
#include "oneflow_sbp/inference/infer_key.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/inference/selection_policy.h"

namespace oneflow_sbp::engine {

class Engine {
 public:
  using PolicyPtr = std::shared_ptr<const SelectionPolicy>;

  struct Options {
    // The op registry; nullptr means the built-in catalog
    // (ops::BuiltinOpRegistry(): OpRegistry::Global() with every built-in
    // op, and whatever the program registered there). See Borrow.
    std::shared_ptr<const OpRegistry> registry;
    InferCache::Options infer_cache;
    size_t plan_cache_capacity = boxing::BoxingPlanner::kDefaultCapacity;
    // The plan cache's memory limit (boxing::PlanFootprint).
    size_t plan_cache_max_bytes = boxing::BoxingPlanner::kDefaultMaxBytes;
    boxing::Calibration calibration = boxing::Calibration::Defaults(NdSbp::kMaxAxes);

    // A registry the caller keeps alive for the engine's lifetime.
    static std::shared_ptr<const OpRegistry> Borrow(const OpRegistry& registry);
  };

  // At most this many cost policies (the built-in two included).
  static constexpr int kMaxCostPolicies = 16;

  // kInvalidArgument for bad options (cache shards or capacities, a
  // calibration with fewer than NdSbp::kMaxAxes axes or a non-positive
  // bandwidth or negative latency).
  static absl::StatusOr<std::unique_ptr<Engine>> Create(Options options);
  // Default options: the built-in catalog, default caches and calibration.
  static absl::StatusOr<std::unique_ptr<Engine>> Create();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const OpRegistry& registry() const { return *registry_; }

  // A call of the registered op `op` with `num_inputs` input blobs in
  // declared order (OpCall::DeduceInputCounts) and `attrs` (defaults for
  // the rest). kNotFound for an unknown op, naming the closest known name;
  // kInvalidArgument for counts or attributes the op does not take.
  absl::StatusOr<std::shared_ptr<const OpCall>> MakeCall(absl::string_view op, int num_inputs,
                                                         const AttrMap& attrs = AttrMap()) const;
  const boxing::Calibration& calibration() const { return planner_->calibration(); }
  // The planner behind Plan and the `planned` policy, for the executor.
  const std::shared_ptr<boxing::BoxingPlanner>& planner() const { return planner_; }

  // The signature of one op call, from the cache or inferred under the
  // policy the request names. kInvalidArgument for an unknown policy name;
  // otherwise the errors of InferSignature (signature_inference.h).
  absl::StatusOr<std::shared_ptr<const InferResult>> Infer(const InferRequest& request);
  // Infer's answer, borrowed instead of shared: the eager hot path, with no
  // reference-count traffic on a hit. The result stays valid, whatever
  // other threads evict or clear, until this thread's next Infer or
  // InferBorrowed on any Engine (InferCache::GetOrInferBorrowed); use Infer
  // to keep a result longer or to hand it to another thread.
  absl::StatusOr<const InferResult*> InferBorrowed(const InferRequest& request);
  // Both for a request prepared once (infer_key.h): the same answers, and a
  // repeated hit on one thread compares the key's id instead of the request.
  absl::StatusOr<std::shared_ptr<const InferResult>> Infer(const InferKey& key);
  absl::StatusOr<const InferResult*> InferBorrowed(const InferKey& key) {
    // Inline, so a repeated key costs one front slot. This engine's cache
    // picks a request's policy by its name and placement alone, from an
    // append-only registry, so a slot holding the key holds it under the
    // policy FindPolicy would find (FrontKeyHit's null policy).
    if (const InferResult* hit = infer_cache_->FrontKeyHit(key, nullptr)) return hit;
    return InferBorrowedMiss(key);
  }

  // The cheapest exact boxing plan (planner.h), cached.
  absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> Plan(
      const boxing::PlanRequest& request);

  // Adds a cost policy: `one_d` serves 1-axis placements, `nd` the others
  // (the same object may serve both). kAlreadyExists for a taken name,
  // kResourceExhausted beyond kMaxCostPolicies, kInvalidArgument for an
  // empty name or a null policy.
  absl::Status RegisterCostPolicy(absl::string_view name, PolicyPtr one_d, PolicyPtr nd);
  // The selection policy `name` uses on `placement`; kInvalidArgument
  // listing the known names if there is none.
  absl::StatusOr<PolicyPtr> SelectionPolicyFor(PolicyName name, const Placement& placement) const;
  // Registered names, in registration order ("oneflow", "planned", ...).
  std::vector<std::string> CostPolicyNames() const;

  InferCache::Stats infer_cache_stats() const { return infer_cache_->stats(); }
  boxing::PlannerStats plan_cache_stats() const { return planner_->stats(); }
  void ClearCaches();

 private:
  struct PolicyEntry {
    PolicyName name;
    PolicyPtr one_d;
    PolicyPtr nd;
  };
  Engine(std::shared_ptr<const OpRegistry> registry, std::unique_ptr<InferCache> cache,
         std::shared_ptr<boxing::BoxingPlanner> planner);
  // nullptr if `name` is not registered.
  const PolicyPtr* FindPolicy(PolicyName name, const Placement& placement) const {
    const int n = num_policies_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      if (policies_[i].name != name) continue;
      return placement.num_axes() == 1 ? &policies_[i].one_d : &policies_[i].nd;
    }
    return nullptr;
  }
  absl::StatusOr<const InferResult*> InferBorrowedMiss(const InferKey& key);
  // `get` (GetOrInfer or GetOrInferBorrowed, of a request or a key) under
  // the request's policy.
  template <typename Result, typename Query>
  absl::StatusOr<Result> InferThroughCache(
      const Query& query, const InferRequest& request,
      absl::StatusOr<Result> (InferCache::*get)(const Query&, const PolicyPtr&));

  std::shared_ptr<const OpRegistry> registry_;
  std::unique_ptr<InferCache> infer_cache_;
  std::shared_ptr<boxing::BoxingPlanner> planner_;
  // Append-only: an entry is complete before num_policies_ publishes it,
  // so readers scan without a lock.
  absl::Mutex register_mu_;
  std::array<PolicyEntry, kMaxCostPolicies> policies_;
  std::atomic<int> num_policies_{0};
};

}  // namespace oneflow_sbp::engine
#endif  // ENGINE_ENGINE_H_
