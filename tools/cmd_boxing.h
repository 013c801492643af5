// `sbp boxing`: the cheapest exact plan that converts a tensor from one
// nd_sbp (and placement) to another, step by step with bytes per rank.
#ifndef TOOLS_CMD_BOXING_H_
#define TOOLS_CMD_BOXING_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "oneflow_sbp/engine.h"

namespace oneflow_sbp::cli {

struct BoxingOptions {
  std::string shape;
  std::string dtype = "f32";
  std::string placement;
  std::string from;
  std::string to;
  // Defaults to `placement`.
  std::optional<std::string> to_placement;
  std::string format = "text";
};

// Plans through `engine` (its calibration and plan cache).
absl::StatusOr<std::string> RunBoxing(const BoxingOptions& options, Engine& engine);

}  // namespace oneflow_sbp::cli

#endif  // TOOLS_CMD_BOXING_H_
