// Making, moving and reading global tensors: ToGlobal / ToLocal (as
// OneFlow's to_global / to_local), Redistribute (boxing through the planner
// and the executor), and the test helpers FromFull / ToFull.
//
//   GlobalTensor x = *FromFull(ctx, full, placement, *NdSbp::Parse("(S(0),B)"));
//   GlobalTensor y = *Redistribute(ctx, x, placement, *NdSbp::Parse("(B,S(1))"));
//   LocalTensor whole = *ToFull(ctx, y);   // the logical tensor, on every rank
#ifndef EAGER_TENSOR_LAYOUT_H_
#define EAGER_TENSOR_LAYOUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"
#include "eager/trace.h"
#include "oneflow_sbp/storage/local_tensor.h"

namespace oneflow_sbp::eager {

// The global tensor of logical `shape` whose shard on this rank is
// `local`. kInvalidArgument unless local's dims are this rank's slice of
// `shape` as `nd_sbp` (ignored, and may be undefined, on ranks outside
// `placement`).
absl::StatusOr<GlobalTensor> ToGlobal(EagerContext& ctx, const LocalTensor& local,
                                      const Shape& shape, const Placement& placement,
                                      const NdSbp& nd_sbp);

// This rank's shard (undefined outside the placement).
LocalTensor ToLocal(const GlobalTensor& t);

// `t` laid out as `nd_sbp` on `placement`: the cached cheapest plan, run by
// the executor. The same layout and placement returns `t` itself. Every
// rank of either placement must call it.
absl::StatusOr<GlobalTensor> Redistribute(EagerContext& ctx, const GlobalTensor& t,
                                          const Placement& placement, const NdSbp& nd_sbp);

// The same, appending one BoxingEvent per plan step (named `blob`) to
// `events` when it is not null, and recording nothing in the trace itself
// (Apply nests these under its op event).
absl::StatusOr<GlobalTensor> Redistribute(EagerContext& ctx, const GlobalTensor& t,
                                          const Placement& placement, const NdSbp& nd_sbp,
                                          const std::string& blob,
                                          std::vector<BoxingEvent>* events);

// Test helper: every rank holds the same `full` tensor (on the host) and
// takes its part: its slice on S axes; on P axes the rank at coordinate 0
// of the P group keeps the value and the others hold zeros. The shard
// lives on the placement's device (copied there for a cuda placement). No
// communication.
absl::StatusOr<GlobalTensor> FromFull(EagerContext& ctx, const LocalTensor& full,
                                      const Placement& placement, const NdSbp& nd_sbp);

// Test helper: the logical tensor on every rank of t's placement (through
// Redistribute to all-B), on the host whatever the placement's device;
// undefined elsewhere.
absl::StatusOr<LocalTensor> ToFull(EagerContext& ctx, const GlobalTensor& t);

// The same tensor without autograd state (shares the shard).
GlobalTensor Detach(const GlobalTensor& t);

}  // namespace oneflow_sbp::eager

#endif  // EAGER_TENSOR_LAYOUT_H_
