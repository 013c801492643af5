#include "oneflow_sbp/inference/oneflow_selection.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/inference/copy_cost.h"
#include "oneflow_sbp/values/hierarchy_reduction.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {
namespace {

// ---------------------------------------------------------------------------
// 1-D (SPEC.md §2)
// ---------------------------------------------------------------------------

struct Ranked1D {
  int position;  // in SelectionInput::survivors
  int64_t order;
  double cost;
};

// Lower is better. With constraints every candidate gets 0; with inputs,
// -10 per input the candidate keeps as produced (the producer's placement
// always has N devices here: eager inference runs on one placement);
// without inputs, -1 per S(0) output.
int64_t OrderValue(const SelectionInput& in, const NdSbpSignature& sig) {
  if (in.prepared.has_constraints) return 0;
  const OpCall& call = *in.prepared.call;
  int64_t v = 0;
  if (call.num_inputs() > 0) {
    for (int b = 0; b < call.num_inputs(); ++b) {
      if (in.request.inputs[b].nd_sbp()[0] == sig[b][0]) v -= 10;
    }
  } else {
    for (int b = 0; b < call.num_blobs(); ++b) {
      if (sig[b][0] == SbpParallel::Split(0)) v -= 1;
    }
  }
  return v;
}

// Sum over inputs in declared order (SPEC.md §2 table).
double CrudeCopyCost(const SelectionInput& in, const NdSbpSignature& sig) {
  double total = 0;
  for (int b = 0; b < in.prepared.call->num_inputs(); ++b) {
    total += OneFlow1DCopyCost(in.request.inputs[b].nd_sbp()[0], sig[b][0],
                               static_cast<double>(in.prepared.input_descs[b].byte_size()));
  }
  return total;
}

void Explain1D(const SelectionInput& in, const std::vector<Ranked1D>& ranked,
               ExplainRecorder& explain) {
  const OpCall& call = *in.prepared.call;
  const Ranked1D& best = ranked.front();
  for (size_t r = 0; r < ranked.size(); ++r) {
    const int id = in.survivors[ranked[r].position];
    CandidateRecord& rec = explain.record(id);
    rec.order_value = ranked[r].order;
    rec.copy_cost = CopyCost(ranked[r].cost);
    for (int b = 0; b < call.num_inputs(); ++b) {
      if (in.request.inputs[b].nd_sbp()[0] != in.all[id][b][0]) ++rec.mismatched_inputs;
    }
    std::string note;
    if (ranked.size() == 1) {
      note = "only candidate left";
    } else if (r > 0) {
      note = ranked[r].order != best.order
                 ? absl::StrCat("order value ", ranked[r].order, " > ", best.order)
             : ranked[r].cost != best.cost
                 ? absl::StrCat("copy cost ", ranked[r].cost, " > ", best.cost)
                 : "tie; an earlier candidate wins";
    }
    explain.Rank(id, static_cast<int>(r) + 1,
                 r == 0 ? CandidateStatus::kChosen : CandidateStatus::kRanked, std::move(note));
  }
}

// ---------------------------------------------------------------------------
// N-D (SPEC.md §3 step 7)
// ---------------------------------------------------------------------------

struct NdEvaluation {
  CopyCost cost;
  // Sum of OneFlow's input priorities; 0 with all inputs matching.
  int priority_sum = 0;
  bool all_equal = true;
  int mismatched = 0;
};

// A small open-addressing map from a packed NdSbp to its cost: one
// allocation per input and inference, no per-entry nodes, no rehash of a
// general-purpose map for a few dozen or hundred keys.
class LayoutCostTable {
 public:
  const CopyCost* Find(uint64_t key) const {
    for (size_t i = Home(key);; i = (i + 1) & (slots_.size() - 1)) {
      if (!slots_[i].used) return nullptr;
      if (slots_[i].key == key) return &slots_[i].cost;
    }
  }
  // Requires Find(key) == nullptr.
  void Add(uint64_t key, CopyCost cost) {
    if (2 * (count_ + 1) > slots_.size()) Grow();
    size_t i = Home(key);
    while (slots_[i].used) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = Slot{key, cost, true};
    ++count_;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    CopyCost cost;
    bool used = false;
  };
  size_t Home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(32, 2 * old.size()), Slot());
    count_ = 0;
    for (const Slot& s : old) {
      if (s.used) Add(s.key, s.cost);
    }
  }
  std::vector<Slot> slots_ = std::vector<Slot>(32);
  size_t count_ = 0;
};

