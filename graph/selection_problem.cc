#include "graph/selection_problem.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/inference/candidate_stages.h"
#include "oneflow_sbp/inference/explain_recorder.h"
#include "graph/compute_model.h"
#include "graph/kernel_collectives.h"
#include "oneflow_sbp/inference/policy_name.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::graph {
namespace {

absl::Status Named(const ProgramOp& op, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(op.label, ": ", s.message()));
}

absl::StatusOr<std::vector<NdSbpSignature>> OpCandidates(const Program& program,
                                                         const ProgramOp& op, engine::Engine& engine) {
  InferRequest req;
  req.op = op.call;
  req.placement = program.placement();
  req.cost.policy = PolicyName::Planned();
  const NdSbp all_b = NdSbp::Repeat(SbpParallel::Broadcast(), program.placement().num_axes());
  for (int t : op.inputs) req.inputs.emplace_back(program.tensors()[t].desc, all_b);
  absl::StatusOr<PreparedRequest> p = PrepareRequest(req);
  if (!p.ok()) return Named(op, p.status());
  OFS_ASSIGN_OR_RETURN(engine::Engine::PolicyPtr policy,
       engine.SelectionPolicyFor(PolicyName::Planned(), program.placement()));
  const StageRules& rules = policy->rules();
  absl::StatusOr<std::vector<NdSbpSignature>> all = ExpandCandidates(req, *p, rules.source);
  if (!all.ok()) return Named(op, all.status());
  std::vector<int> survivors = AllIds(*all);
  ExplainRecorder explain(false, *all);
  FilterByShape(req, *p, *all, rules.filters, &survivors, explain);
  std::vector<NdSbpSignature> out;
  out.reserve(survivors.size());
  for (int id : survivors) out.push_back((*all)[id]);
  return out;
}

// B or S(d) on each mesh axis, first axis slowest, fitting the shape.
std::vector<NdSbp> FreeLayouts(const Shape& shape, absl::Span<const int64_t> hierarchy) {
  const int axes = static_cast<int>(hierarchy.size());
  const int options = shape.rank() + 1;  // B, S(0), ..., S(rank-1)
  std::vector<NdSbp> out;
  std::vector<int> digit(axes, 0);
  while (true) {
    NdSbp nd = NdSbp::Repeat(SbpParallel::Broadcast(), axes);
    for (int i = 0; i < axes; ++i) {
      if (digit[i] > 0) nd.set(i, SbpParallel::Split(digit[i] - 1));
    }
    if (IsSplittable(shape, nd, hierarchy)) out.push_back(nd);
    int i = axes - 1;
    while (i >= 0 && ++digit[i] == options) digit[i--] = 0;
    if (i < 0) break;
  }
  return out;
}

// The distinct values of `layouts`, in first-seen order, and each entry's
// index among them.
struct Distinct {
  std::vector<NdSbp> values;
  std::vector<int> index;
};
Distinct MakeDistinct(const std::vector<NdSbp>& layouts) {
  Distinct d;
  absl::flat_hash_map<NdSbp, int> seen;
  for (const NdSbp& nd : layouts) {
    auto [it, inserted] = seen.emplace(nd, static_cast<int>(d.values.size()));
    if (inserted) d.values.push_back(nd);
    d.index.push_back(it->second);
  }
  return d;
}

std::vector<NdSbp> BlobLayouts(const std::vector<NdSbpSignature>& candidates, int blob) {
  std::vector<NdSbp> out;
  out.reserve(candidates.size());
  for (const NdSbpSignature& sig : candidates) out.push_back(sig[blob]);
  return out;
}

// A table of boxing prices: one tensor from each of `from` to each of
// `to` (row-major). Reads with equal keys (the same tensor shape between
// the same candidate layouts, e.g. in every layer of a stack) share one.
struct TableKey {
  TensorDesc desc;
  std::vector<NdSbp> from;
  std::vector<NdSbp> to;
  // Reads of a mutable input blob: boxing is infeasible.
  bool mutable_input = false;
  // A program output: `to` is ignored, each `from` goes to its target.
  const ProgramOutput* output = nullptr;
  friend bool operator==(const TableKey& a, const TableKey& b) {
    return a.mutable_input == b.mutable_input && a.output == b.output && a.from == b.from &&
           a.to == b.to && a.desc == b.desc;
  }
  template <typename H>
  friend H AbslHashValue(H h, const TableKey& k) {
    return H::combine(std::move(h), k.desc, k.from, k.to, k.mutable_input, k.output);
  }
};

