// Fuzz target: the executor on small random plans (up to 8 ranks, with
// changes of placement), on in-process ranks (threads), with seeded
// integer-valued data.
//
// Properties: every rank finishes without error; the result on every
// destination rank equals its slice of the full tensor bit for bit
// (ExecuteAndVerify compares against the reference); every rank moves
// exactly the bytes the plan says.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "comm/inprocess_world.h"
#include "boxing/planner.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_gen.h"
#include "fuzz/fuzz_input.h"
#include "cli/boxing_execution.h"

namespace oneflow_sbp::fuzz {
namespace {

void FuzzOne(FuzzInput& in) {
  boxing::PlanRequest r;
  r.shape = GenShape(in, 3, 7);
  r.dtype = GenDataType(in);
  r.src_placement = GenPlacement(in, 3, 3, 8);
  r.dst_placement = in.Bool() ? r.src_placement : GenPlacement(in, 3, 3, 8);
  // The harness makes test data as integer addends; bool has none, so a
  // bool tensor gets no P (planning it is fine; seeding it is not).
  const bool partial = r.dtype != DataType::kBool;
  r.src = GenNdSbp(in, r.src_placement, r.shape.rank(), partial);
  r.dst = GenNdSbp(in, r.dst_placement, r.shape.rank(), partial);
  const uint64_t seed = in.Range(0, 1 << 20);
  const std::string what =
      absl::StrCat(r.shape.ToString(), " ", DataTypeName(r.dtype), " ", r.src.ToString(), " on ",
                   r.src_placement.ToString(), " -> ", r.dst.ToString(), " on ",
                   r.dst_placement.ToString());
  absl::StatusOr<boxing::BoxingPlan> plan =
      boxing::PlanBoxing(r, boxing::Calibration::Defaults(NdSbp::kMaxAxes));
  CheckNotInternal(plan.status(), what);
  FUZZ_CHECK(plan.ok(), absl::StrCat(what, ": ", plan.status().ToString()));

  int world = 0;
  for (int64_t rank : plan->ranks) world = std::max<int>(world, static_cast<int>(rank) + 1);
  cli::ExecutionSummary summary;
  comm::InProcessOptions options;
  options.default_timeout = absl::Seconds(20);
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(
      world,
      [&](comm::Communicator& c) -> absl::Status {
        absl::StatusOr<cli::ExecutionSummary> s = cli::ExecuteAndVerify(*plan, c, seed);
        if (!s.ok()) return s.status();
        if (c.rank() == 0) summary = *std::move(s);
        return absl::OkStatus();
      },
      options);
  FUZZ_CHECK(ran.ok(), absl::StrCat(what, ": ", ran.status().ToString()));
  // The harness seeds P layouts with small integer addends, which u8 (no
  // negatives) and some float grids cannot hold exactly; it says so with
  // kInvalidArgument before anything runs. Such an input tests nothing.
  for (const absl::Status& s : *ran) {
    if (s.code() == absl::StatusCode::kInvalidArgument &&
        absl::StrContains(s.message(), "cannot lay out")) {
      return;
    }
  }
  for (size_t i = 0; i < ran->size(); ++i) {
    FUZZ_CHECK((*ran)[i].ok(),
               absl::StrCat(what, " (", plan->Summary(), "): rank ", i, ": ",
                            (*ran)[i].ToString()));
  }
  FUZZ_CHECK(summary.verified,
             absl::StrCat(what, " (", plan->Summary(), "): result differs: ", summary.mismatch));
  FUZZ_CHECK(summary.bytes_as_planned,
             absl::StrCat(what, " (", plan->Summary(), "): bytes differ from the plan"));
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
