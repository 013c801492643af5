// `sbp tour`: a tour of inference on fixed examples (layouts, exact uneven
// slices, signature inference and its explanation).
#ifndef CLI_CMD_TOUR_H_
#define CLI_CMD_TOUR_H_

#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunTour(engine::Engine& engine);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_TOUR_H_