// Costs of one input's conversions, memoised by wanted layout: the product
// repeats each list entry many times.
class NdCostMemo {
 public:
  explicit NdCostMemo(const SelectionInput& in)
      : in_(in), memo_(in.prepared.call->num_inputs()) {}

  absl::StatusOr<CopyCost> Cost(int b, const NdSbp& wanted) {
    // All NdSbps here have the hierarchy's length, so packed() is a full key.
    const uint64_t key = wanted.packed();
    if (const CopyCost* known = memo_[b].Find(key)) return *known;
    const absl::Span<const int64_t> h = in_.request.placement.hierarchy();
    const TensorDesc& d = in_.prepared.input_descs[b];
    absl::StatusOr<CopyCost> c = OneFlowEagerNdCost(
        in_.request.inputs[b].nd_sbp(), wanted, h, h, /*same_devices=*/true, d.shape,
        static_cast<double>(d.byte_size()), in_.prepared.call->is_mutable_input(b),
        in_.request.cost.partial_penalty);
    if (!c.ok()) {
      return absl::InternalError(absl::StrCat(in_.prepared.call->type_name(), ": ",
                                              in_.prepared.call->bn(b), ": ",
                                              c.status().message()));
    }
    memo_[b].Add(key, *c);
    return *c;
  }

 private:
  const SelectionInput& in_;
  std::vector<LayoutCostTable> memo_;
};

// Priority (SPEC.md §3): matching inputs 0; a mutable input that needs real
// boxing may not be boxed (2), one that only differs before reduction 1;
// any other mismatch 1.
InputPriority PriorityOf(const SelectionInput& in, int b, const NdSbp& wanted) {
  const NdSbp& producer = in.request.inputs[b].nd_sbp();
  if (producer == wanted) return InputPriority::kMatches;
  if (!in.prepared.call->is_mutable_input(b)) return InputPriority::kNeedsBoxing;
  const absl::Span<const int64_t> h = in.request.placement.hierarchy();
  const InOutReduced r = InOutReduce(h, h, producer, wanted, in.prepared.input_descs[b].shape);
  return r.in == r.out && r.in_hierarchy == r.out_hierarchy ? InputPriority::kNeedsBoxing
                                                            : InputPriority::kMayNotBox;
}

absl::StatusOr<NdEvaluation> EvaluateNd(const SelectionInput& in, const NdSbpSignature& sig,
                                        NdCostMemo& memo) {
  NdEvaluation e;
  for (int b = 0; b < in.prepared.call->num_inputs(); ++b) {
    const bool equal = in.request.inputs[b].nd_sbp() == sig[b];
    e.all_equal = e.all_equal && equal;
    if (!equal) ++e.mismatched;
    const InputPriority priority = PriorityOf(in, b, sig[b]);
    e.priority_sum += static_cast<int>(priority);
    if (priority == InputPriority::kMayNotBox) {
      e.cost = CopyCost::Unsupported();
      break;
    }
    OFS_ASSIGN_OR_RETURN(CopyCost c, memo.Cost(b, sig[b]));
    e.cost += c;
  }
  return e;
}

