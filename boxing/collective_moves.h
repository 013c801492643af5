// One-step boxing moves on one placement, with exact per-rank bytes.
//
// Every legal one-step transition on a set of mesh axes A (one axis, or
// several flattened into one group), among the ranks that share all mesh
// coordinates outside A, and the collective behind it:
//
//   from  -> to     collective       per-rank bytes (ring, group of n, T = group's tensor)
//   S(i)  -> B      all-gather       recv T - own chunk; send T - next rank's chunk
//   P     -> S(i)   reduce-scatter   send T - own chunk; recv T - previous rank's chunk
//   P     -> B      all-reduce       reduce-scatter + all-gather over n balanced chunks
//   S(i)  -> S(j)   all-to-all       exactly the overlaps of old and new slices
//   B     -> S(i)   local slice      0
//   B     -> P      local            0 (one rank keeps the value, the others zero)
//   S(i)  -> P      local            0 (each rank places its shard into zeros)
//
// With even chunks these are the textbook (n-1)/n·T (all-gather,
// reduce-scatter), 2(n-1)/n·T (all-reduce) and (n-1)/n²·T (all-to-all). With
// uneven balanced splits the chunks are the exact ranges each rank holds;
// nothing is padded.
//
// A move is offered only when it is exact for the layout at hand: within
// every group the old slices (and the new ones) must be copies of one
// region or tile it, as the table's kind requires. This rejects, e.g.,
// changing the outer of two axes that split the same dim, where a group
// does not hold the region its members need. Moves on several axes at once
// also require OneFlow's merge condition for splits (nested split == flat
// split, CanMergeSplit).
#ifndef BOXING_COLLECTIVE_MOVES_H_
#define BOXING_COLLECTIVE_MOVES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::boxing {

// One placement's view of one tensor: slices per layout and rank groups
// per axis set, memoised for the duration of a search.
class LayoutSpace {
 public:
  // `participant_index[p]` is the index of parallel_id p among the plan's
  // participants (BoxingPlan::ranks); `num_participants` their count.
  LayoutSpace(const Shape& shape, DataType dtype, const Placement& placement,
              std::vector<int> participant_index, int num_participants);

  const Shape& shape() const { return shape_; }
  int element_bytes() const { return element_bytes_; }
  const Placement& placement() const { return placement_; }
  int num_participants() const { return num_participants_; }
  int participant(int64_t parallel_id) const { return participant_index_[parallel_id]; }

  // Slices of every rank (by parallel_id). Requires a valid nd_sbp. The
  // reference stays valid for the life of the space (later layouts do not
  // move earlier ones).
  const std::vector<TensorSlice>& Slices(const NdSbp& nd_sbp);
  // SubGroups of the placement for `axes`.
  const std::vector<std::vector<int64_t>>& Groups(MeshAxisMask axes);

 private:
  Shape shape_;
  int element_bytes_;
  Placement placement_;
  std::vector<int> participant_index_;
  int num_participants_;
  // Node-based so references stay valid while more layouts are added.
  absl::node_hash_map<uint64_t, std::vector<TensorSlice>> slices_;
  absl::flat_hash_map<MeshAxisMask, std::vector<std::vector<int64_t>>> groups_;
};

// The step that changes every axis in `axes` (all carrying the same SBP in
// `layout`) to `to`, or nullopt if no exact collective does that here.
// Without `detailed`, only kind, axes, result and time are filled (the
// search's fast path; groups and per-rank bytes are left empty).
std::optional<BoxingStep> CollectiveMove(LayoutSpace& space, const NdSbp& layout,
                                         MeshAxisMask axes, SbpParallel to,
                                         const Calibration& calibration, bool detailed = true);

// Elements two slices share (0 if disjoint), without building the overlap.
int64_t OverlapCount(const TensorSlice& a, const TensorSlice& b);

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_COLLECTIVE_MOVES_H_
