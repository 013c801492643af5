// Prints, as a Markdown table, the planner's plan next to the naive
// per-axis plan (DTensor's order) for the cases docs/BOXING.md discusses.
//
//   bazel run -c opt //tools/bench:boxing_compare
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "boxing/planner.h"

namespace {

struct Case {
  std::string shape;
  std::string placement;
  std::string from;
  std::string to;
  std::string to_placement;  // empty: same
};

}  // namespace

int main() {
  using namespace oneflow_sbp;
  const std::vector<Case> cases = {
      {"1024,1024", "cpu:0-3 [2,2]", "(S(0),S(1))", "(S(1),S(0))", ""},
      {"1024,1024", "cpu:0-3 [2,2]", "(S(0),S(0))", "(B,S(0))", ""},
      {"1023,1024", "cpu:0-3 [2,2]", "(S(0),S(0))", "(B,S(0))", ""},
      {"1024,1024", "cpu:0-3 [2,2]", "(P,P)", "(B,B)", ""},
      {"1024,1024", "cpu:0-3 [2,2]", "(P,P)", "(S(0),S(1))", ""},
      {"1024,1024", "cpu:0-3 [2,2]", "(B,S(0))", "(S(0),S(0))", ""},
      {"1000,1024", "cpu:0-5 [2,3]", "(S(0),S(1))", "(S(1),B)", ""},
      {"1024,1024", "cpu:0-7 [2,2,2]", "(S(0),P,S(1))", "(S(1),B,S(0))", ""},
      {"10,1024", "cpu:0-3", "S(0)", "S(1)", ""},
      {"8,6", "cpu:0-3 [2,2]", "(S(0),S(1))", "(S(1),S(0))", ""},
      {"1024,1024", "cpu:0-3", "S(0)", "B", "cpu:4-7"},
      {"1024,1024", "cpu:0-3", "S(0)", "(S(0),S(1))", "cpu:0-3 [2,2]"},
  };
  const boxing::Calibration cal = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
  std::printf("| shape | from | to | naive plan | naive bytes | naive us | planned | bytes | us | speed-up |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    const Placement src = *Placement::Parse(c.placement);
    const Placement dst = c.to_placement.empty() ? src : *Placement::Parse(c.to_placement);
    const boxing::PlanRequest r{*Shape::Parse(c.shape), DataType::kFloat32, src,
                                *NdSbp::Parse(c.from), dst, *NdSbp::Parse(c.to)};
    absl::StatusOr<boxing::BoxingPlan> plan = boxing::PlanBoxing(r, cal);
    absl::StatusOr<boxing::BoxingPlan> naive = boxing::NaivePerAxisPlan(r, cal);
    if (!plan.ok() || !naive.ok()) {
      std::printf("| %s | error |\n", c.shape.c_str());
      continue;
    }
    std::printf("| f32[%s] | %s on %s | %s on %s | %s | %lld | %.1f | %s | %lld | %.1f | %.2fx |\n",
                c.shape.c_str(), r.src.ToString().c_str(), src.ToString().c_str(),
                r.dst.ToString().c_str(), dst.ToString().c_str(), naive->Summary().c_str(),
                static_cast<long long>(naive->total_bytes()), naive->time_s() * 1e6,
                plan->Summary().c_str(), static_cast<long long>(plan->total_bytes()),
                plan->time_s() * 1e6, naive->time_s() / plan->time_s());
  }
  return 0;
}
