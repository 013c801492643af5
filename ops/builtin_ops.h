// The built-in op catalog.
//
//   OpRegistry registry;
//   absl::Status s = ops::RegisterBuiltinOps(&registry);
//   // or use ops::BuiltinOpRegistry(), the global registry with them added
//
// Families live in their own files (elementwise, binary, matmul, reduce,
// shape, ...); this file only lists them.
#ifndef OPS_BUILTIN_OPS_H_
#define OPS_BUILTIN_OPS_H_

#include "absl/status/status.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

// Registers every built-in op and its aliases (OneFlow/PyTorch names, see
// builtin_ops.cc); kAlreadyExists if one is already there.
absl::Status RegisterBuiltinOps(OpRegistry* registry);

// OpRegistry::Global() with the built-in ops registered (once, thread-safe).
// Custom ops registered with OFS_REGISTER_OP live in the same registry.
OpRegistry& BuiltinOpRegistry();

}  // namespace oneflow_sbp::ops

#endif  // OPS_BUILTIN_OPS_H_
