// Kill a process in the middle of saving, again and again, at random
// moments: the checkpoint directory must always hold one whole version
// (the last committed one or the one being written), never a mix and never
// an unreadable index, and the next save must go on from it.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

extern char** environ;

namespace oneflow_sbp::io {
namespace {

std::string WriterPath() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/tests/checkpoint_kill_writer");
}

// The version `dir` holds, checked whole; 0 if nothing was committed yet.
int64_t CheckWholeVersion(const std::string& dir, int trial) {
  absl::StatusOr<CheckpointIndex> index = ReadCheckpointIndex(dir);
  if (absl::IsNotFound(index.status())) return 0;
  EXPECT_TRUE(index.ok()) << "trial " << trial << ": " << index.status();
  if (!index.ok()) return -1;
  int64_t k = 0;
  EXPECT_TRUE(absl::SimpleAtoi(index->metadata.at("k"), &k));
  const std::string out = absl::StrCat(dir, ".check.safetensors");
  const absl::Status s = ExportCheckpoint(dir, out);  // reads every piece, checks every checksum
  EXPECT_TRUE(s.ok()) << "trial " << trial << ": " << s;
  if (!s.ok()) return -1;
  std::unique_ptr<SafetensorsFile> f = *SafetensorsFile::Open(out);
  const LocalTensor w = *f->Read("w");
  const LocalTensor b = *f->Read("b");
  for (int64_t i = 0; i < w.elem_cnt(); ++i) {
    if (w.GetDouble(i) != k * (i + 1.0)) {
      ADD_FAILURE() << "trial " << trial << ": w[" << i << "] = " << w.GetDouble(i)
                    << " in version " << k;
      return -1;
    }
  }
  for (int64_t i = 0; i < b.elem_cnt(); ++i) {
    if (b.GetDouble(i) != k * (i + 1.0) / 2) {
      ADD_FAILURE() << "trial " << trial << ": b[" << i << "] mixes versions";
      return -1;
    }
  }
  return k;
}

TEST(CheckpointKillTest, KilledSavesLeaveOneWholeVersion) {
  const std::string dir = absl::StrCat(testing::TempDir(), "/killed-", ::getpid());
  std::mt19937 rng(20261127);  // fixed: the same kill moments every run
  std::uniform_int_distribution<int> delay_us(500, 40000);
  int64_t last = 0;
  int committed_kills = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::string writer = WriterPath();
    char* argv[] = {const_cast<char*>(writer.c_str()), const_cast<char*>(dir.c_str()), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, writer.c_str(), nullptr, nullptr, argv, environ), 0) << writer;
    absl::SleepFor(absl::Microseconds(delay_us(rng)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended by itself: " << status;
    const int64_t k = CheckWholeVersion(dir, trial);
    ASSERT_GE(k, last) << "trial " << trial << ": went back from version " << last;
    if (k > 0) ++committed_kills;
    last = k;
  }
  // Most kills land after the first commit, so the whole-version check ran.
  EXPECT_GE(committed_kills, 20);
  EXPECT_GT(last, 1);
}

}  // namespace
}  // namespace oneflow_sbp::io
