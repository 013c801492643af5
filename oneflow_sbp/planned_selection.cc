// The `planned` cost policy's selection. See signature_inference.h for
// the pipeline and docs/BOXING.md for the cost model.
#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/candidate_list.h"
#include "oneflow_sbp/copy_cost.h"
#include "oneflow_sbp/internal/inference_common.h"

namespace oneflow_sbp::internal {

// ---------------------------------------------------------------------------
// Improved selection under the `planned` policy (SPEC.md §9, "improved")
// ---------------------------------------------------------------------------
//
// One rule for 1-D and N-D placements: candidates are deduplicated (first
// kept), every blob's split must fit its shape (inputs and outputs), every
// constraint applies (inputs and outputs), and filtering keeps list order.
// The winner has the least cost (cost of the cheapest boxing plan of each
// input, plus the partial-consumer penalty for inputs turned into P: by
// default the cost of reducing them back, see below); a
// candidate within 1e-7 of the minimum ties, and ties go to fewer inputs
// needing boxing, then to the earlier candidate. Order values play no part.
absl::StatusOr<InferResult> InferPlanned(const InferRequest& req, const Prepared& p) {
  const OpCall& call = *p.call;
  const std::string& op = call.type_name();
  if (req.cost.planned_model == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        op, ": cost policy planned needs a boxing cost model (CostOptions::planned_model)"));
  }
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  absl::StatusOr<std::vector<NdSbpSignature>> candidates =
      NdCandidates(req, p, /*dedup_lists=*/true);
  if (!candidates.ok()) return candidates.status();
  std::vector<NdSbpSignature> list;
  for (NdSbpSignature& sig : *candidates) {
    if (std::find(list.begin(), list.end(), sig) == list.end()) list.push_back(std::move(sig));
  }

  InferResult result = NewResult(call, list.size());
  std::vector<CandidateRecord> records = NewRecords(list, req.explain);
  std::vector<int> kept;
  for (int k = 0; k < static_cast<int>(list.size()); ++k) {
    std::string why;
    CandidateStatus status = CandidateStatus::kRanked;
    for (int b = 0; b < call.num_blobs() && why.empty(); ++b) {
      const TensorDesc& d = BlobDesc(p, b);
      if (!IsSplittable(d.shape, list[k][b], h)) {
        status = CandidateStatus::kFilteredByShape;
        why = absl::StrCat(call.bn(b), " ", d.ToString(), " cannot be split as ",
                           CompactNdSbpString(list[k][b]));
      } else if (p.has_constraints && p.constraints[b] &&
                 !MatchesConstraint(list[k][b], *p.constraints[b])) {
        status = CandidateStatus::kFilteredByConstraint;
        why = absl::StrCat(call.bn(b), " is ", CompactNdSbpString(list[k][b]),
                           ", constraint wants ", CompactNdSbpString(*p.constraints[b]));
      }
    }
    if (why.empty()) {
      kept.push_back(k);
    } else if (req.explain) {
      records[k].status = status;
      records[k].note = why;
    }
  }
  if (kept.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Empty sbp signature after filtering for ", op, " on ", req.placement.ToString(),
        p.has_constraints ? absl::StrCat(" with constraints ", ConstraintsToString(p))
                          : std::string()));
  }

  const int64_t n = req.placement.parallel_num();
  std::vector<absl::flat_hash_map<uint64_t, double>> memo(call.num_inputs());
  std::vector<double> costs(kept.size(), 0);
  std::vector<int> mismatches(kept.size(), 0);
  for (size_t i = 0; i < kept.size(); ++i) {
    const NdSbpSignature& sig = list[kept[i]];
    for (int b = 0; b < call.num_inputs(); ++b) {
      const NdSbp& producer = req.inputs[b].nd_sbp();
      const NdSbp& wanted = sig[b];
      if (producer == wanted) continue;
      ++mismatches[i];
      if (call.is_mutable_input(b)) {
        costs[i] = kUnsupportedCost;
        break;
      }
      auto [it, fresh] = memo[b].try_emplace(wanted.packed(), 0.0);
      if (fresh) {
        const TensorDesc& d = p.input_descs[b];
        absl::StatusOr<double> c = req.cost.planned_model->Cost(
            d.shape, d.dtype, req.placement, producer, wanted);
        if (!c.ok()) {
          return absl::Status(c.status().code(), absl::StrCat(op, ": ", call.bn(b), ": ",
                                                              c.status().message()));
        }
        double cost = *c;
        bool adds_partial = false;
        for (int a = 0; a < wanted.size(); ++a) {
          adds_partial = adds_partial || (wanted[a].is_partial_sum() && !producer[a].is_partial_sum());
        }
        if (adds_partial) {
          // Partial sums must be reduced later. Penalty policy 2 (default)
          // charges that reduction: the cheapest plan from the partial
          // layout back to the producer's. Policy 1 charges 1.0, any other
          // forbids turning inputs into P.
          if (req.cost.partial_penalty_policy == 2) {
            absl::StatusOr<double> back = req.cost.planned_model->Cost(
                d.shape, d.dtype, req.placement, wanted, producer);
            if (!back.ok()) return back.status();
            cost += *back;
          } else {
            cost += PartialPenalty(static_cast<double>(d.byte_size()), n, n,
                                   req.cost.partial_penalty_policy);
          }
        }
        it->second = cost;
      }
      costs[i] += it->second;
    }
  }
  double min_cost = kUnsupportedCost;
  for (double c : costs) min_cost = std::min(min_cost, c);
  if (min_cost >= kMaxValidCost) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op: `", op, "` can't find available sbp signature: every candidate boxes a mutable input"));
  }
  // Total order: cost (ties within 1e-7 of the minimum), mismatches, list order.
  std::vector<int> order(kept.size());
  std::iota(order.begin(), order.end(), 0);
  auto tied = [&](double c) { return c <= min_cost * 1.0000001 + 1e-12; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const bool ta = tied(costs[a]);
    const bool tb = tied(costs[b]);
    if (ta != tb) return ta;
    if (!ta && costs[a] != costs[b]) return costs[a] < costs[b];
    return mismatches[a] < mismatches[b];
  });
  const int chosen = kept[order[0]];
  result.signature = list[chosen];
  result.output_descs = p.output_descs;
  if (req.explain) {
    for (size_t r = 0; r < order.size(); ++r) {
      CandidateRecord& rec = records[kept[order[r]]];
      rec.copy_cost = costs[order[r]];
      rec.mismatched_inputs = mismatches[order[r]];
      rec.rank = static_cast<int>(r) + 1;
      rec.final_position = order[r];
      rec.status = r == 0 ? CandidateStatus::kChosen : CandidateStatus::kRanked;
      rec.note = r == 0 ? "least planned cost"
                 : rec.copy_cost >= kMaxValidCost ? "a mutable input would need boxing"
                 : tied(rec.copy_cost) ? "ties on cost; more boxed inputs or later"
                                       : absl::StrCat("cost ", rec.copy_cost, " > ", min_cost);
    }
    result.candidates = std::move(records);
  }
  return result;
}

}  // namespace oneflow_sbp::internal
