// `sbp calibrate`: measures this machine's links (latency and bandwidth of
// one collective step, and of point-to-point messages) on real ranks, and
// writes a calibration file that --calibration=FILE feeds to the planner.
#ifndef CLI_CMD_CALIBRATE_H_
#define CLI_CMD_CALIBRATE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace oneflow_sbp::cli {

struct CalibrateOptions {
  std::string backend = "threads";
  int nproc = 4;
  // Where to write the text-format CalibrationProto; none: only print.
  std::optional<std::string> out;
  std::string format = "text";
  // Bytes each rank contributes to the bandwidth measurement.
  int64_t large_bytes = int64_t{8} << 20;
};

absl::StatusOr<std::string> RunCalibrate(const CalibrateOptions& options);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_CALIBRATE_H_
