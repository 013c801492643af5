// Fuzz target: the boxing planner on random shapes, dtypes, meshes of up
// to 4 axes, layouts, and changes of placement.
//
// Properties: a valid request always plans (an error is never kInternal);
// the plan ends in the destination layout on the destination placement;
// layouts along the way are valid and their slices tile the tensor; step
// byte counts are non-negative; planning twice gives the same plan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "boxing/planner.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_gen.h"
#include "fuzz/fuzz_input.h"

namespace oneflow_sbp::fuzz {
namespace {

void FuzzOne(FuzzInput& in) {
  boxing::PlanRequest r;
  // Mostly small extents (uneven and empty splits); sometimes large ones
  // (big byte counts, the same layout logic).
  // Rank <= 3: a rank-4 tensor on 4 axes has 1,296 layouts per side, and
  // one search takes seconds under ASan; planner limits are tested apart.
  r.shape = GenShape(in, 3, in.Range(0, 7) == 0 ? int64_t{1} << 16 : 9);
  r.dtype = GenDataType(in);
  r.src_placement = GenPlacement(in);
  r.dst_placement = in.Bool() ? r.src_placement : GenPlacement(in);
  r.src = GenNdSbp(in, r.src_placement, r.shape.rank());
  r.dst = GenNdSbp(in, r.dst_placement, r.shape.rank());
  const std::string what =
      absl::StrCat(r.shape.ToString(), " ", r.src.ToString(), " on ", r.src_placement.ToString(),
                   " -> ", r.dst.ToString(), " on ", r.dst_placement.ToString());
  const boxing::Calibration cal = boxing::Calibration::Defaults(NdSbp::kMaxAxes);

  absl::StatusOr<boxing::BoxingPlan> plan = boxing::PlanBoxing(r, cal);
  CheckNotInternal(plan.status(), what);
  FUZZ_CHECK(plan.ok(), absl::StrCat(what, ": a valid request failed: ", plan.status().ToString()));

  CheckSlicesTile(r.shape, r.src, r.src_placement, 1 << 10);
  CheckSlicesTile(r.shape, r.dst, r.dst_placement, 1 << 10);
  const bool same = r.src_placement == r.dst_placement;
  if (plan->steps.empty()) {
    FUZZ_CHECK(same && r.src == r.dst, absl::StrCat(what, ": empty plan"));
  } else {
    const boxing::BoxingStep& last = plan->steps.back();
    FUZZ_CHECK(last.result == r.dst && (same || last.on_destination),
               absl::StrCat(what, ": plan ends in ", last.result.ToString(), " (",
                            plan->Summary(), ")"));
  }
  bool on_destination = false;
  for (const boxing::BoxingStep& step : plan->steps) {
    FUZZ_CHECK(!on_destination || step.on_destination || same,
               absl::StrCat(what, ": back to the source placement in ", plan->Summary()));
    on_destination = step.on_destination;
    const Placement& p = same || step.on_destination ? r.dst_placement : r.src_placement;
    FUZZ_CHECK(step.result.size() == p.num_axes(),
               absl::StrCat(what, ": step result ", step.result.ToString()));
    CheckSlicesTile(r.shape, step.result, p, 1 << 10);
    for (int64_t b : step.bytes_sent) FUZZ_CHECK(b >= 0, what);
    for (int64_t b : step.bytes_received) FUZZ_CHECK(b >= 0, what);
    FUZZ_CHECK(step.time_s >= 0, what);
  }

  absl::StatusOr<boxing::BoxingPlan> again = boxing::PlanBoxing(r, cal);
  FUZZ_CHECK(again.ok() && again->Summary() == plan->Summary() &&
                 again->time_s() == plan->time_s(),
             absl::StrCat(what, ": planned twice, got ", plan->Summary(), " then ",
                          again.ok() ? again->Summary() : again.status().ToString()));
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
