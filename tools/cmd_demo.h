// `sbp demo`: a built-in tour of the engine on fixed examples, the main
// job the README's first command runs.
#ifndef TOOLS_CMD_DEMO_H_
#define TOOLS_CMD_DEMO_H_

#include <string>

#include "absl/status/statusor.h"
#include "oneflow_sbp/engine.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunDemo(Engine& engine);

}  // namespace oneflow_sbp::cli

#endif  // TOOLS_CMD_DEMO_H_
