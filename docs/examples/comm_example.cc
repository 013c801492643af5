// The collectives example of docs/COMM.md, as a program on 6 rank threads
// (a [2,3] mesh): the lines between the markers are the example, word for
// word (//docs/examples:examples_in_sync_test), and this target builds and
// runs it and checks what every rank received.
#include <cstdint>
#include <iostream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"

namespace oneflow_sbp::comm {

absl::Status EveryRank(Communicator& world) {
  // [example]
  // Every rank runs this; `world` came from RunRanks (threads) or
  // ConnectFromEnvironment (a process started by the launcher).
  const std::vector<int64_t> counts = {3, 0, 2, 1, 1, 2};  // elements per rank, uneven
  std::vector<float> mine(counts[world.rank()], 1.0f * world.rank()), all(9);
  absl::Status s = world.AllGatherV(mine.data(), all.data(), counts, DataType::kFloat32);
  if (!s.ok()) return s;

  CallOptions max;                                          // options: timeout, reduce op, traffic
  max.reduce_op = ReduceOp::kMax;
  std::vector<float> x = {1.0f * world.rank(), 2, 3, 4};
  s = world.AllReduce(x.data(), x.data(), 4, DataType::kFloat32, max);  // in place
  if (!s.ok()) return s;

  auto row = world.ForMeshAxes({2, 3}, AxisBit(1));         // my row of a [2,3] mesh
  if (!row.ok()) return row.status();
  const std::vector<int64_t> row_counts = {2, 1, 1};        // chunks of the row's 3 members
  std::vector<float> chunk(row_counts[(*row)->rank()]);
  s = (*row)->ReduceScatterV(x.data(), chunk.data(), row_counts, DataType::kFloat32);
  // [end example]
  if (!s.ok()) return s;
  // all: rank 0's three 0s, rank 2's two 2s, then 3, 4, 5, 5.
  const std::vector<float> want_all = {0, 0, 0, 2, 2, 3, 4, 5, 5};
  if (all != want_all) return absl::InternalError("all-gather: wrong result");
  // x after the max: {5, 2, 3, 4} everywhere; a row sums 3 copies of it.
  const std::vector<float> sums = {15, 6, 9, 12};
  const int64_t first = (*row)->rank() == 0 ? 0 : (*row)->rank() + 1;
  for (size_t i = 0; i < chunk.size(); ++i) {
    if (chunk[i] != sums[first + i]) {
      return absl::InternalError(absl::StrCat("reduce-scatter: element ", i, " is ", chunk[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::comm

int main() {
  using oneflow_sbp::comm::RunRanks;
  absl::StatusOr<std::vector<absl::Status>> ranks = RunRanks(6, oneflow_sbp::comm::EveryRank);
  if (!ranks.ok()) {
    std::cerr << "comm_example: " << ranks.status() << "\n";
    return 1;
  }
  for (size_t r = 0; r < ranks->size(); ++r) {
    if (!(*ranks)[r].ok()) {
      std::cerr << "comm_example: rank " << r << ": " << (*ranks)[r] << "\n";
      return 1;
    }
  }
  std::cout << "6 ranks: all-gather, in-place all-reduce (max) and a row reduce-scatter agree\n";
  return 0;
}
