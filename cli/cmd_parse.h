// `sbp parse`: normalise and validate SBP, placement, shape and dtype
// strings, printing each in canonical compact form (and, with
// --format=json|textproto, OneFlow's proto form).
#ifndef CLI_CMD_PARSE_H_
#define CLI_CMD_PARSE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace oneflow_sbp::cli {

struct ParseOptions {
  std::optional<std::string> sbp;        // "S(0)"
  std::optional<std::string> nd_sbp;     // "(S(0), B)", JSON or textproto
  std::optional<std::string> placement;  // "cuda:0-7 [2,4]", JSON or textproto
  std::optional<std::string> shape;      // "10,6"
  std::optional<std::string> dtype;      // "f32"
  // Positional values; each is recognised by its form: a placement has
  // "<device>:", a dtype is a dtype name, a shape starts with a digit or
  // '[', anything else is an nd_sbp (a 1-entry one prints as an sbp too).
  std::vector<std::string> positional;
  std::string format = "text";
};

// The rendered output, or the first value's error (naming that value).
absl::StatusOr<std::string> RunParse(const ParseOptions& options);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_PARSE_H_
