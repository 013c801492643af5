// Reference sentence embeddings written by tools/reference/minilm_reference.py
// (sentence-transformers / transformers): the sentences, their token ids
// and unit vectors, for comparing `sbp embed` with the model's own code.
#ifndef TESTS_MODELS_EMBED_REFERENCE_H_
#define TESTS_MODELS_EMBED_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace oneflow_sbp::testing {

struct EmbedReference {
  std::vector<std::string> sentences;
  std::vector<std::vector<int32_t>> token_ids;
  std::vector<std::vector<double>> embeddings;
  int64_t max_seq_length = 0;
};

absl::StatusOr<EmbedReference> ReadEmbedReference(const std::string& path);

// A file of this test's runfiles (TEST_SRCDIR/TEST_WORKSPACE/relative).
std::string RunfilePath(const std::string& relative);

}  // namespace oneflow_sbp::testing

#endif  // TESTS_MODELS_EMBED_REFERENCE_H_
