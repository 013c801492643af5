#include "oneflow_sbp/inference/planned_selection.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/inference/copy_cost.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {
namespace {

// Mesh axes on which `wanted` is partial (of any kind) and `producer` is
// not that partial, outside `already_partial`.
bool AddsPartial(const NdSbp& producer, const NdSbp& wanted, uint32_t already_partial) {
  for (int a = 0; a < wanted.size(); ++a) {
    if (already_partial & (1u << a)) continue;
    if (wanted[a].is_partial() && producer[a] != wanted[a]) return true;
  }
  return false;
}

// Mesh axes on which some input of `sig` arrives as P and stays P: the
// op's output is partial there whatever the other inputs do, so turning
// another input into P on those axes (for a linear op, a local and free
// conversion) adds no reduction. Charging one would make `planned` prefer
// reduce-scattering the partial input over the free conversion
// (add(B, P): P + P -> P costs nothing).
uint32_t AlreadyPartialAxes(const SelectionInput& in, const NdSbpSignature& sig) {
  uint32_t mask = 0;
  for (int b = 0; b < in.prepared.call->num_inputs(); ++b) {
    const NdSbp& producer = in.request.inputs[b].nd_sbp();
    for (int a = 0; a < producer.size(); ++a) {
      if (producer[a].is_partial() && sig[b][a] == producer[a]) mask |= 1u << a;
    }
  }
  return mask;
}

bool HasPartial(const NdSbp& nd) {
  for (int a = 0; a < nd.size(); ++a) {
    if (nd[a].is_partial()) return true;
  }
  return false;
}

}  // namespace

PlannedSelection::PlannedSelection(std::shared_ptr<const NdCopyCostModel> model)
    : SelectionPolicy(absl::StrCat("planned:", model->fingerprint())), model_(std::move(model)) {}

const StageRules& PlannedSelection::rules() const {
  static const StageRules rules{
      CandidateSource{/*deduplicate=*/true, /*run_nd_hook=*/true, CandidateSet::kExtended},
      FilterRules{Removal::kKeepOrder, /*shape_checks_outputs=*/true,
                  /*constraints_check_outputs=*/true, /*per_dim_shape_notes=*/false}};
  return rules;
}

absl::Status PlannedSelection::EmptyAfterFiltering(const SelectionInput& in) const {
  return EmptySignatureListError(in);
}

// The cost of giving input `b` the layout `wanted`. Partial sums must be
// reduced later: under PartialPenalty::kProportional (the default) that is
// charged as the cheapest plan from the partial layout back to the
// producer's, except on the axes in `already_partial` (another input is P
// there, so the reduction happens anyway and stays P in the plan back);
// the other penalties are OneFlow's.
absl::StatusOr<CopyCost> PlannedSelection::InputCost(const SelectionInput& in, int b,
                                                     const NdSbp& wanted,
                                                     uint32_t already_partial) const {
  const OpCall& call = *in.prepared.call;
  const NdSbp& producer = in.request.inputs[b].nd_sbp();
  const TensorDesc& d = in.prepared.input_descs[b];
  const Placement& placement = in.request.placement;
  auto named = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(call.type_name(), ": ", call.bn(b), ": ",
                                               s.message()));
  };
  absl::StatusOr<double> there = model_->Cost(d.shape, d.dtype, placement, producer, wanted);
  if (!there.ok()) return named(there.status());
  CopyCost cost(*there);
  if (!AddsPartial(producer, wanted, already_partial)) return cost;
  const PartialPenalty penalty = in.request.cost.partial_penalty;
  if (penalty != PartialPenalty::kProportional) {
    const int64_t n = placement.parallel_num();
    return cost + PartialConsumerPenalty(static_cast<double>(d.byte_size()), n, n, penalty);
  }
  NdSbp back_to = producer;  // partial axes shared with another input stay P
  for (int a = 0; a < back_to.size(); ++a) {
    if ((already_partial & (1u << a)) && wanted[a].is_partial()) back_to.set(a, wanted[a]);
  }
  // Keeping P there would put two kinds of partial in one layout
  // ((P(max),P) is not a value); the reduction is then priced back to the
  // producer's layout on every axis.
  if (back_to.mixes_partial_kinds()) back_to = producer;
  absl::StatusOr<double> back = model_->Cost(d.shape, d.dtype, placement, wanted, back_to);
  if (!back.ok()) return named(back.status());
  return cost + CopyCost(*back);
}

