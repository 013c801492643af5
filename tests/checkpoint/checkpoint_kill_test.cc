// Kill a process in the middle of saving, again and again, at random
// moments: the checkpoint directory must always hold one whole version
// (the last committed one or the one being written), never a mix and never
// an unreadable index, and the next save must go on from it.
#include <poll.h>
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
#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"

extern char** environ;

namespace oneflow_sbp::io {
namespace {

std::string WriterPath() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/tests/checkpoint/checkpoint_kill_writer");
}

// The version `dir` holds, checked whole; 0 if nothing was committed yet.
int64_t CheckWholeVersion(const std::string& dir, int trial) {
  absl::StatusOr<checkpoint::CheckpointIndex> index = checkpoint::ReadCheckpointIndex(dir);
  if (absl::IsNotFound(index.status())) return 0;
  EXPECT_TRUE(index.ok()) << "trial " << trial << ": " << index.status();
  if (!index.ok()) return -1;
  int64_t k = 0;
  EXPECT_TRUE(absl::SimpleAtoi(index->metadata.at("k"), &k));
  const std::string out = absl::StrCat(dir, ".check.safetensors");
  const absl::Status s = checkpoint::ExportCheckpoint(dir, out);  // reads every piece, checks every checksum
  EXPECT_TRUE(s.ok()) << "trial " << trial << ": " << s;
  if (!s.ok()) return -1;
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(out);
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

// Blocks until the writer (whose stdout is `fd`) reports its first commit
// ("saved K"), so that a slow machine (sanitizers, a loaded CI box) still
// kills in the middle of later saves instead of always before the first one.
// False after 60 s without one or when the writer closed its stdout.
bool WaitForFirstSave(int fd) {
  std::string seen;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (seen.find("saved ") == std::string::npos) {
    const int left_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left_ms <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, left_ms) <= 0) return false;
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return false;
    seen.append(buf, static_cast<size_t>(n));
  }
  return true;
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
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, writer.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ASSERT_EQ(spawned, 0) << writer;
    // Odd trials kill at a random moment after start (possibly before any
    // commit); even ones first wait for a commit, so every run moves on
    // however slow the machine is.
    const bool waited = trial % 2 == 0 ? WaitForFirstSave(out[0]) : true;
    absl::SleepFor(absl::Microseconds(delay_us(rng)));
    ::kill(pid, SIGKILL);
    ::close(out[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(waited) << "trial " << trial << ": the writer never committed a save";
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended by itself: " << status;
    const int64_t k = CheckWholeVersion(dir, trial);
    ASSERT_GE(k, last) << "trial " << trial << ": went back from version " << last;
    if (k > 0) ++committed_kills;
    last = k;
  }
  // Every even trial commits at least once, so the whole-version check ran.
  EXPECT_GE(committed_kills, 20);
  EXPECT_GT(last, 1);
}

}  // namespace
}  // namespace oneflow_sbp::io