// Pairs of a table, in row-major order: (from, to) with from != to.
template <typename F>
void ForEachPair(const TableKey& k, F f) {
  if (k.output != nullptr) {
    for (size_t i = 0; i < k.from.size(); ++i) f(i, k.from[i], OutputTarget(*k.output, k.from[i]));
    return;
  }
  for (size_t i = 0; i < k.from.size(); ++i) {
    for (size_t j = 0; j < k.to.size(); ++j) f(i * k.to.size() + j, k.from[i], k.to[j]);
  }
}

// Prices a table from the memo; unsupported pairs cost +infinity.
absl::StatusOr<std::vector<double>> PriceTable(const TableKey& k, BoxingPrices& prices) {
  std::vector<double> table(k.output != nullptr ? k.from.size() : k.from.size() * k.to.size(), 0);
  absl::Status status;
  ForEachPair(k, [&](size_t i, const NdSbp& from, const NdSbp& to) {
    if (!status.ok() || from == to) return;
    if (k.mutable_input) {
      table[i] = kInfeasible;
      return;
    }
    absl::StatusOr<double> t = prices.Time(k.desc, from, to);
    if (t.ok()) {
      table[i] = *t;
    } else {
      status = t.status();
    }
  });
  OFS_RETURN_IF_ERROR(status);
  return table;
}

// The layouts a tensor's owner gives it per candidate (a producer op's
// output blob, or a free tensor's layouts).
std::vector<NdSbp> OwnerLayouts(const Program& program, const std::vector<int>& free_node,
                                const SelectionProblem& p, int t) {
  const ProgramTensor& tensor = program.tensors()[t];
  if (tensor.role == TensorRole::kFixed) return {tensor.nd_sbp};
  if (tensor.role == TensorRole::kActivation) {
    return BlobLayouts(p.op_candidates[tensor.producer], tensor.producer_blob);
  }
  return p.free_layouts[free_node[t] - p.num_ops];
}

// The node of a tensor's owner: its producer op, or its free-tensor node.
int OwnerNode(const Program& program, const std::vector<int>& free_node, int t) {
  const ProgramTensor& tensor = program.tensors()[t];
  return tensor.role == TensorRole::kActivation ? tensor.producer : free_node[t];
}

// A read or an output as (key, from index per owner candidate, to index
// per reader candidate, reader or -1, tensor).
struct Use {
  int key;
  std::vector<int> from_index;
  std::vector<int> to_index;
  int reader;
  int tensor;
};

// Every read and output, and the distinct tables they price (`keys`, in
// first-use order, which Use::key indexes).
struct BoxingUses {
  std::vector<TableKey> keys;
  std::vector<Use> uses;
};

BoxingUses ListBoxingUses(const Program& program, const std::vector<int>& free_node,
                          const SelectionProblem& p) {
  BoxingUses out;
  absl::flat_hash_map<TableKey, int> key_ids;
  auto add_use = [&](TableKey key, Distinct from, Distinct to, int reader, int tensor) {
    auto [it, inserted] = key_ids.emplace(key, static_cast<int>(out.keys.size()));
    if (inserted) out.keys.push_back(std::move(key));
    out.uses.push_back(Use{it->second, std::move(from.index), std::move(to.index), reader, tensor});
  };
  for (int v = 0; v < p.num_ops; ++v) {
    const ProgramOp& op = program.ops()[v];
    for (int b = 0; b < op.call->num_inputs(); ++b) {
      const int t = op.inputs[b];
      Distinct from = MakeDistinct(OwnerLayouts(program, free_node, p, t));
      Distinct to = MakeDistinct(BlobLayouts(p.op_candidates[v], b));
      TableKey key{program.tensors()[t].desc, from.values, to.values, op.call->is_mutable_input(b),
                   nullptr};
      add_use(std::move(key), std::move(from), std::move(to), v, t);
    }
  }
  for (const ProgramOutput& output : program.outputs()) {
    Distinct from = MakeDistinct(OwnerLayouts(program, free_node, p, output.tensor));
    TableKey key{program.tensors()[output.tensor].desc, from.values, {}, false, &output};
    add_use(std::move(key), std::move(from), Distinct(), -1, output.tensor);
  }
  return out;
}

// Prices every pair of every table at once on `threads` threads, then
// reads each table from the memo.
absl::StatusOr<std::vector<std::vector<double>>> PriceTables(const std::vector<TableKey>& keys,
                                                             BoxingPrices& prices, int threads) {
  std::vector<BoxingPrices::Request> requests;
  for (const TableKey& k : keys) {
    if (k.mutable_input) continue;
    ForEachPair(k, [&](size_t, const NdSbp& from, const NdSbp& to) {
      if (from != to) requests.push_back({k.desc, from, to});
    });
  }
  absl::Status priced = prices.Prefetch(requests, threads);
  OFS_RETURN_IF_ERROR(priced);
  std::vector<std::vector<double>> tables;
  for (const TableKey& k : keys) {
    OFS_ASSIGN_OR_RETURN(std::vector<double> table, PriceTable(k, prices));
    tables.push_back(std::move(table));
  }
  return tables;
}

