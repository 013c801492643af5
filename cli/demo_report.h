// DemoReport: what `sbp demo` found, and its two renderings: the text
// report (after the header, which the demo prints as it starts) and one
// JSON object (`sbp demo --format=json`).
#ifndef CLI_DEMO_REPORT_H_
#define CLI_DEMO_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "eager/trace.h"

namespace oneflow_sbp::cli {

struct DemoReport {
  std::string placement;
  std::string backend;
  std::string cost_policy;
  int steps = 0;
  // Steps done before this run (a resumed checkpoint's count).
  int first_step = 0;
  std::vector<double> losses;
  std::vector<double> reference_losses;
  // Rank 0's seconds per step (forward, backward, Adam; the check's
  // gradient gathering left out).
  std::vector<double> step_seconds;
  // Per collective kind over the run, all ranks: steps, planned and
  // measured bytes received.
  struct Collective {
    std::string kind;
    int64_t steps = 0;
    int64_t planned_bytes = 0;
    int64_t bytes = 0;
  };
  std::vector<Collective> collectives;
  // Step 0 of rank 0, forward (or forward and backward): the ops it ran.
  std::vector<eager::OpEvent> ops;
  double loss_max_rel_err = 0;
  bool loss_matches = false;
  int gradients = 0;
  double grad_max_rel_err = 0;
  bool gradients_match = false;
  bool loss_went_down = false;
  std::string record;  // "" when not asked
  std::string trace;   // "" when not asked
  std::string saved;   // the checkpoint written, "" when not asked

  bool passed() const { return loss_matches && gradients_match && loss_went_down; }
};

// The text report: the op table, the collectives, losses and the check.
std::string DemoReportText(const DemoReport& report);
// One JSON object with every field above.
std::string DemoReportJson(const DemoReport& report);

}  // namespace oneflow_sbp::cli

#endif  // CLI_DEMO_REPORT_H_
