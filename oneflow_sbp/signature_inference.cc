#include "oneflow_sbp/signature_inference.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/copy_cost.h"
#include "oneflow_sbp/hierarchy_reduction.h"
#include "oneflow_sbp/nd_candidate_context.h"
#include "oneflow_sbp/sbp_context.h"
#include "oneflow_sbp/tensor_slice_view.h"

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

namespace {

// Everything inference derives from a validated request.
struct Prepared {
  const OpCall* call;
  std::vector<TensorDesc> input_descs;
  std::vector<TensorDesc> output_descs;
  // Per blob; empty if the request has none.
  std::vector<std::optional<NdSbp>> constraints;
  bool has_constraints = false;
};

const TensorDesc& BlobDesc(const Prepared& p, int blob) {
  const int n = static_cast<int>(p.input_descs.size());
  return blob < n ? p.input_descs[blob] : p.output_descs[blob - n];
}

absl::StatusOr<Prepared> Prepare(const InferRequest& req) {
  if (req.op == nullptr) {
    return absl::InvalidArgumentError("inference request names no op");
  }
  const OpCall& call = *req.op;
  const std::string& op = call.type_name();
  if (static_cast<int>(req.inputs.size()) != call.num_inputs()) {
    std::vector<std::string> bns;
    for (int b = 0; b < call.num_inputs(); ++b) bns.push_back(call.bn(b));
    return absl::InvalidArgumentError(absl::StrCat(
        op, " expects ", call.num_inputs(), " input", call.num_inputs() == 1 ? "" : "s",
        " (", absl::StrJoin(bns, ", "), "), got ", req.inputs.size()));
  }
  Prepared p;
  p.call = &call;
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  for (int b = 0; b < call.num_inputs(); ++b) {
    const InferInput& in = req.inputs[b];
    absl::Status s = ValidateNdSbp(in.nd_sbp(), in.desc().shape, h);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input ", call.bn(b), " ", in.desc().ToString(), ": ",
                       s.message()));
    }
    p.input_descs.push_back(in.desc());
  }
  absl::StatusOr<std::vector<TensorDesc>> outs = call.InferOutputDescs(p.input_descs);
  if (!outs.ok()) return outs.status();
  p.output_descs = *std::move(outs);

  if (!req.constraints.empty()) {
    if (static_cast<int>(req.constraints.size()) != call.num_blobs()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": ", req.constraints.size(), " constraint slots for ",
          call.num_blobs(), " blobs"));
    }
    p.constraints = req.constraints;
    for (int b = 0; b < call.num_blobs(); ++b) {
      const std::optional<NdSbp>& c = p.constraints[b];
      if (!c) continue;
      if (c->size() != static_cast<int>(h.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": constraint on ", call.bn(b), " ", c->ToString(), " has ",
            c->size(), " entries but placement ", req.placement.ToString(),
            " has ", h.size(), " mesh axes"));
      }
      const Shape& shape = BlobDesc(p, b).shape;
      for (int i = 0; i < c->size(); ++i) {
        const SbpParallel s = (*c)[i];
        if (s.is_split() && s.split_axis() >= shape.rank()) {
          return absl::InvalidArgumentError(absl::StrCat(
              op, ": constraint on ", call.bn(b), " ", c->ToString(), " splits dim ",
              s.split_axis(), " but ", BlobDesc(p, b).ToString(), " has rank ",
              shape.rank()));
        }
        if (!s.is_unset()) p.has_constraints = true;
      }
    }
  }
  return p;
}

SbpSignature AllBroadcast(int num_blobs) {
  return SbpSignature(num_blobs, SbpParallel::Broadcast());
}

// Constraint check for one blob of a 1-D candidate or one NdSbp.
bool MatchesConstraint(const NdSbp& value, const NdSbp& constraint) {
  for (int i = 0; i < constraint.size(); ++i) {
    if (!constraint[i].is_unset() && constraint[i] != value[i]) return false;
  }
  return true;
}

std::string ConstraintsToString(const Prepared& p) {
  std::vector<std::string> parts;
  for (int b = 0; b < p.call->num_blobs(); ++b) {
    if (p.constraints.empty() || !p.constraints[b]) continue;
    parts.push_back(absl::StrCat(p.call->bn(b), ":", CompactNdSbpString(*p.constraints[b])));
  }
  return absl::StrJoin(parts, " ");
}

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

// The result shell and, with explain, one record per candidate in list order.
InferResult NewResult(const OpCall& call, size_t num_candidates) {
  InferResult result;
  result.used_broadcast_fallback = call.def().uses_broadcast_fallback();
  result.num_candidates = static_cast<int>(num_candidates);
  return result;
}

std::vector<CandidateRecord> NewRecords(const std::vector<NdSbpSignature>& list, bool explain) {
  std::vector<CandidateRecord> records(explain ? list.size() : 0);
  for (size_t k = 0; k < records.size(); ++k) {
    records[k].signature = list[k];
    records[k].emission_index = static_cast<int>(k);
  }
  return records;
}

