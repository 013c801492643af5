// The BERT sentence encoder (`sbp embed`) on a tiny BERT whose seeded
// weights and reference outputs came from transformers + the
// sentence-transformers pipeline (tests/data/tiny_bert, written by
// tools/reference/minilm_reference.py): token ids equal, vectors within
// 1e-4 of the reference, 4 ranks within 1e-5 of 1 rank, each rank reading
// only its slice of the weights; and the failure paths.
#include "models/bert_encoder.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/models/embed_reference.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

engine::Engine& Eng() { return **testing::EngineFor(); }

const std::string& ModelDir() {
  static const std::string dir = testing::RunfilePath("tests/data/tiny_bert");
  return dir;
}

TEST(BertEncoder, TinyBertMatchesTransformersOnEveryMesh) {
  absl::StatusOr<testing::EmbedReference> ref =
      testing::ReadEmbedReference(ModelDir() + "/reference.json");
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_GE(ref->sentences.size(), 20u);
  std::vector<std::vector<float>> one_rank;
  for (const char* mesh : {"cpu:0", "cpu:0-3 [2,2]", "cpu:0-3", "cpu:0-1 [2,1]"}) {
    absl::StatusOr<models::EmbedResult> r =
        models::EmbedTexts(Eng(), ModelDir(), *Placement::Parse(mesh), ref->sentences);
    ASSERT_TRUE(r.ok()) << mesh << ": " << r.status();
    ASSERT_EQ(r->tokens, ref->token_ids) << mesh;
    double worst = 0;
    for (size_t i = 0; i < ref->sentences.size(); ++i) {
      for (size_t k = 0; k < r->embeddings[i].size(); ++k) {
        worst = std::max(worst, std::abs(r->embeddings[i][k] - ref->embeddings[i][k]));
      }
    }
    EXPECT_LT(worst, 1e-4) << mesh;
    if (one_rank.empty()) {
      one_rank = r->embeddings;
    } else {
      for (size_t i = 0; i < one_rank.size(); ++i) {
        for (size_t k = 0; k < one_rank[i].size(); ++k) {
          EXPECT_NEAR(r->embeddings[i][k], one_rank[i][k], 1e-5) << mesh << " text " << i;
        }
      }
    }
    // Tensor parallel on 2 ranks: each reads about half of the weights.
    if (std::string(mesh) == "cpu:0-3 [2,2]") {
      const int64_t total = r->bytes_read[0] + r->bytes_read[1];
      EXPECT_LT(r->bytes_read[0], total * 0.75);
      EXPECT_EQ(r->bytes_read[0], r->bytes_read[2]);  // the data axis reads the same slice
    }
  }
}

// --repeat: the weights load once, every run is timed, every run gives
// the same vectors as a single run, bit for bit.
TEST(BertEncoder, RepeatedRunsAreTimedAndIdentical) {
  const std::vector<std::string> texts = {"a short text", "and a somewhat longer second one"};
  for (const char* mesh : {"cpu:0", "cpu:0-3 [2,2]"}) {
    absl::StatusOr<models::EmbedResult> once = models::EmbedTexts(Eng(), ModelDir(), *Placement::Parse(mesh), texts);
    ASSERT_TRUE(once.ok()) << mesh << ": " << once.status();
    EXPECT_EQ(once->run_seconds.size(), 1u);
    absl::StatusOr<models::EmbedResult> three =
        models::EmbedTexts(Eng(), ModelDir(), *Placement::Parse(mesh), texts, /*repeat=*/3);
    ASSERT_TRUE(three.ok()) << mesh << ": " << three.status();
    ASSERT_EQ(three->run_seconds.size(), 3u);
    ASSERT_EQ(three->run_cpu_seconds.size(), 3u);
    EXPECT_EQ(three->embed_seconds, three->run_seconds[0]);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_GT(three->run_seconds[i], 0) << mesh;
      EXPECT_GE(three->run_cpu_seconds[i], 0) << mesh;
    }
    EXPECT_EQ(three->tokens, once->tokens) << mesh;
    EXPECT_EQ(three->embeddings, once->embeddings) << mesh;
  }
  for (int bad : {0, -1, 1001}) {
    absl::StatusOr<models::EmbedResult> r =
        models::EmbedTexts(Eng(), ModelDir(), *Placement::Parse("cpu:0"), texts, bad);
    EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
    EXPECT_NE(r.status().message().find("--repeat"), std::string::npos) << r.status();
  }
}

TEST(BertEncoder, FailurePaths) {
  EXPECT_THAT(models::ReadBertConfig("/nonexistent-model"), StatusIs(absl::StatusCode::kNotFound));
  // 4 heads do not split over 3 tensor-parallel ranks.
  absl::StatusOr<models::EmbedResult> r = models::EmbedTexts(Eng(), ModelDir(), *Placement::Parse("cpu:0-2"), {"x"});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument)) << r.status();
  EXPECT_NE(r.status().message().find("heads"), std::string::npos) << r.status();
  r = models::EmbedTexts(Eng(), ModelDir(), *Placement::Parse("cpu:4-5"), {"x"});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument)) << r.status();
}

}  // namespace
}  // namespace oneflow_sbp::cli