// A partial output must be reduced before anything but a linear op can
// read it, and until then every rank holds the whole logical tensor. The
// candidate is charged the cheapest such reduction now: the partial axes
// turned into B or into one split (whichever fits and costs least), so a
// candidate that is cheap only because it defers the reduction is not
// cheaper than one that reduces an input now.
absl::StatusOr<CopyCost> PlannedSelection::DeferredReductionCost(const SelectionInput& in,
                                                                 int out,
                                                                 const NdSbp& layout) const {
  const TensorDesc& d = in.prepared.output_descs[out];
  const Placement& placement = in.request.placement;
  std::optional<double> best;
  for (int target = -1; target < d.shape.rank(); ++target) {
    NdSbp reduced = layout;
    for (int a = 0; a < reduced.size(); ++a) {
      if (!reduced[a].is_partial()) continue;
      reduced.set(a, target < 0 ? SbpParallel::Broadcast() : SbpParallel::Split(target));
    }
    if (target >= 0 && !IsSplittable(d.shape, reduced, placement.hierarchy())) continue;
    absl::StatusOr<double> c = model_->Cost(d.shape, d.dtype, placement, layout, reduced);
    if (!c.ok()) {
      const OpCall& call = *in.prepared.call;
      return absl::Status(c.status().code(),
                          absl::StrCat(call.type_name(), ": ", call.bn(call.num_inputs() + out),
                                       ": deferred reduction: ", c.status().message()));
    }
    best = std::min(best.value_or(*c), *c);
  }
  return CopyCost(best.value_or(0.0));
}

// Bytes one rank holds of the outputs: B and P hold the whole tensor, each
// split axis divides it (uneven splits rounded up).
static int64_t OutputBytesPerRank(const SelectionInput& in, const NdSbpSignature& sig) {
  const OpCall& call = *in.prepared.call;
  const absl::Span<const int64_t> h = in.request.placement.hierarchy();
  int64_t total = 0;
  for (int o = 0; o < call.num_outputs(); ++o) {
    const NdSbp& nd = sig[call.num_inputs() + o];
    int64_t bytes = in.prepared.output_descs[o].byte_size();
    for (int a = 0; a < nd.size(); ++a) {
      if (nd[a].is_split()) bytes = (bytes + h[a] - 1) / h[a];
    }
    total += bytes;
  }
  return total;
}

