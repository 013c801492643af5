// One collective move on one mesh group: whether it is exact there, and
// what each member sends and receives (the table in collective_moves.h).
//
// The members' slices are kept compactly: a group's axes all carry one SBP
// in a layout (MoveSource), so its members' slices differ on at most one
// dim, the one that SBP splits. MemberSlices keeps the shared slice and
// one range per member for that dim, so a group of 16,384 ranks costs
// 16,384 ranges, not 16,384 slices, and every check is one pass over it.
#ifndef BOXING_GROUP_MOVE_H_
#define BOXING_GROUP_MOVE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "boxing/boxing_plan.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::boxing {

// The slices of a group's members in one layout: member k holds `base`,
// except on `dim` (>= 0 when the group's axes split a dim), where it holds
// ranges[k]. Members are in SubGroup's order (the last group axis fastest).
class MemberSlices {
 public:
  // The slices at mesh coordinate `coord` (the group's own axes ignored)
  // for the group over `group_axes` (ascending) in `layout`.
  void Assign(const Shape& shape, const NdSbp& layout, absl::Span<const int64_t> hierarchy,
              absl::Span<const int> group_axes, absl::Span<const int64_t> coord);

  int size() const { return size_; }
  int dim() const { return dim_; }
  IndexRange Range(int k, int d) const { return d == dim_ ? ranges_[k] : base_.range(d); }
  // Elements member k holds.
  int64_t ElemCnt(int k) const;
  // Member k's slice, built (for the few checks that need a whole one).
  TensorSlice At(int k) const;
  // Every member holds the same slice.
  bool AllEqual() const;

 private:
  TensorSlice base_;
  int dim_ = -1;
  int size_ = 0;
  std::vector<IndexRange> ranges_;
  // Product of base_'s sizes on every dim but dim_ (0 if one is empty).
  int64_t others_ = 1;
};

struct MemberBytes {
  int64_t sent = 0;
  int64_t received = 0;
};

// The most bytes any member sends or receives when `kind` turns `before`
// into `after` on the group, or nullopt if the move is not exact there.
// `each`, when given, receives every member's bytes (in member order).
// Byte counts saturate (byte_count.h).
std::optional<int64_t> EvaluateGroupMove(StepKind kind, const MemberSlices& before,
                                         const MemberSlices& after, int64_t element_bytes,
                                         std::vector<MemberBytes>* each);

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_GROUP_MOVE_H_
