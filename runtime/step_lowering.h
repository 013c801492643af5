// Lowering: what ONE rank does in one step of a BoxingPlan, in global
// index regions, so the executor only moves bytes.
//
//   for (int s = 0; s < plan.steps.size(); ++s) {
//     absl::StatusOr<RankStep> step = LowerStep(plan, s, my_device_rank);
//     ... one collective (or pairwise exchange) with step->counts, then
//     ... copies by region (region_copy.h)
//   }
//
// Per kind (n = group size, members in group order, k = this rank's position):
//   all_gather      chunks[j] = old slice of member j; out = group box
//   reduce_scatter  in = group box (this rank's addend); chunks[j] = new
//                   slice of member j; out = chunks[k]
//   all_reduce      in = out = group box
//   all_to_all      send[j] = old_k ∩ new_j, recv[j] = old_j ∩ new_k
//   local_slice     out = new slice, cut from the old
//   local_b_to_p    position 0 keeps the value, the others hold zeros
//   local_s_to_p    out = group box, zeros outside the old slice
//   p2p             peers = every participant; send/recv pieces per peer in
//                   the plan's piece order; local pieces copied; the output
//                   starts from zeros and pieces are copied (or added when
//                   the source holds partial sums)
// Byte counts follow: the collectives' counts are exactly those the planner
// priced (collective_moves.h), and exchange counts are the pieces'.
#ifndef RUNTIME_STEP_LOWERING_H_
#define RUNTIME_STEP_LOWERING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "boxing/boxing_plan.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::runtime {

struct RankStep {
  boxing::StepKind kind = boxing::StepKind::kPointToPoint;
  // False if this rank has no part in the step (not in its placement).
  bool active = false;
  // This rank's region before and after (holds_input / holds_output say
  // whether it has a shard on that side at all; p2p ranks may have one
  // side only).
  bool holds_input = false;
  bool holds_output = false;
  TensorSlice in;
  TensorSlice out;
  // Collectives: device ranks of the group in group order; this rank's
  // position in it.
  std::vector<int64_t> group;
  int position = 0;
  // all_gather / reduce_scatter: one region per member (group order).
  std::vector<TensorSlice> chunks;
  // all_to_all and p2p: per member of `group` (p2p: every participant),
  // the regions sent to / received from it, in order. The region kept by
  // this rank itself is in `local`.
  std::vector<std::vector<TensorSlice>> send;
  std::vector<std::vector<TensorSlice>> recv;
  std::vector<TensorSlice> local;
  // p2p: add received and local pieces instead of copying them.
  bool sum = false;
  // local_b_to_p: this rank keeps its value (else zeros).
  bool keeps_value = false;
};

// kInvalidArgument if `step` is out of range; kInternal if the plan is
// inconsistent with its placements (a bug in whoever built it).
absl::StatusOr<RankStep> LowerStep(const boxing::BoxingPlan& plan, int step, int64_t device_rank);

// The layout and placement a rank's data has before step `step`.
const NdSbp& LayoutBefore(const boxing::BoxingPlan& plan, int step);
const Placement& PlacementBefore(const boxing::BoxingPlan& plan, int step);

}  // namespace oneflow_sbp::runtime
#endif  // RUNTIME_STEP_LOWERING_H_
