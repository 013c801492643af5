// `sbp demo` end to end on in-process ranks: a LLaMA-style block trains
// through the eager interpreter (every kernel, backward rule and boxing
// step on the way), its loss goes down, and the loss and every gradient
// match the single-rank run; bad options are refused.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/infer_test_util.h"
#include "tools/cmd_demo.h"

namespace oneflow_sbp::cli {
namespace {

using ::testing::HasSubstr;

Engine& Eng() { return **testing::EngineFor(); }

TEST(SbpDemo, DefaultMeshTrainsAndMatchesOneRank) {
  DemoOptions o;  // [2,2], 1 layer, 3 steps
  o.all_ops = true;
  int exit_code = 0;  // RunDemo sets 1 on a mismatch
  absl::StatusOr<std::string> out = RunDemo(o, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("loss matches"));
  EXPECT_THAT(*out, HasSubstr("12 gradients match"));
  EXPECT_THAT(*out, HasSubstr("loss went down"));
  // The new ops ran, forward and backward, and Adam updated the weights.
  for (const char* op : {"rotary_embedding ", "rotary_embedding_grad",
                         "scaled_dot_product_attention ", "scaled_dot_product_attention_grad"}) {
    EXPECT_THAT(*out, HasSubstr(op));
  }
}

TEST(SbpDemo, OneAxisMeshAndTwoLayers) {
  DemoOptions o;
  o.mesh = "2";
  o.model.layers = 2;
  o.model.seq = 8;
  int exit_code = 0;  // RunDemo sets 1 on a mismatch
  absl::StatusOr<std::string> out = RunDemo(o, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("21 gradients match"));
}

TEST(SbpDemo, BadOptionsAreRefused) {
  DemoOptions o;
  o.steps = 1;
  EXPECT_THAT(std::string(RunDemo(o, Eng()).status().message()), HasSubstr("--steps"));
  o = DemoOptions();
  o.mesh = "2,2,2";
  EXPECT_THAT(std::string(RunDemo(o, Eng()).status().message()), HasSubstr("--mesh=2,2,2"));
  o = DemoOptions();
  o.model.heads = 3;  // 64 does not split into 3 heads
  EXPECT_THAT(std::string(RunDemo(o, Eng()).status().message()), HasSubstr("--heads=3"));
}

}  // namespace
}  // namespace oneflow_sbp::cli
