#include "oneflow_sbp/signature_inference.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/candidate_list.h"
#include "oneflow_sbp/copy_cost.h"
#include "oneflow_sbp/hierarchy_reduction.h"
#include "oneflow_sbp/internal/inference_common.h"

namespace oneflow_sbp {

absl::string_view CandidateStatusName(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::kChosen: return "chosen";
    case CandidateStatus::kRanked: return "ranked";
    case CandidateStatus::kFilteredByShape: return "filtered_by_shape";
    case CandidateStatus::kFilteredByConstraint: return "filtered_by_constraint";
  }
  return "?";
}

namespace internal {
namespace {

// ---------------------------------------------------------------------------
// 1-D (SPEC.md §2)
// ---------------------------------------------------------------------------

absl::StatusOr<InferResult> Infer1D(const InferRequest& req, const Prepared& p) {
  const OpCall& call = *p.call;
  const int64_t n = req.placement.parallel_num();
  absl::StatusOr<std::vector<SbpSignature>> rule_list =
      GetSbpCandidates(call, p.input_descs, p.output_descs, n, n,
                       req.placement.device_type());
  if (!rule_list.ok()) return rule_list.status();
  std::vector<SbpSignature> list = *std::move(rule_list);
  // The engine always appends all-B last, even if the rule emitted it.
  list.push_back(AllBroadcast(call.num_blobs()));

  InferResult result;
  result.used_broadcast_fallback = call.def().uses_broadcast_fallback();
  result.num_candidates = static_cast<int>(list.size());
  std::vector<CandidateRecord> records(req.explain ? list.size() : 0);
  for (size_t k = 0; k < records.size(); ++k) {
    records[k].signature = ToNdSignature(list[k]);
    records[k].emission_index = static_cast<int>(k);
  }

  // Input shape filter (order-preserving): an input S(a) needs shape[a] >= N.
  std::vector<int> survivors;
  for (size_t k = 0; k < list.size(); ++k) {
    bool fits = true;
    for (int b = 0; b < call.num_inputs() && fits; ++b) {
      const SbpParallel s = list[k][b];
      if (!s.is_split()) continue;
      const int64_t extent = p.input_descs[b].shape.dim(s.split_axis());
      if (extent < n) {
        fits = false;
        if (req.explain) {
          records[k].status = CandidateStatus::kFilteredByShape;
          records[k].note = absl::StrCat(call.bn(b), " ", s.ToString(), ": dim ",
                                         s.split_axis(), " has ", extent, " < ", n,
                                         " parts");
        }
      }
    }
    if (fits) survivors.push_back(static_cast<int>(k));
  }

  // Constraint filter (order-preserving; inputs and outputs in 1-D).
  if (p.has_constraints) {
    std::vector<int> kept;
    for (int k : survivors) {
      bool ok = true;
      for (int b = 0; b < call.num_blobs() && ok; ++b) {
        if (!p.constraints[b]) continue;
        if (!MatchesConstraint(NdSbp{list[k][b]}, *p.constraints[b])) {
          ok = false;
          if (req.explain) {
            records[k].status = CandidateStatus::kFilteredByConstraint;
            records[k].note = absl::StrCat(call.bn(b), " is ", list[k][b].ToString(),
                                           ", constraint wants ",
                                           CompactNdSbpString(*p.constraints[b]));
          }
        }
      }
      if (ok) kept.push_back(k);
    }
    if (kept.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          call.type_name(), ": no candidate satisfies the constraints ",
          ConstraintsToString(p), "; candidates: ",
          SignatureListToString(call, list)));
    }
    survivors = std::move(kept);
  }