// The bytes of the copy each pair of a table materialises (CopyBytes),
// laid out as PriceTable lays out times.
std::vector<double> CopyTable(const TableKey& k, absl::Span<const int64_t> hierarchy) {
  std::vector<double> table(k.output != nullptr ? k.from.size() : k.from.size() * k.to.size(), 0);
  ForEachPair(k, [&](size_t i, const NdSbp& from, const NdSbp& to) {
    table[i] = static_cast<double>(CopyBytes(k.desc, from, to, hierarchy));
  });
  return table;
}

// Adds each use's table to `graph` (and the part no choice changes to
// `constant`): a fixed tensor's into the reader's unary costs (a program
// output's into the constant), other outputs into the owner's unary
// costs, other reads onto the edge from the owner node to the reader.
template <typename T>
void AddUseCosts(const Program& program, const std::vector<int>& free_node,
                 const BoxingUses& boxing, const std::vector<std::vector<double>>& tables,
                 CostGraph& graph, T& constant) {
  for (const Use& use : boxing.uses) {
    const std::vector<double>& table = tables[use.key];
    const ProgramTensor& tensor = program.tensors()[use.tensor];
    if (use.reader < 0) {  // a program output
      if (tensor.role == TensorRole::kFixed) {
        constant += static_cast<T>(table[0]);
        continue;
      }
      std::vector<double>& unary = graph.mutable_unary(OwnerNode(program, free_node, use.tensor));
      for (size_t c = 0; c < unary.size(); ++c) unary[c] += table[use.from_index[c]];
      continue;
    }
    const size_t width = boxing.keys[use.key].to.size();
    if (tensor.role == TensorRole::kFixed) {
      std::vector<double>& unary = graph.mutable_unary(use.reader);
      for (size_t c = 0; c < unary.size(); ++c) unary[c] += table[use.to_index[c]];
      continue;
    }
    const size_t ku = use.from_index.size(), kv = use.to_index.size();
    std::vector<double> cost(ku * kv);
    for (size_t cu = 0; cu < ku; ++cu) {
      const double* row = &table[use.from_index[cu] * width];
      for (size_t cv = 0; cv < kv; ++cv) cost[cu * kv + cv] = row[use.to_index[cv]];
    }
    graph.AddEdgeCost(OwnerNode(program, free_node, use.tensor), use.reader, cost);
  }
}

// The boxing part of the costs: every read (a fixed tensor's into the
// reader's unary costs, others onto the edge from the owner node) and
// every program output (into the owner's unary costs), in time and in the
// memory of the copies. Tables are listed first and their pairs priced at
// once on `threads` threads. The memory graph gets its edges by the same
// calls in the same order as the time graph, so they line up.
absl::Status AddBoxingCosts(const Program& program, const std::vector<int>& free_node,
                            BoxingPrices& prices, int threads, SelectionProblem& p) {
  const BoxingUses boxing = ListBoxingUses(program, free_node, p);
  OFS_ASSIGN_OR_RETURN(std::vector<std::vector<double>> tables, PriceTables(boxing.keys, prices,
      threads));
  AddUseCosts(program, free_node, boxing, tables, p.graph, p.constant_time_s);
  std::vector<std::vector<double>> copies;
  for (const TableKey& k : boxing.keys) {
    copies.push_back(CopyTable(k, program.placement().hierarchy()));
  }
  AddUseCosts(program, free_node, boxing, copies, p.memory, p.fixed_memory_bytes);
  return absl::OkStatus();
}

}  // namespace

int64_t SelectionProblem::PeakBytes(absl::Span<const int> choice) const {
  // Whole numbers of bytes far below 2^53: the double sum is exact.
  return fixed_memory_bytes + static_cast<int64_t>(memory.Objective(choice));
}

Assignment SelectionProblem::ToAssignment(absl::Span<const int> choice) const {
  Assignment a;
  for (int i = 0; i < num_ops; ++i) a.op_signatures.push_back(op_candidates[i][choice[i]]);
  for (size_t j = 0; j < free_tensors.size(); ++j) {
    a.free_layouts.push_back(free_layouts[j][choice[num_ops + j]]);
  }
  return a;
}

