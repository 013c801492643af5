// Apply: one op call on global tensors, the eager interpreter's whole job,
// in visible stages:
//   infer   Engine::Infer (a cache hit on repeated layouts): the signature;
//   box     every input whose layout differs from the signature's is
//           redistributed (planner + executor); mutable inputs are pinned
//           to their layout (they are constraints, as OneFlow does);
//   compute the op's kernel on this rank's shards;
//   wrap    outputs carry the signature's layouts.
// Each stage is timed into the trace when tracing is on, and the call is
// recorded on the autograd tape when an input requires grad.
//
//   absl::StatusOr<std::vector<GlobalTensor>> y =
//       Apply(ctx, "matmul", {x, w}, Attrs({{"transpose_b", AttrValue(true)}}));
//
// Errors: kInvalidArgument for inputs on different placements ("Expected
// all tensors to be on the same placement"), inference errors, boxing and
// kernel errors (kUnimplemented "no cpu kernel for op 'x'" for an op
// without a kernel), each naming the op.
#ifndef EAGER_APPLY_H_
#define EAGER_APPLY_H_

#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"

namespace oneflow_sbp::eager {

absl::StatusOr<std::vector<GlobalTensor>> Apply(EagerContext& ctx,
                                                const std::shared_ptr<const OpCall>& call,
                                                absl::Span<const GlobalTensor> inputs);

// Apply with the signature fixed in advance (a graph-level plan's choice
// for this op, graph/program_planner.h): every blob is constrained to
// `required`, so inference keeps only that candidate and boxing moves the
// inputs to it. kFailedPrecondition naming the op and both signatures if
// inference still chooses another (the plan was made for other inputs, or
// with another registry); kInvalidArgument if `required` has the wrong
// number of blobs.
absl::StatusOr<std::vector<GlobalTensor>> ApplyWithSignature(
    EagerContext& ctx, const std::shared_ptr<const OpCall>& call,
    absl::Span<const GlobalTensor> inputs, const NdSbpSignature& required);

absl::StatusOr<std::vector<GlobalTensor>> Apply(EagerContext& ctx, absl::string_view op,
                                                absl::Span<const GlobalTensor> inputs,
                                                const AttrMap& attrs = AttrMap());

// Apply for ops with one output.
absl::StatusOr<GlobalTensor> Apply1(EagerContext& ctx, absl::string_view op,
                                    absl::Span<const GlobalTensor> inputs,
                                    const AttrMap& attrs = AttrMap());

// An AttrMap from pairs: Attrs({{"axis", AttrValue(1)}}).
AttrMap Attrs(std::initializer_list<std::pair<const char*, AttrValue>> attrs);

}  // namespace oneflow_sbp::eager

#endif  // EAGER_APPLY_H_