  // Order value (lower is better). With constraints every candidate gets 0;
  // with inputs, -10 per input the candidate keeps as produced (the
  // producer's placement always has N devices here: eager inference runs
  // on one placement); without inputs, -1 per S(0) output.
  auto order_value = [&](const SbpSignature& sig) -> int64_t {
    if (p.has_constraints) return 0;
    int64_t v = 0;
    if (call.num_inputs() > 0) {
      for (int b = 0; b < call.num_inputs(); ++b) {
        if (req.inputs[b].nd_sbp()[0] == sig[b]) v -= 10;
      }
    } else {
      for (int b = 0; b < call.num_blobs(); ++b) {
        if (sig[b] == SbpParallel::Split(0)) v -= 1;
      }
    }
    return v;
  };
  // Copy cost: sum over inputs in declared order (SPEC.md §2 table).
  auto copy_cost = [&](const SbpSignature& sig) {
    double total = 0;
    for (int b = 0; b < call.num_inputs(); ++b) {
      total += OneFlow1DCopyCost(req.inputs[b].nd_sbp()[0], sig[b],
                                 static_cast<double>(p.input_descs[b].byte_size()));
    }
    return total;
  };

  struct Ranked {
    int index;
    int64_t order;
    double cost;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(survivors.size());
  if (survivors.size() == 1 && !req.explain) {
    ranked.push_back(Ranked{survivors[0], 0, 0});
  } else {
    for (int k : survivors) ranked.push_back(Ranked{k, order_value(list[k]), copy_cost(list[k])});
    if (survivors.size() > 1) {
      // Total order: order value, then copy cost, then emission order. OneFlow
      // uses std::sort, which libstdc++ makes stable for <= 16 elements; we
      // always sort stably, so ties go to the earlier candidate (SPEC.md §2).
      std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (a.order != b.order) return a.order < b.order;
        return a.cost < b.cost;
      });
    }
  }
  const int chosen = ranked.front().index;
  result.signature = ToNdSignature(list[chosen]);
  result.output_descs = p.output_descs;
  if (req.explain) {
    for (size_t r = 0; r < ranked.size(); ++r) {
      CandidateRecord& rec = records[ranked[r].index];
      rec.order_value = ranked[r].order;
      rec.copy_cost = ranked[r].cost;
      rec.rank = static_cast<int>(r) + 1;
      rec.status = r == 0 ? CandidateStatus::kChosen : CandidateStatus::kRanked;
      for (int b = 0; b < call.num_inputs(); ++b) {
        if (req.inputs[b].nd_sbp()[0] != list[ranked[r].index][b]) ++rec.mismatched_inputs;
      }
      if (r > 0) {
        const Ranked& best = ranked.front();
        rec.note = ranked[r].order != best.order
                       ? absl::StrCat("order value ", ranked[r].order, " > ", best.order)
                   : ranked[r].cost != best.cost
                       ? absl::StrCat("copy cost ", ranked[r].cost, " > ", best.cost)
                       : "tie; an earlier candidate wins";
      }
    }
    if (ranked.size() == 1) records[chosen].note = "only candidate left";
    result.candidates = std::move(records);
  }
  return result;
}

// ---------------------------------------------------------------------------
// N-D (SPEC.md §3)
// ---------------------------------------------------------------------------

// OneFlow's filter removal: scan from the back; a failing candidate is
// overwritten by the current last element (already checked) and the last
// element is popped. Survivors are therefore NOT in product order once
// anything is removed, and every "first match" downstream depends on this
// order, so it is reproduced exactly. `ids` moves along with `list`.
template <typename Fails>
void RemoveSwapWithLast(std::vector<NdSbpSignature>* list, std::vector<int>* ids,
                        Fails fails) {
  for (int i = static_cast<int>(list->size()) - 1; i >= 0; --i) {
    if (!fails((*list)[i], (*ids)[i])) continue;
    (*list)[i] = std::move(list->back());
    (*ids)[i] = ids->back();
    list->pop_back();
    ids->pop_back();
  }
}