absl::Status NoAvailableSignature(const SelectionInput& in) {
  const OpCall& call = *in.prepared.call;
  std::vector<std::string> sigs;
  for (int id : in.survivors) sigs.push_back(SignatureToString(call, in.all[id]));
  std::vector<std::string> ins;
  for (int b = 0; b < call.num_inputs(); ++b) {
    ins.push_back(absl::StrCat(call.bn(b), ":", CompactNdSbpString(in.request.inputs[b].nd_sbp())));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "op: `", call.type_name(), "` can't find available sbp signature; inputs ",
      absl::StrJoin(ins, " "), "; candidates: ", absl::StrJoin(sigs, " | ")));
}

std::string NdNote(int k, int chosen, const std::vector<NdEvaluation>& evals) {
  const NdEvaluation& c = evals[chosen];
  const bool chosen_matches = c.cost.supported() && c.cost.value() == 0 && c.mismatched == 0;
  if (k == chosen) {
    return chosen_matches ? "keeps every input as produced (first such candidate)"
                          : "least copy cost (the latest of equal costs)";
  }
  const CopyCost cost = evals[k].cost;
  if (!cost.supported()) return "an input may not be boxed";
  if (chosen_matches) return "needs boxing; a candidate keeping every input exists";
  if (k < chosen && cost.value() == c.cost.value()) {
    return "ties a later candidate, which OneFlow keeps";
  }
  return absl::StrCat("copy cost ", cost.value(), " > ", c.cost.value());
}

// Display rank: chosen first, then by cost (unsupported last), then
// final-list position.
void ExplainNd(const SelectionInput& in, int chosen, const std::vector<NdEvaluation>& evals,
               ExplainRecorder& explain) {
  std::vector<int> order(evals.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if ((a == chosen) != (b == chosen)) return a == chosen;
    return evals[a].cost.ValueOrFltMax() < evals[b].cost.ValueOrFltMax();
  });
  for (size_t r = 0; r < order.size(); ++r) {
    const int k = order[r];
    const int id = in.survivors[k];
    CandidateRecord& rec = explain.record(id);
    rec.copy_cost = evals[k].cost;
    rec.mismatched_inputs = evals[k].mismatched;
    rec.final_position = k;
    explain.Rank(id, static_cast<int>(r) + 1,
                 k == chosen ? CandidateStatus::kChosen : CandidateStatus::kRanked,
                 NdNote(k, chosen, evals));
  }
}

}  // namespace

// ---------------------------------------------------------------------------

const StageRules& OneFlow1DSelection::rules() const {
  static const StageRules rules{
      CandidateSource{/*deduplicate=*/false, /*run_nd_hook=*/false, CandidateSet::kOneFlow},
      FilterRules{Removal::kKeepOrder, /*shape_checks_outputs=*/false,
                  /*constraints_check_outputs=*/true, /*per_dim_shape_notes=*/true}};
  return rules;
}

absl::Status OneFlow1DSelection::EmptyAfterFiltering(const SelectionInput& in) const {
  const OpCall& call = *in.prepared.call;
  std::vector<std::string> sigs;
  for (const NdSbpSignature& sig : in.all) sigs.push_back(SignatureToString(call, sig));
  return absl::InvalidArgumentError(absl::StrCat(
      call.type_name(), ": no candidate satisfies the constraints ",
      ConstraintsToString(in.prepared), "; candidates: ", absl::StrJoin(sigs, " | ")));
}

absl::StatusOr<int> OneFlow1DSelection::Choose(const SelectionInput& in,
                                               ExplainRecorder& explain) const {
  if (in.survivors.size() == 1 && !explain.enabled()) return 0;
  std::vector<Ranked1D> ranked;
  ranked.reserve(in.survivors.size());
  for (size_t i = 0; i < in.survivors.size(); ++i) {
    const NdSbpSignature& sig = in.all[in.survivors[i]];
    ranked.push_back(Ranked1D{static_cast<int>(i), OrderValue(in, sig), CrudeCopyCost(in, sig)});
  }
  // Total order: order value, then copy cost, then emission order. OneFlow
  // uses std::sort, which libstdc++ makes stable for <= 16 elements; we
  // always sort stably, so ties go to the earlier candidate (SPEC.md §2).
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked1D& a, const Ranked1D& b) {
    if (a.order != b.order) return a.order < b.order;
    return a.cost < b.cost;
  });
  if (explain.enabled()) Explain1D(in, ranked, explain);
  return ranked.front().position;
}