absl::StatusOr<std::vector<int>> SelectionProblem::ToChoice(const Program& program,
                                                            const Assignment& a) const {
  std::vector<int> choice;
  for (int i = 0; i < num_ops; ++i) {
    int found = -1;
    for (size_t c = 0; c < op_candidates[i].size() && found < 0; ++c) {
      if (op_candidates[i][c] == a.op_signatures[i]) found = static_cast<int>(c);
    }
    if (found < 0) {
      const ProgramOp& op = program.ops()[i];
      return absl::NotFoundError(absl::StrCat(
          op.label, ": signature ", SignatureToString(*op.call, a.op_signatures[i]),
          " is not a candidate"));
    }
    choice.push_back(found);
  }
  for (size_t j = 0; j < free_tensors.size(); ++j) {
    int found = -1;
    for (size_t l = 0; l < free_layouts[j].size() && found < 0; ++l) {
      if (free_layouts[j][l] == a.free_layouts[j]) found = static_cast<int>(l);
    }
    if (found < 0) {
      return absl::NotFoundError(absl::StrCat("free tensor '",
                                              program.tensors()[free_tensors[j]].name,
                                              "': layout ", a.free_layouts[j].ToString(),
                                              " is not a candidate"));
    }
    choice.push_back(found);
  }
  return choice;
}

absl::StatusOr<SelectionProblem> BuildSelectionProblem(
    const Program& program, BoxingPrices& prices, absl::Span<const NdSbpSignature> required,
    int threads) {
  SelectionProblem p;
  p.num_ops = static_cast<int>(program.ops().size());
  p.free_tensors = program.FreeTensors();
  const absl::Span<const int64_t> hierarchy = program.placement().hierarchy();
  const boxing::Calibration& calibration = prices.engine().calibration();

  // Nodes: ops with their compute time, then free tensors.
  for (int i = 0; i < p.num_ops; ++i) {
    const ProgramOp& op = program.ops()[i];
    OFS_ASSIGN_OR_RETURN(std::vector<NdSbpSignature> cands, OpCandidates(program, op,
        prices.engine()));
    p.stage_candidates.push_back(static_cast<int>(cands.size()));
    if (!required.empty()) {
      bool present = false;
      for (const NdSbpSignature& s : cands) present = present || s == required[i];
      if (!present) cands.push_back(required[i]);
    }
    std::vector<TensorDesc> descs;
    for (int t : op.inputs) descs.push_back(program.tensors()[t].desc);
    for (int t : op.outputs) descs.push_back(program.tensors()[t].desc);
    std::vector<double> unary;
    std::vector<double> memory;
    for (const NdSbpSignature& sig : cands) {
      double time = EstimateOpWork(*op.call, descs, sig, hierarchy, calibration).time_s;
      // The kernel's own collectives under this candidate (kernel_collectives.h),
      // as EvaluateAssignment counts them.
      for (const BoxingPrices::Request& r : KernelCollectives(*op.call, descs, sig)) {
        OFS_ASSIGN_OR_RETURN(double t, prices.Time(r.desc, r.from, r.to));
        time += t;
      }
      unary.push_back(time);
      int64_t bytes = 0;
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        bytes += LocalBytes(descs[op.inputs.size() + o], sig[op.inputs.size() + o], hierarchy);
      }
      memory.push_back(static_cast<double>(bytes));
    }
    p.graph.AddNode(std::move(unary));
    p.memory.AddNode(std::move(memory));
    p.op_candidates.push_back(std::move(cands));
  }
  for (int t : p.free_tensors) {
    const TensorDesc& desc = program.tensors()[t].desc;
    std::vector<NdSbp> layouts = FreeLayouts(desc.shape, hierarchy);
    std::vector<double> memory;
    for (const NdSbp& nd : layouts) {
      memory.push_back(static_cast<double>(LocalBytes(desc, nd, hierarchy)));
    }
    p.graph.AddNode(std::vector<double>(layouts.size(), 0.0));
    p.memory.AddNode(std::move(memory));
    p.free_layouts.push_back(std::move(layouts));
  }
  std::vector<int> free_node(program.tensors().size(), -1);
  for (size_t j = 0; j < p.free_tensors.size(); ++j) {
    free_node[p.free_tensors[j]] = p.num_ops + static_cast<int>(j);
  }
  for (const ProgramTensor& t : program.tensors()) {
    if (t.role == TensorRole::kFixed) p.fixed_memory_bytes += LocalBytes(t.desc, t.nd_sbp, hierarchy);
  }

  absl::Status boxing = AddBoxingCosts(program, free_node, prices, threads, p);
  OFS_RETURN_IF_ERROR(boxing);
  return p;
}

}  // namespace oneflow_sbp::graph
