// The real all-MiniLM-L6-v2 (`sbp embed`), against sentence-transformers'
// own vectors and token ids (tests/data/minilm/reference.json, written by
// tools/reference/minilm_reference.py): 24 sentences (punctuation, accents,
// numbers, long words, CJK, a text past the 256-token window), on 1 and 4
// ranks. Needs the model: tagged manual, run by .ci/run's real-model stage
// with OFS_MINILM_DIR=$(tools/fetch_model.sh).
#include <cmath>
#include <cstdlib>

#include "gtest/gtest.h"
#include "tests/models/embed_reference.h"
#include "tests/support/infer_test_util.h"
#include "models/bert_encoder.h"

namespace oneflow_sbp::cli {
namespace {

TEST(MiniLM, MatchesSentenceTransformersOnOneAndFourRanks) {
  const char* dir = std::getenv("OFS_MINILM_DIR");
  ASSERT_NE(dir, nullptr) << "set OFS_MINILM_DIR=$(tools/fetch_model.sh)";
  absl::StatusOr<testing::EmbedReference> ref =
      testing::ReadEmbedReference(testing::RunfilePath("tests/data/minilm/reference.json"));
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_GE(ref->sentences.size(), 20u);
  std::vector<std::vector<float>> one_rank;
  for (const char* mesh : {"cpu:0", "cpu:0-3 [2,2]"}) {
    absl::StatusOr<models::EmbedResult> r =
        models::EmbedTexts(**testing::EngineFor(), dir, *Placement::Parse(mesh), ref->sentences);
    ASSERT_TRUE(r.ok()) << mesh << ": " << r.status();
    EXPECT_EQ(r->config.max_seq_length, ref->max_seq_length);
    ASSERT_EQ(r->tokens, ref->token_ids) << mesh;
    for (size_t i = 0; i < ref->sentences.size(); ++i) {
      ASSERT_EQ(r->embeddings[i].size(), 384u);
      for (size_t k = 0; k < 384; ++k) {
        ASSERT_NEAR(r->embeddings[i][k], ref->embeddings[i][k], 1e-4)
            << mesh << " sentence " << i << " component " << k;
      }
    }
    if (one_rank.empty()) {
      one_rank = r->embeddings;
    } else {
      for (size_t i = 0; i < one_rank.size(); ++i) {
        for (size_t k = 0; k < 384; ++k) ASSERT_NEAR(r->embeddings[i][k], one_rank[i][k], 1e-5);
      }
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::cli
