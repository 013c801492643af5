// `sbp ckpt export` (cli/cmd_ckpt.h): a checkpoint saved in pieces from
// cpu:0-3 [2,2] comes out as one .safetensors file that the safetensors
// reader (checkpoint/safetensors.h) loads whole, every tensor and the metadata
// equal to what was saved; the summary line counts what the file holds.
// tests/cli/sbp_ckpt_export_test.sh checks the same command's file with plain
// numpy parsing of the format.
#include "cli/cmd_ckpt.h"

#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eager/tensor_layout.h"
#include "gtest/gtest.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"
#include "comm/inprocess_world.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

using eager::EagerContext;
using eager::GlobalTensor;

LocalTensor Values(DataType dtype, std::vector<int64_t> dims, double scale) {
  LocalTensor t = *LocalTensor::Empty(dtype, dims);
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, scale * (i + 1));
  return t;
}

TEST(SbpCkptCmd, ExportWritesEveryTensorWholeForTheSafetensorsReader) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = absl::StrCat(testing::TempDir(), "/ckpt-", ::getpid());
  const std::string out = dir + ".whole.safetensors";
  const Placement p = *Placement::Parse("cpu:0-3 [2,2]");
  struct Saved {
    const char* name;
    LocalTensor full;
    const char* layout;
  };
  // Uneven splits, both mesh axes, a partial sum, and three dtypes.
  const std::vector<Saved> saved = {
      {"w", Values(DataType::kFloat32, {7, 5}, 0.25), "(S(0), S(1))"},
      {"b", Values(DataType::kFloat32, {5}, -1.5), "(P, B)"},
      {"steps", Values(DataType::kInt64, {3, 2}, 1000), "(B, S(0))"},
      {"scale", Values(DataType::kFloat64, {2}, 0.1), "(B, B)"},
  };
  absl::StatusOr<std::vector<absl::Status>> st = comm::RunRanks(4, [&](comm::Communicator& w) {
    EagerContext ctx(*engine, w);
    std::vector<checkpoint::NamedTensor> tensors;
    for (const Saved& s : saved) {
      absl::StatusOr<GlobalTensor> t = eager::FromFull(ctx, s.full, p, *NdSbp::Parse(s.layout));
      if (!t.ok()) return t.status();
      tensors.push_back({s.name, *t});
    }
    return checkpoint::SaveCheckpoint(ctx, dir, tensors, {{"step", "7"}, {"model", "test"}});
  });
  ASSERT_TRUE(st.ok()) << st.status();
  for (const absl::Status& s : *st) ASSERT_TRUE(s.ok()) << s;
  ASSERT_GT(checkpoint::ReadCheckpointIndex(dir)->Find("w")->pieces.size(), 1u);

  absl::StatusOr<std::string> text = RunCkpt({"export", dir, out});
  ASSERT_TRUE(text.ok()) << text.status();
  // 7*5*4 + 5*4 + 3*2*8 + 2*8 bytes.
  EXPECT_EQ(*text, absl::StrCat("wrote ", out, ": 4 tensors, 224 bytes\n"));
  absl::StatusOr<std::unique_ptr<checkpoint::SafetensorsFile>> f = checkpoint::SafetensorsFile::Open(out);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->entries().size(), saved.size());
  for (const Saved& s : saved) {
    absl::StatusOr<LocalTensor> got = (*f)->Read(s.name);
    ASSERT_TRUE(got.ok()) << s.name << ": " << got.status();
    EXPECT_TRUE(ExactlyEqual(*got, s.full)) << s.name << ": " << DescribeMismatch(*got, s.full);
  }
  EXPECT_EQ((*f)->metadata(), (std::map<std::string, std::string>{{"step", "7"}, {"model", "test"}}));

  // The failures: a wrong word count, a missing checkpoint (nothing written).
  EXPECT_THAT(RunCkpt({"export", dir}), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string none = dir + "-none";
  absl::Status missing = RunCkpt({"export", none, none + ".safetensors"}).status();
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound)) << missing;
  EXPECT_NE(missing.message().find(none), std::string::npos) << missing;
  EXPECT_NE(::access((none + ".safetensors").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace oneflow_sbp::cli
