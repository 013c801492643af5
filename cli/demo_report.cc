#include "cli/demo_report.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_format.h"

namespace oneflow_sbp::cli {
namespace {

// JSON has no NaN or infinity: a loss that overflowed is null.
std::string Number(double v) {
  return std::isfinite(v) ? absl::StrFormat("%.17g", v) : std::string("null");
}

std::string Numbers(const std::vector<double>& v) {
  std::vector<std::string> parts;
  for (double x : v) parts.push_back(Number(x));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string OpJson(const eager::OpEvent& e) {
  std::vector<std::string> boxing;
  for (const eager::BoxingEvent& b : e.boxing_steps) {
    boxing.push_back(absl::StrFormat(
        "{\"blob\": %s, \"step\": %s, \"planned_bytes_received\": %d, \"bytes_received\": %d}",
        JsonQuote(b.blob), JsonQuote(b.step), b.planned_received, b.received));
  }
  return absl::StrFormat("{\"op\": %s, \"backward\": %s, \"signature\": %s, \"boxing\": [%s]}",
                         JsonQuote(e.op), e.backward ? "true" : "false", JsonQuote(e.signature),
                         absl::StrJoin(boxing, ", "));
}

}  // namespace

std::string DemoReportText(const DemoReport& r) {
  std::string out =
      "step 0, forward, as rank 0 runs it (signature; boxing with planned and measured bytes "
      "received by rank 0):\n";
  for (const eager::OpEvent& e : r.ops) {
    absl::StrAppend(&out, absl::StrFormat("  %s%-28s %s\n", e.backward ? "bwd " : "", e.op,
                                          e.signature));
    for (const eager::BoxingEvent& b : e.boxing_steps) {
      absl::StrAppend(&out,
                      absl::StrFormat("      boxing %-6s %-28s planned %9d B, measured %9d B\n",
                                      b.blob, b.step, b.planned_received, b.received));
    }
  }
  absl::StrAppend(&out, "\ncollectives over ", r.steps,
                  " steps (forward, backward, Adam; all ranks):\n");
  for (const DemoReport::Collective& c : r.collectives) {
    absl::StrAppend(&out, absl::StrFormat("  %-14s %5d steps, %12d bytes received (planned %d)\n",
                                          c.kind, c.steps, c.bytes, c.planned_bytes));
  }
  std::vector<std::string> losses, ref_losses;
  for (double l : r.losses) losses.push_back(absl::StrFormat("%.6f", l));
  for (double l : r.reference_losses) ref_losses.push_back(absl::StrFormat("%.6f", l));
  absl::StrAppend(&out, "\nloss per step:        ", absl::StrJoin(losses, "  "), "\n");
  absl::StrAppend(&out, "single-rank reference: ", absl::StrJoin(ref_losses, "  "), "\n");
  absl::StrAppend(&out, absl::StrFormat(
      "check: loss %s (max rel err %.2g), %d gradients %s (max rel err %.2g), loss %s\n",
      r.loss_matches ? "matches" : "DIFFERS", r.loss_max_rel_err, r.gradients,
      r.gradients_match ? "match" : "DIFFER", r.grad_max_rel_err,
      r.loss_went_down ? "went down" : "DID NOT GO DOWN"));
  if (!r.record.empty()) {
    absl::StrAppend(&out, "program: ", r.record, " (weights free) and its .marked.json twin "
                    "(Megatron marking); plan them with sbp plan --program=FILE\n");
  }
  if (!r.saved.empty()) {
    absl::StrAppend(&out, "checkpoint: ", r.saved, " (step ", r.first_step + r.steps,
                    "; resume on any mesh with --resume=", r.saved, ")\n");
  }
  if (!r.trace.empty()) {
    absl::StrAppend(&out, "trace: ", r.trace, " (open in ui.perfetto.dev or chrome://tracing)\n");
  }
  return out;
}

std::string DemoReportJson(const DemoReport& r) {
  std::vector<std::string> collectives, ops;
  for (const DemoReport::Collective& c : r.collectives) {
    collectives.push_back(absl::StrFormat(
        "%s: {\"steps\": %d, \"bytes_received\": %d, \"planned_bytes_received\": %d}",
        JsonQuote(c.kind), c.steps, c.bytes, c.planned_bytes));
  }
  for (const eager::OpEvent& e : r.ops) ops.push_back("    " + OpJson(e));
  std::string out = "{\n";
  absl::StrAppend(&out, "  \"placement\": ", JsonQuote(r.placement), ",\n");
  absl::StrAppend(&out, "  \"backend\": ", JsonQuote(r.backend), ",\n");
  absl::StrAppend(&out, "  \"cost_policy\": ", JsonQuote(r.cost_policy), ",\n");
  absl::StrAppend(&out, "  \"steps\": ", r.steps, ",\n");
  absl::StrAppend(&out, "  \"first_step\": ", r.first_step, ",\n");
  absl::StrAppend(&out, "  \"losses\": ", Numbers(r.losses), ",\n");
  absl::StrAppend(&out, "  \"reference_losses\": ", Numbers(r.reference_losses), ",\n");
  absl::StrAppend(&out, "  \"step_seconds\": ", Numbers(r.step_seconds), ",\n");
  absl::StrAppend(&out, "  \"collectives\": {", absl::StrJoin(collectives, ", "), "},\n");
  absl::StrAppend(&out, absl::StrFormat(
      "  \"check\": {\"passed\": %s, \"loss_matches\": %s, \"loss_max_rel_err\": %s, "
      "\"gradients\": %d, \"gradients_match\": %s, \"grad_max_rel_err\": %s, "
      "\"loss_went_down\": %s},\n",
      r.passed() ? "true" : "false", r.loss_matches ? "true" : "false",
      Number(r.loss_max_rel_err), r.gradients, r.gradients_match ? "true" : "false",
      Number(r.grad_max_rel_err), r.loss_went_down ? "true" : "false"));
  if (!r.record.empty()) absl::StrAppend(&out, "  \"record\": ", JsonQuote(r.record), ",\n");
  if (!r.trace.empty()) absl::StrAppend(&out, "  \"trace\": ", JsonQuote(r.trace), ",\n");
  if (!r.saved.empty()) absl::StrAppend(&out, "  \"saved\": ", JsonQuote(r.saved), ",\n");
  absl::StrAppend(&out, "  \"ops\": [\n", absl::StrJoin(ops, ",\n"), "\n  ]\n}\n");
  return out;
}

}  // namespace oneflow_sbp::cli
