// `sbp embed`: sentence embeddings from a BERT sentence encoder
// (all-MiniLM-L6-v2 from tools/fetch_model.sh), loaded sharded onto a
// mesh of rank threads (models/bert_encoder.h).
#ifndef CLI_CMD_EMBED_H_
#define CLI_CMD_EMBED_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace oneflow_sbp::cli {

struct EmbedOptions {
  std::string model;                        // the model directory
  std::string placement = "cpu:0-3 [2,2]";  // texts on axis 0, tensor parallel on axis 1
  std::string format = "text";              // text|json
  int repeat = 1;                           // timed runs after one load
  std::vector<std::string> texts;
};

absl::StatusOr<std::string> RunEmbed(const EmbedOptions& options, engine::Engine& engine);

}  // namespace oneflow_sbp::cli

#endif  // CLI_CMD_EMBED_H_
