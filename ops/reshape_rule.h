// Reshape-class rules: the dim-transform analysis of a reshape and the SBP
// candidates that follow from it, including OneFlow's N-D enumeration
// (SPEC.md §6.3). Used by reshape and flatten, and by any view-like custom
// op through ReshapeGetSbp / ReshapeNdHook.
//
// Example:
//   std::vector<DimGroup> g = *AnalyzeReshape(Shape{2, 3, 4}, Shape{6, 2, 2});
//   DimTransformToString(g);   // "out0=flatten(in0,in1) (out1,out2)=split(in2)"
//   ReshapeSplitPairs(Shape{2, 3, 4}, Shape{6, 2, 2}, 2);   // {{0,0}, {2,1}}
//
// A reshape cuts both shapes into groups of consecutive dims with equal
// element counts (size-1 dims aside). Splitting the LEADING dim of a group
// on the input side is the same as splitting the leading dim on the output
// side exactly when the two extents are equal, or both divide by the number
// of parts (then every rank's block of the group is contiguous on both
// sides); only then is S(in) -> S(out) a candidate. Partial sums always
// pass through (a reshape is linear).
#ifndef OPS_RESHAPE_RULE_H_
#define OPS_RESHAPE_RULE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneflow_sbp/rule_api/nd_candidate_context.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::ops {

// One group of a reshape: input dims that together become output dims with
// the same element count. Axis numbers are the original ones; size-1 dims
// are in no group.
struct DimGroup {
  std::vector<int> in_axes;
  std::vector<int> out_axes;
  // "identity" (1 -> 1, same extent), "flatten" (k -> 1), "split" (1 -> k),
  // "regroup" (k -> m).
  std::string kind() const;
};

// Groups in input order. kInvalidArgument if element counts differ.
absl::StatusOr<std::vector<DimGroup>> AnalyzeReshape(const Shape& in, const Shape& out);

// "out0=in0 out1=flatten(in1,in2) (out2,out3)=split(in3) (out4,out5)=regroup(in4,in5)".
std::string DimTransformToString(const std::vector<DimGroup>& groups);

// OneFlow's 1-D pairs for hierarchy value `hv` (SPEC.md §6.3 steps 1-3):
// (in_axis, out_axis) of each group's leading dims whose extents are equal
// or both divisible by hv, ascending by input axis. Empty for a scalar.
std::vector<std::pair<int, int>> ReshapeSplitPairs(const Shape& in, const Shape& out,
                                                   int64_t hv);

// The 1-D rule of a view-like op with one input and one output blob:
// in:S(a) -> out:S(b) per pair, then in:P -> out:P.
absl::Status ReshapeGetSbp(SbpContext& ctx);

// --- N-D enumeration (SPEC.md §6.3 "N-D hook") ------------------------------

// mesh axis -> (in axis, out axis): one way to split several mesh axes
// into one reshape group.
using MeshSplitGroup = std::map<int, std::pair<int, int>>;

// Steps 1a-1b: every group, sorted (lexicographic on (mesh axis, in, out)).
std::vector<MeshSplitGroup> ReshapeNdGroups(const Shape& in, const Shape& out,
                                            absl::Span<const int64_t> hierarchy);

// One NdSbp pair per assignment: per mesh axis (in_axis, out_axis), with
// B = (-1,-1) and P = (-2,-2); sorted and unique (steps 1c-1d).
using MeshAssignment = std::vector<std::pair<int, int>>;
std::vector<MeshAssignment> ReshapeNdAssignments(const Shape& in, const Shape& out,
                                                 absl::Span<const int64_t> hierarchy);

// OneFlow's unit-test filter: for each mesh axis r with split pair (a, b),
// in[a] and out[b] must divide by h[r], and both are divided in turn.
// OneFlow's inference does not apply it (and gets nested splits wrong);
// ReshapeNdHook does.
bool PassesDivisibilityFilter(const MeshAssignment& a, const Shape& in, const Shape& out,
                              absl::Span<const int64_t> hierarchy);

// Ours, what ReshapeNdHook applies: PassesDivisibilityFilter, except that a
// split pair (a, b) where in dim a and out dim b form a 1 -> 1 group of
// equal extent (an "identity" DimGroup) needs no divisibility: both sides
// cut that dim into the same slices whatever the part counts, so even an
// uneven or nested split of it is exact. Pairs of dims that merge with or
// split into others must still divide at every nested step.
bool PassesNestedSplitFilter(const MeshAssignment& a, const Shape& in, const Shape& out,
                             absl::Span<const int64_t> hierarchy);

// The assignment of a candidate (in_0, out_0): split pairs where both
// split, B or P pairs elsewhere.
MeshAssignment CandidateAssignment(const NdSbpSignature& sig);

// The NdSbp pair (in_0, out_0) of an assignment.
std::pair<NdSbp, NdSbp> AssignmentToNdSbps(const MeshAssignment& a);

// Step 3: OneFlow's measure key of a signature's blobs (code(B)=1, P=2,
// S(k)=3+k; M = fold v*11+code over mesh axes; key = fold v*97+M over
// blobs; unsigned 64-bit).
uint64_t OneFlowSbpMeasure(const NdSbpSignature& sig);
// Keeps the first candidate per measure key and sorts by key ascending.
void DedupAndSortByMeasure(std::vector<NdSbpSignature>* list);

// The whole hook: append the enumeration, drop candidates whose output
// cannot be split or whose nested splits do not divide, dedup and sort.
// For ops with blobs (in_0, out_0).
absl::Status ReshapeNdHook(NdCandidateContext& ctx);

}  // namespace oneflow_sbp::ops

#endif  // OPS_RESHAPE_RULE_H_
