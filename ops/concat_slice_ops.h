// Concatenation, splitting, slicing and expansion ops (SPEC.md §6):
// cat, stack, split, narrow, narrow_grad, slice, slice_grad, slice_update,
// expand. See concat_slice_ops.cc for each op's candidate list and where it
// departs from OneFlow.
#ifndef OPS_CONCAT_SLICE_OPS_H_
#define OPS_CONCAT_SLICE_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterConcatSliceOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_CONCAT_SLICE_OPS_H_
