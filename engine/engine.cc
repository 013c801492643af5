#include "engine/engine.h"

#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boxing/planned_cost_model.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/inference/planned_selection.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/builtin_ops.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::engine {
namespace {

absl::Status ValidateCalibration(const boxing::Calibration& c) {
  if (c.num_axes() < NdSbp::kMaxAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "engine: the calibration covers ", c.num_axes(), " mesh axes; it needs ",
        NdSbp::kMaxAxes));
  }
  auto check = [](const boxing::LinkSpec& l, const std::string& what) -> absl::Status {
    if (!(l.bandwidth_bytes_per_s > 0) || !(l.latency_s >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "engine: calibration of ", what, " has bandwidth ", l.bandwidth_bytes_per_s,
          " B/s and latency ", l.latency_s, " s; need bandwidth > 0 and latency >= 0"));
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < c.num_axes(); ++i) {
    absl::Status s = check(c.axis(i), absl::StrCat("mesh axis ", i));
    OFS_RETURN_IF_ERROR(s);
  }
  absl::Status s = check(c.p2p(), "p2p links");
  OFS_RETURN_IF_ERROR(s);
  if (!(c.compute_flops_per_s() > 0) || !(c.memory_bytes_per_s() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "engine: calibration has compute rate ", c.compute_flops_per_s(),
        " flop/s and memory bandwidth ", c.memory_bytes_per_s(), " B/s; both must be > 0"));
  }
  return absl::OkStatus();
}

absl::Status OutOfMemory(absl::string_view what, absl::string_view of) {
  return absl::ResourceExhaustedError(
      absl::StrCat("out of memory during ", what, " ", of, "; the request is too large"));
}

}  // namespace

std::shared_ptr<const OpRegistry> Engine::Options::Borrow(const OpRegistry& registry) {
  return std::shared_ptr<const OpRegistry>(&registry, [](const OpRegistry*) {});
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(Options options) {
  OFS_ASSIGN_OR_RETURN(std::unique_ptr<InferCache> cache, InferCache::Create(options.infer_cache));
  if (options.plan_cache_capacity == 0) {
    return absl::InvalidArgumentError("engine: plan_cache_capacity must be at least 1");
  }
  absl::Status s = ValidateCalibration(options.calibration);
  OFS_RETURN_IF_ERROR(s);
  std::shared_ptr<const OpRegistry> registry =
      options.registry ? std::move(options.registry) : Options::Borrow(ops::BuiltinOpRegistry());
  auto planner = std::make_shared<boxing::BoxingPlanner>(
      std::move(options.calibration), options.plan_cache_capacity, options.plan_cache_max_bytes);
  std::unique_ptr<Engine> engine(new Engine(std::move(registry), std::move(cache), planner));
  s = engine->RegisterCostPolicy(PolicyName::OneFlow().str(), OneFlow1D(), OneFlowNd());
  if (s.ok()) {
    auto planned = std::make_shared<const PlannedSelection>(
        std::make_shared<const boxing::PlannedCostModel>(planner));
    s = engine->RegisterCostPolicy(PolicyName::Planned().str(), planned, planned);
  }
  OFS_RETURN_IF_ERROR(s);
  return engine;
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create() { return Create(Options()); }

absl::StatusOr<std::shared_ptr<const OpCall>> Engine::MakeCall(absl::string_view op,
                                                               int num_inputs,
                                                               const AttrMap& attrs) const {
  // `op` may be an alias naming attributes its own way (OpRegistry::ResolveCall).
  OFS_ASSIGN_OR_RETURN(ResolvedCall resolved, registry_->ResolveCall(op, attrs));
  OFS_ASSIGN_OR_RETURN(std::vector<int> counts, OpCall::DeduceInputCounts(*resolved.def,
      num_inputs));
  return OpCall::Make(std::move(resolved.def), std::move(counts), resolved.attrs);
}

Engine::Engine(std::shared_ptr<const OpRegistry> registry, std::unique_ptr<InferCache> cache,
               std::shared_ptr<boxing::BoxingPlanner> planner)
    : registry_(std::move(registry)),
      infer_cache_(std::move(cache)),
      planner_(std::move(planner)) {}

absl::Status Engine::RegisterCostPolicy(absl::string_view name, PolicyPtr one_d, PolicyPtr nd) {
  if (name.empty() || one_d == nullptr || nd == nullptr) {
    return absl::InvalidArgumentError(
        "engine: a cost policy needs a name and a selection policy for 1-D and N-D placements");
  }
  const PolicyName key = PolicyName::Of(name);
  absl::MutexLock lock(&register_mu_);
  const int n = num_policies_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (policies_[i].name == key) {
      return absl::AlreadyExistsError(absl::StrCat("engine: cost policy ", QuotedInput(name),
                                                   " is already registered"));
    }
  }
  if (n == kMaxCostPolicies) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "engine: at most ", kMaxCostPolicies, " cost policies; cannot add ", QuotedInput(name)));
  }
  policies_[n] = PolicyEntry{key, std::move(one_d), std::move(nd)};
  num_policies_.store(n + 1, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<Engine::PolicyPtr> Engine::SelectionPolicyFor(PolicyName name,
                                                              const Placement& placement) const {
  if (const PolicyPtr* p = FindPolicy(name, placement)) return *p;
  return absl::InvalidArgumentError(absl::StrCat("unknown cost policy ", QuotedInput(name.str()),
                                                 ": expected ",
                                                 absl::StrJoin(CostPolicyNames(), " or ")));
}

std::vector<std::string> Engine::CostPolicyNames() const {
  std::vector<std::string> names;
  const int n = num_policies_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) names.push_back(policies_[i].name.str());
  return names;
}

