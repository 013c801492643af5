// Calibration files: the text-format CalibrationProto (proto/boxing.proto)
// that `sbp calibrate` writes and every --calibration=FILE reads.
//
//   absl::StatusOr<Calibration> c = LoadCalibration("calib.txtpb");
//   // axis { bandwidth_bytes_per_s: 1.2e10 latency_s: 2.1e-05 } ...
//
// Axes the file does not list keep the defaults (25 GB/s, 10 us); so do
// p2p links if absent, and the per-rank compute rates (100 GFLOP/s, 50 GB/s
// memory) that `sbp plan` prices ops' local work with. Bandwidths and rates
// must be > 0 and latencies >= 0, at most NdSbp::kMaxAxes axes; anything
// else is kInvalidArgument naming the file and the field.
#ifndef IO_CALIBRATION_IO_H_
#define IO_CALIBRATION_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boxing/calibration.h"
#include "proto/boxing.pb.h"

namespace oneflow_sbp::io {

absl::StatusOr<boxing::Calibration> CalibrationFromProto(const oneflow::CalibrationProto& proto);
oneflow::CalibrationProto CalibrationToProto(const boxing::Calibration& calibration);

// `text` is a calibration file's contents; errors name `what` ("calibration
// file 'x'"). The `sbp` tool reads the file with a bound
// (io/bounded_read.h) and parses it here.
absl::StatusOr<boxing::Calibration> ParseCalibration(absl::string_view text, absl::string_view what);
// Reads at most kMaxCalibrationBytes of `path` (a larger file, /dev/zero
// say, is kResourceExhausted after reading that much) and parses it.
inline constexpr size_t kMaxCalibrationBytes = size_t{1} << 20;
absl::StatusOr<boxing::Calibration> LoadCalibration(const std::string& path);
absl::Status SaveCalibration(const std::string& path, const oneflow::CalibrationProto& proto);

}  // namespace oneflow_sbp::io
#endif  // IO_CALIBRATION_IO_H_
