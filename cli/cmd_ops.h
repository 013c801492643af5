// `sbp ops [OP]`: the registered ops with their inputs, outputs and
// attributes; ops without an SBP rule and ops without a CPU kernel (which
// the eager interpreter's Apply rejects) are marked.
#ifndef CLI_CMD_OPS_H_
#define CLI_CMD_OPS_H_

#include <string>

#include "absl/status/statusor.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::cli {

// `op` empty lists every op; otherwise one op in detail, including its
// 1-D candidate rule on example inputs when `example_inputs` is given.
// Kernels are looked up in `kernels` (nullptr: KernelRegistry::Global(),
// which holds what the binary links).
absl::StatusOr<std::string> RunOps(const std::string& op, const std::string& format,
                                   const OpRegistry& registry,
                                   const kernels::KernelRegistry* kernels = nullptr);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_OPS_H_
