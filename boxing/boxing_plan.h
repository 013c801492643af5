// A boxing plan: the steps that turn a tensor laid out as `src` on one
// placement into `dst` on another (or the same), with exact per-rank byte
// counts for every step.
//
// Example (8x6 f32 on [2,2], (S(0),S(1)) -> (S(1),S(0))): two all-to-all
// steps, one per mesh axis, or one point-to-point exchange, whichever the
// cost model prefers; see planner.h.
#ifndef BOXING_BOXING_PLAN_H_
#define BOXING_BOXING_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::boxing {

// The legal one-step moves (see collective_moves.h for when each applies).
enum class StepKind : uint8_t {
  kAllGather,      // S(i) -> B
  kReduceScatter,  // P -> S(i)
  kAllReduce,      // P -> B
  kAllToAll,       // S(i) -> S(j)
  kLocalSlice,     // B -> S(i): no traffic
  kLocalPartial,   // B -> P: one rank of each group keeps the value, others zero
  kLocalScatter,   // S(i) -> P: each rank places its shard into zeros
  kPointToPoint,   // exact send/recv of what each rank lacks (any layouts)
};

// "all_gather", "reduce_scatter", "all_reduce", "all_to_all", "local_slice",
// "local_b_to_p", "local_s_to_p", "p2p".
absl::string_view StepKindName(StepKind kind);
// True for steps that move no data.
bool IsLocal(StepKind kind);

// One piece of a point-to-point exchange: participant `receiver` gets the
// index region `region` (global coordinates) of `sender`'s source shard.
// sender == receiver is a local copy (no bytes counted). Participants index
// BoxingPlan::ranks.
struct P2pPiece {
  int sender = 0;
  int receiver = 0;
  TensorSlice region;
};

struct BoxingStep {
  StepKind kind = StepKind::kPointToPoint;
  // Mesh axes a collective spans (one, or several flattened); 0 for p2p.
  MeshAxisMask axes = 0;
  // The per-axis change of a collective (unset for p2p).
  SbpParallel from;
  SbpParallel to;
  // Rank groups (device ranks as written in placements). p2p: one group
  // listing every participant.
  std::vector<std::vector<int64_t>> groups;
  // Per participant of the plan (BoxingPlan::ranks order).
  std::vector<int64_t> bytes_sent;
  std::vector<int64_t> bytes_received;
  // p2p only (detailed plans): every piece, in a fixed order (receivers by
  // destination parallel_id, then source pieces in order of first holder,
  // then parts). Each receiver starts from zeros and copies its pieces in;
  // with `sum_pieces` (the source holds partial sums) it adds them instead.
  std::vector<P2pPiece> pieces;
  bool sum_pieces = false;
  // Layout after the step, and on which placement it lives.
  NdSbp result;
  bool on_destination = false;
  double time_s = 0;

  // Sums saturate at kSaturatedBytes (byte_count.h).
  int64_t max_rank_bytes() const;  // max over ranks of max(sent, received)
  int64_t total_bytes() const;     // sum of bytes received
};

struct BoxingPlan {
  Shape shape;
  DataType dtype = DataType::kFloat32;
  Placement src_placement;
  Placement dst_placement;
  NdSbp src;
  NdSbp dst;
  // Every rank of either placement, ascending.
  std::vector<int64_t> ranks;
  std::vector<BoxingStep> steps;

  double time_s() const;
  int64_t total_bytes() const;
  // Max over ranks of the bytes it receives over the whole plan.
  int64_t max_rank_bytes() const;
  int num_comm_steps() const;
  // "all_to_all[1] S(1)->S(0) ; p2p" style one-line summary.
  std::string Summary() const;
};

// kOutOfRange, naming the tensor and layouts, when any byte count of the
// plan (a rank's bytes in a step, a step's or the plan's total, a rank's
// total) does not fit in int64; OK otherwise. The planner checks every
// plan it returns, so callers never see a saturated count.
absl::Status CheckPlanBytes(const BoxingPlan& plan);

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_BOXING_PLAN_H_
