// `sbp infer`: choose the SBP signature of one op call, as the engine would
// in an eager global-tensor program, and explain the choice on request.
#ifndef CLI_CMD_INFER_H_
#define CLI_CMD_INFER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace oneflow_sbp::cli {

struct InferOptions {
  std::optional<std::string> op;
  // "transpose_b=true", "perm=1,0,2".
  std::vector<std::string> attrs;
  std::optional<std::string> placement;
  // "f32[64,32]:(S(0),B)", optionally "bn=..." ("gamma=f32[8]:B").
  std::vector<std::string> inputs;
  // "a_0=(S(0),B)".
  std::vector<std::string> constraints;
  std::optional<std::string> cost;
  bool explain = false;
  std::string format = "text";
  // Contents of --request (JSON or text-format InferRequestProto); flags
  // given alongside override its fields.
  std::optional<std::string> request;
};

// Through `engine`: its registry, cost policies and inference cache.
absl::StatusOr<std::string> RunInfer(const InferOptions& options, engine::Engine& engine);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_INFER_H_