// SPEC.md §3 steps 1-3: per-value lists (with all-B appended), their
// row-major direct product (last mesh axis fastest), then the op's hook.
// `dedup_lists` drops repeated candidates within each list first (the
// improved policies; OneFlow keeps them, which shifts its removal order).
absl::StatusOr<std::vector<NdSbpSignature>> NdCandidates(const InferRequest& req,
                                                         const Prepared& p,
                                                         bool dedup_lists) {
  const OpCall& call = *p.call;
  const std::string& op = call.type_name();
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  const int64_t n = req.placement.parallel_num();
  const int axes = static_cast<int>(h.size());

  std::vector<std::pair<int64_t, std::vector<SbpSignature>>> lists;
  std::vector<const std::vector<SbpSignature>*> per_axis(axes);
  for (int i = 0; i < axes; ++i) {
    auto it = std::find_if(lists.begin(), lists.end(),
                           [&](const auto& e) { return e.first == h[i]; });
    if (it == lists.end()) {
      absl::StatusOr<std::vector<SbpSignature>> l = GetSbpCandidates(
          call, p.input_descs, p.output_descs, h[i], n, req.placement.device_type());
      if (!l.ok()) return l.status();
      l->push_back(AllBroadcast(call.num_blobs()));
      if (dedup_lists) {
        std::vector<SbpSignature> unique;
        for (SbpSignature& sig : *l) {
          if (std::find(unique.begin(), unique.end(), sig) == unique.end()) {
            unique.push_back(std::move(sig));
          }
        }
        *l = std::move(unique);
      }
      lists.emplace_back(h[i], *std::move(l));
    }
  }
  for (int i = 0; i < axes; ++i) {
    for (const auto& e : lists) {
      if (e.first == h[i]) per_axis[i] = &e.second;
    }
  }
  int64_t total = 1;
  for (int i = 0; i < axes; ++i) {
    total *= static_cast<int64_t>(per_axis[i]->size());
    if (total > kMaxNdCandidates) {
      return absl::ResourceExhaustedError(absl::StrCat(
          op, ": the N-D candidate product on hierarchy [", absl::StrJoin(h, ","),
          "] exceeds ", kMaxNdCandidates, " signatures"));
    }
  }
  std::vector<NdSbpSignature> list(total, NdSbpSignature(call.num_blobs()));
  absl::InlinedVector<int, NdSbp::kMaxAxes> digit(axes, 0);
  for (int64_t k = 0; k < total; ++k) {
    for (int b = 0; b < call.num_blobs(); ++b) {
      NdSbp nd;
      for (int i = 0; i < axes; ++i) nd.push_back((*per_axis[i])[digit[i]][b]);
      list[k][b] = nd;
    }
    for (int i = axes - 1; i >= 0; --i) {
      if (++digit[i] < static_cast<int>(per_axis[i]->size())) break;
      digit[i] = 0;
    }
  }
  if (call.def().nd_candidate_hook()) {
    NdCandidateContext ctx(call, p.input_descs, p.output_descs, h, &list);
    absl::Status s = call.def().nd_candidate_hook()(ctx);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(op, ": N-D candidate hook: ", s.message()));
    }
  }
  return list;
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
            d.shape, ByteSizeOf(d.dtype), req.placement, producer, wanted);
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
                d.shape, ByteSizeOf(d.dtype), req.placement, wanted, producer);
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

}  // namespace

bool IsSplittable(const Shape& shape, const NdSbp& nd_sbp,
                  absl::Span<const int64_t> hierarchy) {
  absl::InlinedVector<int64_t, 6> cur(shape.dims().begin(), shape.dims().end());
  for (size_t i = 0; i < hierarchy.size(); ++i) {
    const SbpParallel s = nd_sbp[static_cast<int>(i)];
    if (!s.is_split()) continue;
    const int a = s.split_axis();
    if (a >= shape.rank() || cur[a] < hierarchy[i]) return false;
    cur[a] /= hierarchy[i];
  }
  return true;
}

absl::StatusOr<std::vector<SbpSignature>> GetSbpCandidates(
    const OpCall& call, absl::Span<const TensorDesc> input_descs,
    absl::Span<const TensorDesc> output_descs, int64_t hierarchy_value,
    int64_t parallel_num, DeviceType device_type) {
  const std::string& op = call.type_name();
  std::vector<SbpSignature> list;
  if (call.def().get_sbp_fn()) {
    SbpContext ctx(call, input_descs, hierarchy_value, parallel_num, device_type);
    absl::Status s = call.def().get_sbp_fn()(ctx);
    if (s.ok()) s = ctx.status();
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(op, ": sbp rule: ", s.message()));
    }
    list = std::move(ctx.candidates());
  }
  for (size_t k = 0; k < list.size(); ++k) {
    for (int b = 0; b < call.num_blobs(); ++b) {
      const SbpParallel s = list[k][b];
      if (s.is_unset()) {
        return absl::InternalError(absl::StrCat(
            op, ": sbp rule candidate #", k, " (", SignatureToString(call, list[k]),
            ") has NOT set sbp for ", call.bn(b)));
      }
      const TensorDesc& d = b < call.num_inputs() ? input_descs[b]
                                                  : output_descs[b - call.num_inputs()];
      if (s.is_split() && s.split_axis() >= d.shape.rank()) {
        return absl::InternalError(absl::StrCat(
            op, ": sbp rule candidate #", k, " (", SignatureToString(call, list[k]),
            ") splits ", call.bn(b), " ", d.ToString(), " on dim ", s.split_axis()));
      }
    }
  }
  return list;
}

absl::StatusOr<InferResult> InferSignature(const InferRequest& request) {
  absl::StatusOr<Prepared> p = Prepare(request);
  if (!p.ok()) return p.status();
  if (request.cost.policy == CostPolicy::kPlanned) return InferPlanned(request, *p);
  if (request.placement.num_axes() == 1) return Infer1D(request, *p);
  return InferNd(request, *p);
}

}  // namespace oneflow_sbp
