// A BERT sentence encoder on eager global tensors, loaded from a Hugging
// Face model directory (config.json, model.safetensors, vocab.txt, and
// sentence-transformers' sentence_bert_config.json if present):
// all-MiniLM-L6-v2 and models of its shape.
//
//   BertConfig cfg = *ReadBertConfig(dir);
//   // on every rank of `placement`:
//   BertEncoder enc = *BertEncoder::Load(ctx, cfg, *weights, placement);
//   GlobalTensor e = *enc.Embed(ctx, batch);   // [N, hidden] unit vectors
//
// The forward pass is BERT's (word + position + token-type embeddings,
// LayerNorm; per layer self-attention with the padding mask, output
// projection, residual, LayerNorm, GELU (erf) FFN, residual, LayerNorm),
// then sentence-transformers' head: mean pooling over the tokens the mask
// keeps, L2 normalisation.
//
// Layout: on a 2-axis mesh texts split on axis 0 and the weights are
// tensor parallel on axis 1; on one axis the weights are tensor parallel
// and texts are whole. Tensor parallel is Megatron's: q/k/v and the FFN's
// first projection split their output features (weight rows, as PyTorch
// stores [out, in]) so heads and FFN columns split; the attention output
// and the FFN's second projection split their input features; the word
// embedding splits the vocabulary. Only the weights and inputs are marked;
// every other layout is the engine's choice. Each rank reads only its
// slice of every weight (checkpoint/sharded_load.h).
#ifndef MODELS_BERT_ENCODER_H_
#define MODELS_BERT_ENCODER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"
#include "checkpoint/safetensors.h"
#include "models/wordpiece_tokenizer.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::models {

struct BertConfig {
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t intermediate = 0;
  int64_t max_position = 0;
  int64_t type_vocab = 0;
  double layer_norm_eps = 1e-12;
  // Tokens per text, [CLS] and [SEP] included: sentence_bert_config.json's
  // max_seq_length when present (256 for all-MiniLM-L6-v2), else
  // min(512, max_position).
  int64_t max_seq_length = 512;
  std::string name;  // the model directory, for reports
};

// kNotFound without config.json; kInvalidArgument naming the field for a
// missing or impossible value, or an activation other than exact GELU.
absl::StatusOr<BertConfig> ReadBertConfig(const std::string& model_dir);

class BertEncoder {
 public:
  // Every rank of the placement calls it; kInvalidArgument when heads,
  // the FFN or the vocabulary do not fit the tensor-parallel extent, or a
  // weight is missing or of the wrong shape (naming it).
  static absl::StatusOr<BertEncoder> Load(eager::EagerContext& ctx, const BertConfig& config,
                                          checkpoint::SafetensorsFile& weights, const Placement& placement);

  // Unit vectors [N, hidden] for a padded batch (every encoding the same
  // length). N must split over the data axis (pad the batch).
  absl::StatusOr<eager::GlobalTensor> Embed(eager::EagerContext& ctx,
                                            const std::vector<models::Encoding>& batch);

  // The data-parallel extent (mesh axis 0 of a 2-axis mesh, else 1).
  int64_t data_extent() const;

 private:
  const eager::GlobalTensor& W(const std::string& name) const;
  absl::StatusOr<eager::GlobalTensor> Linear(eager::EagerContext& ctx, const eager::GlobalTensor& x,
                                             const std::string& prefix);
  absl::StatusOr<eager::GlobalTensor> Norm(eager::EagerContext& ctx, const eager::GlobalTensor& x,
                                           const std::string& prefix);

  BertConfig config_;
  Placement placement_;
  std::map<std::string, eager::GlobalTensor> weights_;
};

// Texts to unit vectors on `placement` (rank threads of this process):
// tokenization, a padded batch (texts padded to a multiple of the data
// extent, removed after), the forward pass, and the vectors gathered.
struct EmbedResult {
  BertConfig config;
  std::vector<std::vector<int32_t>> tokens;  // ids per text, specials included
  std::vector<std::vector<float>> embeddings;
  // Weight bytes each rank read (parallel_id order).
  std::vector<int64_t> bytes_read;
  double load_seconds = 0;
  double embed_seconds = 0;  // the first run
  // With `repeat` runs: per run, tokenization + forward pass + gathering
  // the vectors, after the weights are loaded once (wall seconds, and CPU
  // seconds of the whole process: every rank thread). For benchmarks: a
  // loaded machine inflates wall time, CPU time much less.
  std::vector<double> run_seconds;
  std::vector<double> run_cpu_seconds;
};
// `repeat` >= 1 runs of the same texts on the loaded weights (every run's
// vectors are the same; the last is returned); kInvalidArgument outside
// [1, 1000].
absl::StatusOr<EmbedResult> EmbedTexts(engine::Engine& engine, const std::string& model_dir,
                                       const Placement& placement,
                                       const std::vector<std::string>& texts, int repeat = 1);

}  // namespace oneflow_sbp::models
#endif  // MODELS_BERT_ENCODER_H_