const StageRules& OneFlowNdSelection::rules() const {
  static const StageRules rules{
      CandidateSource{/*deduplicate=*/false, /*run_nd_hook=*/true, CandidateSet::kOneFlow},
      FilterRules{Removal::kSwapWithLast, /*shape_checks_outputs=*/false,
                  /*constraints_check_outputs=*/false, /*per_dim_shape_notes=*/false}};
  return rules;
}

absl::Status OneFlowNdSelection::EmptyAfterFiltering(const SelectionInput& in) const {
  return EmptySignatureListError(in);
}

// OneFlow's default rule (SBP_INFER_RULE_TAG = 1), as released in 0.9.0
// (operator.cpp, GreedilyFindMinCopyCostNdSbp). A candidate whose inputs
// all match wins at once; otherwise the least cost wins, and of equal
// costs the latest in the final list (`<=`, no tolerance). Real OneFlow
// 0.9.0 confirms it (tests/testdata/oneflow_oracle_golden.txt). With explain, every candidate is costed
// (the choice is the same).
absl::StatusOr<int> OneFlowNdSelection::Choose(const SelectionInput& in,
                                               ExplainRecorder& explain) const {
  if (in.survivors.size() == 1 && !explain.enabled()) return 0;
  NdCostMemo memo(in);
  std::vector<NdEvaluation> evals;
  int chosen = -1;
  int best = -1;
  double best_cost = kMaxValidCost;
  for (size_t k = 0; k < in.survivors.size() && (chosen < 0 || explain.enabled()); ++k) {
    OFS_ASSIGN_OR_RETURN(NdEvaluation e, EvaluateNd(in, in.all[in.survivors[k]], memo));
    evals.push_back(e);
    if (chosen >= 0) continue;  // explain mode: costs only
    if (e.all_equal && e.priority_sum == 0) {
      chosen = static_cast<int>(k);
    } else if (e.cost.supported() && e.cost.value() <= best_cost) {
      // OneFlow 0.9.0's `total_copy_cost <= min_copy_cost`, exactly: of
      // equal costs the LATEST candidate in the final list wins.
      best = static_cast<int>(k);
      best_cost = e.cost.value();
    }
  }
  if (chosen < 0) chosen = best;
  if (chosen < 0) return NoAvailableSignature(in);
  if (explain.enabled()) ExplainNd(in, chosen, evals, explain);
  return chosen;
}

const std::shared_ptr<const OneFlow1DSelection>& OneFlow1D() {
  static const auto* policy =
      new std::shared_ptr<const OneFlow1DSelection>(std::make_shared<OneFlow1DSelection>());
  return *policy;
}

const std::shared_ptr<const OneFlowNdSelection>& OneFlowNd() {
  static const auto* policy =
      new std::shared_ptr<const OneFlowNdSelection>(std::make_shared<OneFlowNdSelection>());
  return *policy;
}

std::shared_ptr<const SelectionPolicy> OneFlowSelectionFor(const Placement& placement) {
  if (placement.num_axes() == 1) return OneFlow1D();
  return OneFlowNd();
}

absl::Status EmptySignatureListError(const SelectionInput& in) {
  const PreparedRequest& p = in.prepared;
  return absl::InvalidArgumentError(absl::StrCat(
      "Empty sbp signature after filtering for ", p.call->type_name(), " on ",
      in.request.placement.ToString(),
      p.has_constraints ? absl::StrCat(" with constraints ", ConstraintsToString(p))
                        : std::string()));
}

}  // namespace oneflow_sbp
