// `sbp boxing`: the cheapest exact plan that converts a tensor from one
// nd_sbp (and placement) to another, step by step with bytes per rank.
#ifndef CLI_CMD_BOXING_H_
#define CLI_CMD_BOXING_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"

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
  // "threads" or "gloo": also run the plan on real ranks (seeded
  // integer-valued data), check the result and the bytes per rank.
  std::optional<std::string> execute;
  // World size for --execute (0: the largest rank of the placements + 1).
  int nproc = 0;
  uint64_t seed = 1;
  // With `execute`: re-run the checked plan this many more times, timed
  // (ExecutionSummary::repeat_seconds); 0: no timed runs.
  int repeat = 0;
};

// Plans through `engine` (its calibration and plan cache). With
// `execute`, a result that differs from the full tensor, or bytes that
// differ from the plan, set *exit_code to 1 (the report still prints).
absl::StatusOr<std::string> RunBoxing(const BoxingOptions& options, engine::Engine& engine,
                                      int* exit_code = nullptr);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_BOXING_H_
