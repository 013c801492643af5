// Test helper for checkpoint_kill_test: saves version after version of a
// two-tensor checkpoint from 2 rank threads into argv[1] until killed.
// Version k holds w[i] = k * (i + 1) and b[i] = k * (i + 1) / 2, so a
// reader can tell a whole version from a mix of two.
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "eager/tensor_layout.h"
#include "checkpoint/checkpoint.h"
#include "comm/inprocess_world.h"

using namespace oneflow_sbp;  // NOLINT: a test helper's main

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: checkpoint_kill_writer DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::unique_ptr<engine::Engine> engine = *oneflow_sbp::engine::Engine::Create();
  const Placement p = *Placement::Parse("cpu:0-1");
  // Go on from the committed version, as a resumed job would.
  int64_t first = 1;
  if (absl::StatusOr<checkpoint::CheckpointIndex> old = checkpoint::ReadCheckpointIndex(dir); old.ok()) {
    int64_t k = 0;
    if (absl::SimpleAtoi(old->metadata["k"], &k)) first = k + 1;
  }
  for (int64_t k = first;; ++k) {
    LocalTensor w = *LocalTensor::Empty(DataType::kFloat32, {64, 32});
    LocalTensor b = *LocalTensor::Empty(DataType::kFloat32, {32});
    for (int64_t i = 0; i < w.elem_cnt(); ++i) w.SetDouble(i, k * (i + 1.0));
    for (int64_t i = 0; i < b.elem_cnt(); ++i) b.SetDouble(i, k * (i + 1.0) / 2);
    absl::StatusOr<std::vector<absl::Status>> st = comm::RunRanks(2, [&](comm::Communicator& world) {
      eager::EagerContext ctx(*engine, world);
      absl::StatusOr<eager::GlobalTensor> gw = eager::FromFull(ctx, w, p, *NdSbp::Parse("S(0)"));
      absl::StatusOr<eager::GlobalTensor> gb = eager::FromFull(ctx, b, p, *NdSbp::Parse("B"));
      if (!gw.ok() || !gb.ok()) return absl::InternalError("FromFull");
      return checkpoint::SaveCheckpoint(ctx, dir, {{"w", *gw}, {"b", *gb}}, {{"k", absl::StrCat(k)}});
    });
    if (!st.ok() || !(*st)[0].ok() || !(*st)[1].ok()) {
      std::fprintf(stderr, "save %lld failed\n", static_cast<long long>(k));
      return 1;
    }
    std::printf("saved %lld\n", static_cast<long long>(k));
    std::fflush(stdout);
  }
}
