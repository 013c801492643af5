#include "graph/program_plan_format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"

namespace oneflow_sbp::graph {

std::string FormatSeconds(double s) {
  if (!std::isfinite(s)) return "unsupported";
  if (s == 0) return "0 s";
  if (s < 1e-3) return absl::StrFormat("%.1f us", s * 1e6);
  if (s < 1) return absl::StrFormat("%.3f ms", s * 1e3);
  return absl::StrFormat("%.3f s", s);
}

std::string FormatBytes(int64_t b) {
  if (b < 1024) return absl::StrCat(b, " B");
  const double d = static_cast<double>(b);
  if (b < (int64_t{1} << 20)) return absl::StrFormat("%.1f KiB", d / 1024);
  if (b < (int64_t{1} << 30)) return absl::StrFormat("%.1f MiB", d / (1 << 20));
  return absl::StrFormat("%.2f GiB", d / (1 << 30));
}

namespace {

std::string Producer(const Program& program, int tensor) {
  const ProgramTensor& t = program.tensors()[tensor];
  if (t.producer < 0) return absl::StrCat(TensorRoleName(t.role), " ", t.name);
  const ProgramOp& op = program.ops()[t.producer];
  return absl::StrCat(op.label, ".", op.call->bn(t.producer_blob));
}

std::string Consumer(const Program& program, const BoxingEdge& e) {
  if (e.consumer < 0) return "output";
  const ProgramOp& op = program.ops()[e.consumer];
  return absl::StrCat(op.label, ".", op.call->bn(e.blob));
}

// The caveat after "N boxing plans priced" when some were priced without
// p2p exchanges.
std::string WithoutExchanges(const ProgramPlan& plan) {
  const int64_t k = plan.boxing_plans_without_exchanges;
  if (k == 0) return "";
  const std::string why = "no p2p exchange priced: one might be cheaper";
  if (k >= plan.boxing_plans) return absl::StrCat(" by collectives alone (", why, ")");
  return absl::StrCat(" (", k, " by collectives alone: ", why, ")");
}

}  // namespace

std::string ProgramPlanToText(const Program& program, const ProgramPlan& plan) {
  std::string out;
  const std::vector<int> free = program.FreeTensors();
  int fixed = 0;
  for (const ProgramTensor& t : program.tensors()) fixed += t.role == TensorRole::kFixed ? 1 : 0;
  absl::StrAppend(&out, "program: ", program.ops().size(), " ops, ", fixed, " fixed and ",
                  free.size(), " free tensors on ", program.placement().ToString(), "\n");
  size_t width = 0;
  for (const ProgramOp& op : program.ops()) width = std::max(width, op.label.size());
  absl::StrAppend(&out, "\nops (chosen signature; the eager greedy one below where it differs)\n");
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const ProgramOp& op = program.ops()[i];
    absl::StrAppendFormat(&out, "  %-*s  %s   [%s, %d candidates]\n", static_cast<int>(width),
                          op.label, SignatureToString(*op.call, plan.chosen.op_signatures[i]),
                          FormatSeconds(plan.costs.op_work[i].time_s), plan.num_candidates[i]);
    if (plan.greedy.op_signatures[i] != plan.chosen.op_signatures[i]) {
      absl::StrAppendFormat(&out, "  %-*s  greedy: %s\n", static_cast<int>(width), "",
                            SignatureToString(*op.call, plan.greedy.op_signatures[i]));
    }
  }
  if (!free.empty()) {
    absl::StrAppend(&out, "\nfree tensors (chosen layout; greedy keeps them all-B)\n");
    for (size_t j = 0; j < free.size(); ++j) {
      const ProgramTensor& t = program.tensors()[free[j]];
      absl::StrAppendFormat(&out, "  %-12s %-20s %s\n", t.name, t.desc.ToString(),
                            plan.chosen.free_layouts[j].ToString());
    }
  }
  absl::StrAppend(&out, "\nboxing\n");
  int boxed = 0;
  for (const BoxingEdge& e : plan.costs.edges) {
    if (e.from == e.to) continue;
    ++boxed;
    absl::StrAppendFormat(&out, "  %s: %s -> %s  %s -> %s  %s  %s, %s\n",
                          program.tensors()[e.tensor].name, Producer(program, e.tensor),
                          Consumer(program, e), e.from.ToString(), e.to.ToString(),
                          e.price.summary, FormatBytes(e.price.bytes),
                          FormatSeconds(e.price.time_s));
  }
  if (boxed == 0) absl::StrAppend(&out, "  none: every read finds the layout it asks for\n");
  const ProgramCosts& c = plan.costs;
  const ProgramCosts& g = plan.greedy_costs;
  absl::StrAppendFormat(&out, "\n%-22s %-16s %s\n", "totals (per rank)", "planned",
                        "eager greedy");
  auto row = [&out](const char* what, const std::string& a, const std::string& b) {
    absl::StrAppendFormat(&out, "  %-20s %-16s %s\n", what, a, b);
  };
  row("total time", FormatSeconds(c.total_time_s), FormatSeconds(g.total_time_s));
  row("communication", FormatSeconds(c.comm_time_s), FormatSeconds(g.comm_time_s));
  row("bytes moved (all)", FormatBytes(c.comm_bytes), FormatBytes(g.comm_bytes));
  row("compute", FormatSeconds(c.compute_time_s), FormatSeconds(g.compute_time_s));
  row("peak memory", FormatBytes(c.peak_memory_bytes), FormatBytes(g.peak_memory_bytes));
  if (c.total_time_s > 0 && std::isfinite(g.total_time_s)) {
    absl::StrAppendFormat(&out, "  speed-up over greedy: %.2fx\n", g.total_time_s / c.total_time_s);
  }
  const SolverStats& s = plan.stats;
  absl::StrAppendFormat(&out,
                        "\nsolver: %d nodes, %d edges; eliminated %d leaves, %d chains, %d "
                        "isolated; core %d nodes (%g choices); %s; %d boxing plans priced%s; %s\n",
                        s.nodes, s.edges, s.reduction.leaves, s.reduction.chains,
                        s.reduction.isolated, s.core_nodes, s.core_product,
                        s.exact ? "exact" : "fell back to local search (core too large to enumerate; not proven optimal)",
                        plan.boxing_plans, WithoutExchanges(plan),
                        FormatSeconds(plan.seconds));
  if (plan.memory_price_s_per_byte > 0) {
    absl::StrAppendFormat(&out, "memory cap met by pricing memory at %g s/byte (%d priced solves)\n",
                          plan.memory_price_s_per_byte, plan.priced_solves);
  }
  return out;
}

