// The boxing executor: runs a BoxingPlan on real ranks and moves real data,
// exactly as planned.
//
// Every rank of the plan's placements calls ExecutePlan with its own shard
// (SPMD); each step becomes one collective on the step's rank group (or one
// pairwise exchange for p2p steps) through the Communicator, followed by
// copies by global region (region_copy.h). Uneven splits are exact and
// nothing is padded. The bytes each rank moves equal the plan's prediction
// for that rank and step (tests compare them exactly).
//
//   // on every rank r of "cpu:0-3 [2,2]", world rank == device rank:
//   absl::StatusOr<LocalTensor> out = ExecutePlan(*plan, my_shard, world, &report);
//   report.steps[0].traffic;   // == {plan->steps[0].bytes_sent[r], ..._received[r]}
//
// Contract:
// * `world`'s member positions are device ranks: position r is the rank
//   named r in the placements (a world of at least max rank + 1 members).
// * `local` is this rank's source shard (dims = its slice of the source
//   layout); it is ignored on ranks outside the source placement. It is
//   taken by value (a LocalTensor shares its storage when copied): a caller
//   that moves its shard in lets the source be freed after the first step
//   instead of living through every step. The
//   result is this rank's destination shard, or an undefined LocalTensor on
//   ranks outside the destination placement. Ranks in neither placement
//   return at once without communicating.
// * Errors: kInvalidArgument for a shard of the wrong dims or dtype, the
//   communicator's errors otherwise (a failed or slow peer gives an error
//   within the call timeout, never a hang). On error no shard is returned:
//   partially written output is never handed back as a result.
#ifndef RUNTIME_EXECUTOR_H_
#define RUNTIME_EXECUTOR_H_

#include <vector>

#include "absl/status/statusor.h"
#include "boxing/boxing_plan.h"
#include "comm/communicator.h"
#include "oneflow_sbp/storage/local_tensor.h"

namespace oneflow_sbp::runtime {

struct StepReport {
  boxing::StepKind kind = boxing::StepKind::kPointToPoint;
  // Bytes this rank really sent and received in the step.
  comm::Traffic traffic;
  double seconds = 0;
};

struct ExecutionReport {
  std::vector<StepReport> steps;
  double seconds = 0;
};

absl::StatusOr<LocalTensor> ExecutePlan(const boxing::BoxingPlan& plan, LocalTensor local,
                                        comm::Communicator& world,
                                        ExecutionReport* report = nullptr,
                                        const comm::CallOptions& options = {});

// The bytes the plan predicts for `device_rank` in step `step` (zero if
// the rank takes no part).
comm::Traffic PlannedTraffic(const boxing::BoxingPlan& plan, int step, int64_t device_rank);

}  // namespace oneflow_sbp::runtime
#endif  // RUNTIME_EXECUTOR_H_
