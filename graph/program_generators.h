// Programs for tests, benchmarks and demos of graph-level selection, built
// from ops of the built-in catalog (`sbp ops`).
//
//   absl::StatusOr<Program> gpt = GptProgram(registry, placement, GptConfig{.layers = 24});
//   absl::StatusOr<Program> mlp = MlpProgram(registry, placement, MlpConfig());
//   absl::StatusOr<Program> r = RandomProgram(registry, placement, /*seed=*/7, /*num_ops=*/8);
#ifndef GRAPH_PROGRAM_GENERATORS_H_
#define GRAPH_PROGRAM_GENERATORS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "graph/program.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::graph {

// A GPT-style decoder stack on activations x f32[batch, seq, hidden]
// (marked input, layout `input_nd_sbp`); every weight is free. Per layer
// (23 ops, 8 weights):
//   attention  rms_norm(x, g1) -> q, k, v = broadcast_matmul(., Wq|Wk|Wv)
//              -> reshape [b,s,heads,d] -> transpose [b,heads,s,d]
//              -> batch_matmul(q, k^T) -> scalar_mul(1/sqrt(d)) -> softmax
//              -> batch_matmul(., v) -> transpose -> reshape [b,s,hidden]
//              -> broadcast_matmul(., Wo) -> add_n(x, .)
//   MLP        rms_norm(., g2) -> broadcast_matmul(., W1 [hidden, ffn])
//              -> gelu -> broadcast_matmul(., W2 [ffn, hidden]) -> add_n
// The last layer's output is the program output (no required layout).
struct GptConfig {
  int layers = 2;
  int64_t batch = 8;
  int64_t seq = 128;
  int64_t hidden = 512;
  int64_t heads = 8;
  int64_t ffn = 2048;
  // Empty: (S(0), B, ...) - data parallel on mesh axis 0.
  std::string input_nd_sbp;
};
absl::StatusOr<Program> GptProgram(const OpRegistry& registry, const Placement& placement,
                                   const GptConfig& config);

// Two-layer MLP: y = gelu(x · W1) · W2, with x f32[batch, hidden] marked
// `x_nd_sbp` and W1 [hidden, ffn], W2 [ffn, hidden] free; y is the output,
// required as `y_nd_sbp` (empty: no required layout, only no P).
struct MlpConfig {
  int64_t batch = 64;
  int64_t hidden = 1024;
  int64_t ffn = 4096;
  std::string x_nd_sbp = "(S(0), B)";
  std::string y_nd_sbp = "(S(0), B)";
};
absl::StatusOr<Program> MlpProgram(const OpRegistry& registry, const Placement& placement,
                                   const MlpConfig& config);

// A random program of `num_ops` ops on f32[16, 16] tensors from one marked
// input x (layout: all-B except S(0) on mesh axis 0): unary ops (relu,
// gelu, tanh, softmax), residual adds of two or three earlier
// tensors (add_n), and
// matmuls by a free weight [16, 16] (new, or shared with an earlier
// matmul) or by an earlier tensor. Operands are drawn from the last few
// tensors, so chains, diamonds and residual blocks all appear, and shared
// weights leave cores the reductions cannot remove. Deterministic for a
// seed.
absl::StatusOr<Program> RandomProgram(const OpRegistry& registry, const Placement& placement,
                                      uint64_t seed, int num_ops);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_PROGRAM_GENERATORS_H_
