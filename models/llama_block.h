// A LLaMA-style decoder model written with eager global tensors: token
// embedding, per layer RMSNorm -> attention (q/k/v projections, rotary
// embedding, causal scaled dot-product attention, output projection) ->
// residual add -> RMSNorm -> SwiGLU MLP -> residual add, then a final
// RMSNorm, the vocabulary projection and cross-entropy. The user marks
// only the inputs and the weights (MegatronMarking); every other layout
// is the engine's choice.
//
//   LlamaConfig cfg;
//   absl::StatusOr<LlamaModel> m = LlamaModel::Create(ctx, cfg, placement, seed);
//   absl::StatusOr<GlobalTensor> loss = m->Loss(ctx, batch);   // scalar
#ifndef MODELS_LLAMA_BLOCK_H_
#define MODELS_LLAMA_BLOCK_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"
#include "eager/program_recorder.h"

namespace oneflow_sbp::models {

struct LlamaConfig {
  int64_t batch = 4;
  int64_t seq = 16;
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t ffn = 128;
  int64_t vocab = 128;
  int layers = 1;
  // Adam.
  double learning_rate = 1e-2;
};

// kInvalidArgument naming the field unless every extent is >= 1, hidden
// divides by heads, the head dim is even (rotary), and batch, heads, ffn
// and vocab split over the mesh axes they are split on.
absl::Status ValidateConfig(const LlamaConfig& cfg, const Placement& placement);

// Layouts the user marks (Megatron style on a 2-axis mesh: data parallel
// on axis 0, tensor parallel on axis 1; everything B on 1 axis but the
// data, split on the batch).
struct Marking {
  NdSbp data;        // token ids, labels: batch split
  NdSbp replicated;  // norm weights, rotary tables
  NdSbp column;      // q/k/v, gate/up, vocabulary projection: output dim split
  NdSbp row;         // output and down projections: input dim split
  NdSbp vocab_rows;  // the embedding table: vocabulary split
};
Marking MegatronMarking(const Placement& placement);

class LlamaModel {
 public:
  // Weights seeded identically on every rank and for every placement, so a
  // single-rank run of the same seed is the reference.
  static absl::StatusOr<LlamaModel> Create(eager::EagerContext& ctx, const LlamaConfig& cfg,
                                           const Placement& placement, uint64_t seed);

  // Token ids [B,S], labels [B*S], and the rotary tables.
  absl::Status SetBatch(eager::EagerContext& ctx, uint64_t seed);

  // The mean cross-entropy over the batch (a scalar).
  absl::StatusOr<eager::GlobalTensor> Loss(eager::EagerContext& ctx);

  // One Adam step on every parameter with its gradient (grad mode off),
  // then clears the gradients. `step` counts from 1.
  absl::Status AdamStep(eager::EagerContext& ctx, int step);

  // Saves every parameter and its Adam state ("adam.m.<name>",
  // "adam.v.<name>") with `steps_done` and the seed in the metadata, as a
  // checkpoint (checkpoint/checkpoint.h). Every rank calls it.
  absl::Status Save(eager::EagerContext& ctx, const std::string& dir, int steps_done) const;

  // Replaces the parameters and the Adam state with a checkpoint's, laid
  // out as this model's marking on its placement (any mesh the checkpoint
  // came from); returns the steps it had done. kInvalidArgument when its
  // shapes or seed do not match this model's configuration.
  absl::StatusOr<int> Restore(eager::EagerContext& ctx, const std::string& dir);

  // Names every parameter and input for a program recorder.
  void NameTensors(eager::ProgramRecorder& recorder) const;

  // Every parameter with its name, in a fixed order.
  const std::vector<std::pair<std::string, eager::GlobalTensor>>& parameters() const {
    return params_;
  }

 private:
  absl::StatusOr<eager::GlobalTensor> Param(eager::EagerContext& ctx, const std::string& name,
                                            std::vector<int64_t> dims, const NdSbp& nd,
                                            double scale, double offset);
  absl::StatusOr<eager::GlobalTensor> Layer(eager::EagerContext& ctx, int layer,
                                            eager::GlobalTensor h);
  const eager::GlobalTensor& P(const std::string& name) const;

  LlamaConfig cfg_;
  Placement placement_;
  Marking marking_;
  uint64_t seed_ = 0;
  std::vector<std::pair<std::string, eager::GlobalTensor>> params_;
  std::vector<std::pair<eager::GlobalTensor, eager::GlobalTensor>> adam_state_;
  eager::GlobalTensor ids_, labels_, cos_, sin_;
};

}  // namespace oneflow_sbp::models
#endif  // MODELS_LLAMA_BLOCK_H_