absl::StatusOr<std::vector<PlannedSelection::PlannedCost>> PlannedSelection::CostSurvivors(
    const SelectionInput& in) const {
  const OpCall& call = *in.prepared.call;
  // Many candidates ask the same layout of an input: memoise per input.
  std::vector<absl::flat_hash_map<std::pair<uint64_t, uint32_t>, CopyCost>> memo(call.num_inputs());
  std::vector<PlannedCost> costs(in.survivors.size());
  std::vector<absl::flat_hash_map<uint64_t, CopyCost>> reductions(call.num_outputs());
  // Bound the work before doing any: each distinct conversion is one plan
  // (two when it adds partial sums, which are priced back as well).
  {
    std::vector<absl::flat_hash_set<uint64_t>> seen(call.num_inputs());
    int64_t work = 0;
    for (int id : in.survivors) {
      const NdSbpSignature& sig = in.all[id];
      for (int b = 0; b < call.num_inputs(); ++b) {
        const NdSbp& producer = in.request.inputs[b].nd_sbp();
        if (producer == sig[b] || !seen[b].insert(sig[b].packed()).second) continue;
        const TensorDesc& d = in.prepared.input_descs[b];
        const int64_t one = model_->WorkEstimate(d.shape, d.dtype, in.request.placement,
                                                 producer, sig[b]);
        work = one > (model_->max_work() - work) / 2 ? INT64_MAX : work + 2 * one;
        if (work > model_->max_work()) {
          return absl::ResourceExhaustedError(absl::StrCat(
              call.type_name(), ": pricing ", in.survivors.size(),
              " candidates by planned boxing on ", in.request.placement.ToString(),
              " would exceed the planner's work limit of ", model_->max_work(),
              "; use the oneflow cost policy, or fewer mesh axes"));
        }
      }
    }
  }
  for (size_t i = 0; i < in.survivors.size(); ++i) {
    const NdSbpSignature& sig = in.all[in.survivors[i]];
    const uint32_t already_partial = AlreadyPartialAxes(in, sig);
    for (int b = 0; b < call.num_inputs(); ++b) {
      if (in.request.inputs[b].nd_sbp() == sig[b]) continue;
      ++costs[i].mismatched;
      if (call.is_mutable_input(b)) {
        costs[i].cost = CopyCost::Unsupported();
        break;
      }
      auto [it, fresh] = memo[b].try_emplace({sig[b].packed(), already_partial}, CopyCost());
      if (fresh) {
        OFS_ASSIGN_OR_RETURN(CopyCost c, InputCost(in, b, sig[b], already_partial));
        it->second = c;
      }
      costs[i].cost += it->second;
    }
    costs[i].output_bytes_per_rank = OutputBytesPerRank(in, sig);
    if (!costs[i].cost.supported()) continue;
    for (int o = 0; o < call.num_outputs(); ++o) {
      const NdSbp& layout = sig[call.num_inputs() + o];
      if (!HasPartial(layout)) continue;
      auto [it, fresh] = reductions[o].try_emplace(layout.packed(), CopyCost());
      if (fresh) {
        OFS_ASSIGN_OR_RETURN(CopyCost c, DeferredReductionCost(in, o, layout));
        it->second = c;
      }
      costs[i].cost += it->second;
    }
  }
  return costs;
}

// Total order: cost (ties within the tolerance of the minimum), fewer
// mismatches, list order.
absl::StatusOr<int> PlannedSelection::Choose(const SelectionInput& in,
                                             ExplainRecorder& explain) const {
  OFS_ASSIGN_OR_RETURN(std::vector<PlannedCost> costs, CostSurvivors(in));
  std::optional<double> min_cost;
  for (const PlannedCost& c : costs) {
    if (c.cost.supported()) min_cost = std::min(min_cost.value_or(c.cost.value()), c.cost.value());
  }
  if (!min_cost) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op: `", in.prepared.call->type_name(),
        "` can't find available sbp signature: every candidate boxes a mutable input"));
  }
  auto tied = [&](const PlannedCost& c) {
    return c.cost.supported() && TiesOrBeats(c.cost.value(), *min_cost);
  };
  std::vector<int> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const PlannedCost& ca = (costs)[a];
    const PlannedCost& cb = (costs)[b];
    if (tied(ca) != tied(cb)) return tied(ca);
    if (!tied(ca) && ca.cost != cb.cost) return ca.cost.ValueOrFltMax() < cb.cost.ValueOrFltMax();
    if (ca.mismatched != cb.mismatched) return ca.mismatched < cb.mismatched;
    return ca.output_bytes_per_rank < cb.output_bytes_per_rank;
  });
  if (!explain.enabled()) return order[0];
  for (size_t r = 0; r < order.size(); ++r) {
    const PlannedCost& c = (costs)[order[r]];
    const int id = in.survivors[order[r]];
    CandidateRecord& rec = explain.record(id);
    rec.copy_cost = c.cost;
    rec.mismatched_inputs = c.mismatched;
    rec.final_position = order[r];
    explain.Rank(id, static_cast<int>(r) + 1,
                 r == 0 ? CandidateStatus::kChosen : CandidateStatus::kRanked,
                 r == 0                ? "least planned cost"
                 : !c.cost.supported() ? "a mutable input would need boxing"
                 : tied(c)             ? "ties on cost; more boxed inputs, more output memory or later"
                                       : absl::StrCat("cost ", c.cost.value(), " > ", *min_cost));
  }
  return order[0];
}

}  // namespace oneflow_sbp
