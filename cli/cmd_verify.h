// `sbp verify`: the soundness verifier. Runs every op's CPU kernel under
// every candidate signature on sharded in-process ranks and compares with
// one rank (kernels/verify/verifier.h has the method). --device=cuda
// runs the CUDA kernels on device copies of the shards instead, against
// the same CPU reference.
#ifndef CLI_CMD_VERIFY_H_
#define CLI_CMD_VERIFY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::cli {

struct VerifyCmdOptions {
  // One op or a comma list; none: every registered op.
  std::optional<std::string> op;
  // "2,3": only this mesh; none: [2] [3] [2,2] [2,3] and a [2,2,2] sample.
  std::optional<std::string> mesh;
  std::string format = "text";
  uint64_t seed = 1;
  // "cpu" or "cuda" ("gpu" too): where the sharded runs execute.
  std::string device = "cpu";
  // nullptr: KernelRegistry::Global().
  const kernels::KernelRegistry* kernels = nullptr;
};

// The report; *exit_code becomes 1 if any op failed, had no cpu kernel or
// no input recipe (ops without a kernel for --device=cuda are listed but
// do not fail). kInvalidArgument for a bad flag (unknown op, bad mesh,
// format, device), which the tool reports as a wrong command line (exit
// 2); kUnimplemented when the device has no backend in this build (naming
// `bazel build --config=cuda`) and kFailedPrecondition when the machine
// has no such device, both failures (exit 1).
absl::StatusOr<std::string> RunVerify(const VerifyCmdOptions& options,
                                      const OpRegistry& registry, int* exit_code = nullptr);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_VERIFY_H_
