// Placement: device type, ordered ranks and the hierarchy (mesh shape).
//
// Example:
//   absl::StatusOr<Placement> p = Placement::Parse("cuda:0-7 [2,4]");
//   p->parallel_num();             // 8
//   p->CoordinateOf(6);            // {1, 2}   (row-major, last axis fastest)
//   p->ParallelIdAt({1, 2});       // 6
//   p->SubGroup(6, AxisBit(1));    // {4, 5, 6, 7}: same axis-0 coordinate
//   p->ToString();                 // "cuda:0-7 [2,4]"
//
// Terms (SPEC.md §1.1): a rank is the device number written in the string;
// a parallel_id is the index of a rank in the ascending rank list (OneFlow
// numbers devices in ascending order, so "cpu:3,1" is the same placement as
// "cpu:1,3"). The mesh coordinate of a parallel_id is its row-major unravel
// over the hierarchy. A missing hierarchy means [N]; ToString omits a 1-axis
// hierarchy, so "cpu:0-3 [4]" prints as "cpu:0-3".
//
// A Placement is a shared immutable value: copying is a reference-count
// increment, equality first compares pointers, and the hash is precomputed.
// All ranks live on one node (node 0); see proto_convert.h for device_name.
#ifndef ONEFLOW_SBP_VALUES_PLACEMENT_H_
#define ONEFLOW_SBP_VALUES_PLACEMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"

namespace oneflow_sbp {

enum class DeviceType : uint8_t { kCpu, kCuda };

// "cpu", "cuda".
absl::string_view DeviceTypeName(DeviceType type);
// "cpu" or "cuda" ("gpu" is accepted as an alias of "cuda").
absl::StatusOr<DeviceType> ParseDeviceType(absl::string_view text);

// A set of mesh axes as a bit mask: bit i is mesh axis i.
using MeshAxisMask = uint32_t;
inline constexpr MeshAxisMask AxisBit(int axis) { return MeshAxisMask{1} << axis; }

using MeshCoord = absl::InlinedVector<int64_t, NdSbp::kMaxAxes>;

class Placement {
 public:
  // Largest number of ranks in one placement.
  static constexpr int64_t kMaxParallelNum = 1 << 16;

  // "cpu:0" with hierarchy [1].
  Placement();

  // `ranks` in any order, each >= 0, no duplicates, at most kMaxParallelNum.
  // `hierarchy` empty means [N]; otherwise at most NdSbp::kMaxAxes extents,
  // each >= 1, whose product is N. Violations are kInvalidArgument naming
  // the offending value.
  static absl::StatusOr<Placement> Make(DeviceType type,
                                        absl::Span<const int64_t> ranks,
                                        absl::Span<const int64_t> hierarchy = {});

  // "<device>:<ranks>[ <hierarchy>]" where ranks is a comma list of numbers
  // and lo-hi runs, and hierarchy is "[2,4]": "cpu:0-3", "cuda:0-7 [2,4]",
  // "cpu:0,2,4,6 [2,2]". Errors as for Make, plus malformed text.
  static absl::StatusOr<Placement> Parse(absl::string_view text);

  DeviceType device_type() const { return rep_->device_type; }
  // Ascending.
  absl::Span<const int64_t> ranks() const { return rep_->ranks; }
  absl::Span<const int64_t> hierarchy() const { return rep_->hierarchy; }
  int num_axes() const { return static_cast<int>(rep_->hierarchy.size()); }
  int64_t parallel_num() const { return static_cast<int64_t>(rep_->ranks.size()); }

  // Requires 0 <= parallel_id < parallel_num().
  int64_t RankOf(int64_t parallel_id) const;
  // kInvalidArgument if `rank` is not in this placement.
  absl::StatusOr<int64_t> ParallelIdOf(int64_t rank) const;

  // Requires 0 <= parallel_id < parallel_num().
  MeshCoord CoordinateOf(int64_t parallel_id) const;
  // Requires coord.size() == num_axes() and each entry within its extent.
  int64_t ParallelIdAt(absl::Span<const int64_t> coord) const;

  // The parallel_ids that share every mesh coordinate with `parallel_id`
  // except those of the axes in `axes`, in ascending order (which is
  // row-major over the free axes). Axes outside the hierarchy are ignored;
  // an empty mask gives {parallel_id}.
  std::vector<int64_t> SubGroup(int64_t parallel_id, MeshAxisMask axes) const;
  // Every such group, ordered by first member; together they partition
  // [0, parallel_num()).
  std::vector<std::vector<int64_t>> SubGroups(MeshAxisMask axes) const;

  // Same device type and ranks; the hierarchy may differ.
  bool EqualsIgnoringHierarchy(const Placement& other) const;

  // "cuda:0-7 [2,4]"; the hierarchy is printed only with >= 2 axes.
  std::string ToString() const;
  // "0-3,8,10": the rank list, ascending runs collapsed.
  std::string RanksToString() const;

  // Precomputed at construction.
  size_t hash() const { return rep_->hash; }

  // Inline for the pointer case: callers share Placement objects, and the
  // inference cache compares one on every hit.
  friend bool operator==(const Placement& a, const Placement& b) {
    return a.rep_ == b.rep_ || EqualReps(*a.rep_, *b.rep_);
  }
  friend bool operator!=(const Placement& a, const Placement& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Placement& p) {
    return H::combine(std::move(h), p.rep_->hash);
  }

 private:
  struct Rep {
    DeviceType device_type;
    std::vector<int64_t> ranks;
    absl::InlinedVector<int64_t, NdSbp::kMaxAxes> hierarchy;
    // strides[i] = product of hierarchy[i+1..]; unravels parallel_ids.
    absl::InlinedVector<int64_t, NdSbp::kMaxAxes> strides;
    size_t hash;
  };
  explicit Placement(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}
  static bool EqualReps(const Rep& a, const Rep& b);

  std::shared_ptr<const Rep> rep_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_PLACEMENT_H_