template <typename Result, typename Query>
absl::StatusOr<Result> Engine::InferThroughCache(
    const Query& query, const InferRequest& request,
    absl::StatusOr<Result> (InferCache::*get)(const Query&, const PolicyPtr&)) {
  // The hot path: no lock and no reference-count traffic to find the policy.
  const PolicyPtr* policy = FindPolicy(request.cost.policy, request.placement);
  if (policy == nullptr) return SelectionPolicyFor(request.cost.policy, request.placement).status();
  // Allocation failure is a resource error of this request, not a crash of
  // the process that asked (docs/RELIABILITY.md, "Limits").
  try {
    return (infer_cache_.get()->*get)(query, *policy);
  } catch (const std::bad_alloc&) {
    return OutOfMemory("inference of", request.op ? request.op->type_name() : "");
  }
}

absl::StatusOr<std::shared_ptr<const InferResult>> Engine::Infer(const InferRequest& request) {
  return InferThroughCache<std::shared_ptr<const InferResult>, InferRequest>(
      request, request, &InferCache::GetOrInfer);
}

absl::StatusOr<const InferResult*> Engine::InferBorrowed(const InferRequest& request) {
  return InferThroughCache<const InferResult*, InferRequest>(request, request,
                                                             &InferCache::GetOrInferBorrowed);
}

absl::StatusOr<std::shared_ptr<const InferResult>> Engine::Infer(const InferKey& key) {
  return InferThroughCache<std::shared_ptr<const InferResult>, InferKey>(
      key, key.request(), &InferCache::GetOrInfer);
}

absl::StatusOr<const InferResult*> Engine::InferBorrowedMiss(const InferKey& key) {
  return InferThroughCache<const InferResult*, InferKey>(key, key.request(),
                                                         &InferCache::GetOrInferBorrowed);
}

absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> Engine::Plan(
    const boxing::PlanRequest& request) {
  try {
    return planner_->Plan(request);
  } catch (const std::bad_alloc&) {
    return OutOfMemory("boxing plan for", request.shape.ToString());
  }
}

void Engine::ClearCaches() {
  infer_cache_->Clear();
  planner_->Clear();
}

}  // namespace oneflow_sbp::engine