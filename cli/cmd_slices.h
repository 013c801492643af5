// `sbp slices`: the exact index ranges every rank holds of a logical tensor
// laid out as an nd_sbp over a placement.
#ifndef CLI_CMD_SLICES_H_
#define CLI_CMD_SLICES_H_

#include <string>

#include "absl/status/statusor.h"

namespace oneflow_sbp::cli {

struct SlicesOptions {
  std::string shape;              // "10,6"
  std::string dtype = "f32";
  std::string placement;          // "cpu:0-3 [2,2]"
  std::string nd_sbp;             // "(S(0),S(1))"; "S(0)" on a 1-D placement
  std::string format = "text";
};

absl::StatusOr<std::string> RunSlices(const SlicesOptions& options);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_SLICES_H_