absl::StatusOr<InferResult> InferNd(const InferRequest& req, const Prepared& p) {
  const OpCall& call = *p.call;
  const std::string& op = call.type_name();
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  absl::StatusOr<std::vector<NdSbpSignature>> candidates =
      NdCandidates(req, p, /*dedup_lists=*/false);
  if (!candidates.ok()) return candidates.status();
  std::vector<NdSbpSignature> list = *std::move(candidates);

  InferResult result = NewResult(call, list.size());
  std::vector<CandidateRecord> records = NewRecords(list, req.explain);
  std::vector<int> ids(list.size());
  std::iota(ids.begin(), ids.end(), 0);

  // Step 4: input shape filter (outputs are not checked).
  RemoveSwapWithLast(&list, &ids, [&](const NdSbpSignature& sig, int id) {
    for (int b = 0; b < call.num_inputs(); ++b) {
      if (IsSplittable(p.input_descs[b].shape, sig[b], h)) continue;
      if (req.explain) {
        records[id].status = CandidateStatus::kFilteredByShape;
        records[id].note = absl::StrCat(call.bn(b), " ", p.input_descs[b].ToString(),
                                        " cannot be split as ",
                                        CompactNdSbpString(sig[b]));
      }
      return true;
    }
    return false;
  });
  // Step 5: constraint filter on inputs only (OneFlow ignores output
  // constraints in N-D).
  if (p.has_constraints) {
    RemoveSwapWithLast(&list, &ids, [&](const NdSbpSignature& sig, int id) {
      for (int b = 0; b < call.num_inputs(); ++b) {
        if (!p.constraints[b] || MatchesConstraint(sig[b], *p.constraints[b])) continue;
        if (req.explain) {
          records[id].status = CandidateStatus::kFilteredByConstraint;
          records[id].note = absl::StrCat(call.bn(b), " is ", CompactNdSbpString(sig[b]),
                                          ", constraint wants ",
                                          CompactNdSbpString(*p.constraints[b]));
        }
        return true;
      }
      return false;
    });
  }
  // Step 6.
  if (list.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Empty sbp signature after filtering for ", op, " on ",
        req.placement.ToString(),
        p.has_constraints ? absl::StrCat(" with constraints ", ConstraintsToString(p))
                          : std::string()));
  }

  // Step 7: greedy selection (OneFlow's default rule). A candidate whose
  // inputs all match their producers (and need no boxing) wins at once;
  // otherwise the least total eager copy cost wins, and a later candidate
  // must beat the RUNNING best by more than 1e-7 relative, so ties and
  // near-ties go to the earliest candidate in the final list order.
  // OneFlow's mismatch-count tie rule is dead code (its reference count is
  // reset per candidate), so it is not applied.
  constexpr double kFloatDeviationMinus = 0.9999999;
  int chosen = -1;
  int best = -1;
  double best_cost = kMaxValidCost;
  std::vector<double> costs(req.explain ? list.size() : 0, 0);
  std::vector<int> mismatches(req.explain ? list.size() : 0, 0);
  if (list.size() == 1 && !req.explain) chosen = 0;
  // All NdSbps here have the hierarchy's length, so packed() is a full key.
  std::vector<absl::flat_hash_map<uint64_t, double>> cost_memo(call.num_inputs());
  for (size_t k = 0; k < list.size() && (chosen < 0 || req.explain); ++k) {
    double cost = 0;
    double mism = 0;
    bool all_equal = true;
    int mismatched = 0;
    for (int b = 0; b < call.num_inputs(); ++b) {
      const NdSbp& producer = req.inputs[b].nd_sbp();
      const NdSbp& wanted = list[k][b];
      const bool equal = producer == wanted;
      all_equal = all_equal && equal;
      if (!equal) ++mismatched;
      const bool requires_same = call.is_mutable_input(b);
      // Priority (SPEC.md §3): 0 if equal; a mutable input that needs real
      // boxing gets 2 (may not be boxed), 1 if it only differs before
      // reduction; any other mismatch gets 1.
      double priority = 0;
      if (!equal) {
        priority = 1.0;
        if (requires_same) {
          const InOutReduced r = InOutReduce(h, h, producer, wanted, p.input_descs[b].shape);
          priority = (r.in == r.out && r.in_hierarchy == r.out_hierarchy) ? 1.0 : 2.0;
        }
      }
      mism += priority;
      if (priority > 1.5) {
        cost = kUnsupportedCost;
        break;
      }
      // Many candidates ask the same layout of an input (the product repeats
      // each list entry), so costs are memoised per input and layout.
      auto [memo, fresh] = cost_memo[b].try_emplace(wanted.packed(), 0.0);
      if (fresh) {
        absl::StatusOr<double> c = OneFlowEagerNdCost(
            producer, wanted, h, h, /*same_devices=*/true, p.input_descs[b].shape,
            static_cast<double>(p.input_descs[b].byte_size()), requires_same,
            req.cost.partial_penalty_policy);
        if (!c.ok()) {
          return absl::InternalError(
              absl::StrCat(op, ": ", call.bn(b), ": ", c.status().message()));
        }
        memo->second = *c;
      }
      cost += memo->second;
    }
    if (req.explain) {
      costs[k] = cost;
      mismatches[k] = mismatched;
    }
    if (chosen >= 0) continue;  // explain mode: costs only
    if (all_equal && mism == 0) {
      chosen = static_cast<int>(k);
      continue;
    }
    if (cost < best_cost * kFloatDeviationMinus) {
      best = static_cast<int>(k);
      best_cost = cost;
    }
  }
  if (chosen < 0) chosen = best;
  if (chosen < 0) {
    std::vector<std::string> sigs;
    for (const NdSbpSignature& s : list) sigs.push_back(SignatureToString(call, s));
    std::vector<std::string> ins;
    for (int b = 0; b < call.num_inputs(); ++b) {
      ins.push_back(absl::StrCat(call.bn(b), ":", CompactNdSbpString(req.inputs[b].nd_sbp())));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "op: `", op, "` can't find available sbp signature; inputs ",
        absl::StrJoin(ins, " "), "; candidates: ", absl::StrJoin(sigs, " | ")));
  }
  result.signature = list[chosen];
  result.output_descs = p.output_descs;

  if (req.explain) {
    // Display rank: chosen first, then by cost, then final-list position.
    std::vector<int> order(list.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if ((a == chosen) != (b == chosen)) return a == chosen;
      return costs[a] < costs[b];
    });
    for (size_t r = 0; r < order.size(); ++r) {
      const int k = order[r];
      CandidateRecord& rec = records[ids[k]];
      rec.copy_cost = costs[k];
      rec.mismatched_inputs = mismatches[k];
      rec.rank = static_cast<int>(r) + 1;
      rec.status = k == chosen ? CandidateStatus::kChosen : CandidateStatus::kRanked;
      const bool chosen_matches = costs[chosen] == 0 && mismatches[chosen] == 0;
      if (k == chosen) {
        rec.note = chosen_matches ? "keeps every input as produced (first such candidate)"
                                  : "least copy cost (earliest within 1e-7)";
      } else if (costs[k] >= kMaxValidCost) {
        rec.note = "an input may not be boxed";
      } else if (chosen_matches) {
        rec.note = "needs boxing; a candidate keeping every input exists";
      } else if (k > chosen && costs[k] >= costs[chosen] * kFloatDeviationMinus) {
        rec.note = "not cheaper than an earlier candidate";
      } else {
        rec.note = absl::StrCat("copy cost ", costs[k], " > ", costs[chosen]);
      }
      rec.final_position = k;
    }
    result.candidates = std::move(records);
  }
  return result;
}

}  // namespace
}  // namespace internal

absl::StatusOr<InferResult> InferSignature(const InferRequest& request) {
  using internal::Prepared;
  absl::StatusOr<Prepared> p = internal::Prepare(request);
  if (!p.ok()) return p.status();
  if (request.cost.policy == CostPolicy::kPlanned) return internal::InferPlanned(request, *p);
  if (request.placement.num_axes() == 1) return internal::Infer1D(request, *p);
  return internal::InferNd(request, *p);
}

}  // namespace oneflow_sbp