std::string TrainingPlanToText(const TrainingStepInfo& step, const ProgramPlan& plan) {
  const Program& program = step.program;
  int updates = 0;
  for (const TrainingStepInfo::Parameter& p : step.parameters) updates += p.update_op >= 0;
  std::string out = absl::StrFormat(
      "\ntraining step: %d forward ops (with the loss seed), %d backward ops, %d updates; "
      "loss %s\n",
      step.num_forward_ops, step.num_backward_ops, updates, program.tensors()[step.loss].name);
  const StepMemory c = StepMemoryPerRank(program, plan.chosen, step.kinds);
  const StepMemory g = StepMemoryPerRank(program, plan.greedy, step.kinds);
  absl::StrAppendFormat(&out, "%-22s %-16s %s\n", "memory (per rank)", "planned", "eager greedy");
  for (int k = 0; k < StepMemory::kKinds; ++k) {
    const StepTensorKind kind = static_cast<StepTensorKind>(k);
    absl::StrAppendFormat(&out, "  %-20s %-16s %s\n", StepTensorKindName(kind),
                          FormatBytes(c.of(kind)), FormatBytes(g.of(kind)));
  }
  absl::StrAppendFormat(&out, "  %-20s %-16s %s\n", "(boxed copies)",
                        FormatBytes(c.total_copies()), FormatBytes(g.total_copies()));
  const StrategyReport chosen = ClassifyStrategy(step, plan.chosen);
  const StrategyReport greedy = ClassifyStrategy(step, plan.greedy);
  absl::StrAppendFormat(&out, "strategy: %s (per mesh axis: %s); greedy: %s\n", chosen.name,
                        absl::StrJoin(chosen.per_axis, ", "), greedy.name);
  return out;
}

std::string ProgramPlanToDot(const Program& program, const ProgramPlan& plan) {
  auto quote = [](absl::string_view s) {
    return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
  };
  std::string out = "digraph program {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  for (size_t t = 0; t < program.tensors().size(); ++t) {
    const ProgramTensor& tensor = program.tensors()[t];
    if (tensor.role == TensorRole::kActivation) continue;
    std::string layout = tensor.nd_sbp.ToString();
    if (tensor.role == TensorRole::kFree) {
      const std::vector<int> free = program.FreeTensors();
      const size_t j = std::find(free.begin(), free.end(), static_cast<int>(t)) - free.begin();
      layout = plan.chosen.free_layouts[j].ToString();
    }
    absl::StrAppend(&out, "  t", t, " [shape=ellipse, label=",
                    quote(absl::StrCat(tensor.name, "\n", tensor.desc.ToString(), "\n",
                                       TensorRoleName(tensor.role), " ", layout)),
                    "];\n");
  }
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const ProgramOp& op = program.ops()[i];
    absl::StrAppend(&out, "  op", i, " [shape=box, label=",
                    quote(absl::StrCat(op.label, "\n", op.call->type_name(), "\n",
                                       SignatureToString(*op.call, plan.chosen.op_signatures[i]))),
                    "];\n");
  }
  double worst = 0;
  for (const BoxingEdge& e : plan.costs.edges) {
    if (std::isfinite(e.price.time_s)) worst = std::max(worst, e.price.time_s);
  }
  int outputs = 0;
  for (const BoxingEdge& e : plan.costs.edges) {
    const ProgramTensor& tensor = program.tensors()[e.tensor];
    const std::string from = tensor.producer >= 0 ? absl::StrCat("op", tensor.producer)
                                                  : absl::StrCat("t", e.tensor);
    std::string to;
    if (e.consumer >= 0) {
      to = absl::StrCat("op", e.consumer);
    } else {
      to = absl::StrCat("out", outputs++);
      absl::StrAppend(&out, "  ", to, " [shape=doublecircle, label=",
                      quote(absl::StrCat(tensor.name, "\n", e.to.ToString())), "];\n");
    }
    std::string label = tensor.name;
    std::string color = "gray60";
    if (e.from != e.to) {
      absl::StrAppend(&label, "\n", e.price.summary, "\n", FormatSeconds(e.price.time_s));
      // Yellow (hue 1/6) for the cheapest boxing to red (hue 0) for the costliest.
      const double share = std::isfinite(e.price.time_s) && worst > 0 ? e.price.time_s / worst : 1;
      color = absl::StrFormat("%.3f 1.000 0.900", (1 - share) / 6);
    }
    absl::StrAppend(&out, "  ", from, " -> ", to, " [label=", quote(label), ", color=\"", color,
                    "\", penwidth=", e.from != e.to ? 2.5 : 1.0, "];\n");
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace oneflow_sbp::graph
