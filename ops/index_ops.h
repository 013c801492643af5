// Indexing and "like" ops: embedding, embedding_grad, gather, dim_gather,
// where, reduce_sum_like and broadcast_like (SPEC.md §6). See
// index_ops.cc for each op's candidate list and where it departs from
// OneFlow.
#ifndef OPS_INDEX_OPS_H_
#define OPS_INDEX_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

absl::Status RegisterIndexOps(OpRegistry* registry);

}  // namespace oneflow_sbp::ops

#endif  // OPS_INDEX_OPS_H_
