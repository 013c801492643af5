// Checks of every collective that any backend can run: each rank calls the
// same function with its communicator, and gets OK or an error naming the
// first wrong element or byte count. Shared by the in-process test
// (tests/runtime/comm_test.cc) and the Gloo worker processes
// (tests/runtime/comm_worker_main.cc), so both backends pass the same checks.
//
// Data are small integers (|x| <= 20, or 0/1 for bool), so sums over up to
// a few dozen ranks are exact in every type, f16 and bf16 included, and the
// expected values can be computed in double.
//
// Byte counters are compared with the formulas of communicator.h, written
// here a second time from the planner's point of view (chunk sizes in, per
// rank bytes out) rather than derived from the implementation.
#ifndef TESTS_RUNTIME_COMM_SCENARIOS_H_
#define TESTS_RUNTIME_COMM_SCENARIOS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "comm/communicator.h"
#include "oneflow_sbp/storage/device_ops.h"

namespace oneflow_sbp::comm::testing {

// Where the checks' buffers live, for every thread of the process: null
// (the default) is host memory; otherwise memory allocated by `ops` (not
// owned), filled and read through host copies, so a device world sees
// device pointers. Set it before the ranks start.
void SetScenarioBufferOps(DeviceOps* ops);

// Expected bytes of this rank (position k) for each collective.
Traffic ExpectedAllGather(absl::Span<const int64_t> chunk_bytes, int k);
Traffic ExpectedReduceScatter(absl::Span<const int64_t> chunk_bytes, int k);
Traffic ExpectedAllReduce(int64_t count, int element_bytes, int n, int k);
Traffic ExpectedBroadcast(int64_t bytes, int n, int k, int root);
Traffic ExpectedBarrier(int n);

// Uneven per-member counts, zeros included, that differ by `pattern`.
std::vector<int64_t> UnevenCounts(int n, int pattern);

// Each runs one call of the collective with data from `salt`, and checks
// the result on this rank and the bytes this rank moved.
absl::Status CheckAllGatherV(Communicator& comm, absl::Span<const int64_t> counts, DataType dtype,
                             int salt, bool in_place);
absl::Status CheckReduceScatterV(Communicator& comm, absl::Span<const int64_t> counts,
                                 DataType dtype, ReduceOp op, int salt);
absl::Status CheckAllReduce(Communicator& comm, int64_t count, DataType dtype, ReduceOp op,
                            int salt, bool in_place);
absl::Status CheckAllToAllV(Communicator& comm, DataType dtype, int salt);
absl::Status CheckBroadcast(Communicator& comm, int64_t count, DataType dtype, int root, int salt);
// Every rank sends to rank + 1 and receives from rank - 1 (even ranks send
// first), twice, with different counts.
absl::Status CheckSendRecv(Communicator& comm, DataType dtype, int salt);
absl::Status CheckBarrier(Communicator& comm);

// All of the above over several count patterns, dtypes and reduce ops
// (every dtype x op for AllReduce), broadcast from every root, and one
// broadcast larger than a pipeline segment.
absl::Status CheckEveryCollective(Communicator& comm);

// Collectives whose messages are several wire segments (the Gloo transport
// cuts messages at 1 MiB and reduces each piece of a ring step as it
// arrives): all-reduce in place and not for each reduce op and a 2-byte
// dtype, reduce-scatter and all-gather, each rank's chunk about 2.5
// segments. Megabytes per rank, so run once per world, not in loops.
absl::Status CheckMultiSegmentCollectives(Communicator& comm);

// On a world of product(hierarchy) ranks: for every nonempty subset of mesh
// axes, ForMeshAxes must give the right members (cached on a second call),
// and AllReduce / AllGatherV on it must combine exactly those members'
// data (which differ per group and per subset). With `concurrent`, every
// subset runs on its own thread at the same time. Finally the world's
// total traffic must have grown by the sum of the sub-groups' traffic.
absl::Status CheckMeshSubGroups(Communicator& world, absl::Span<const int64_t> hierarchy,
                                bool concurrent);

}  // namespace oneflow_sbp::comm::testing

#endif  // TESTS_RUNTIME_COMM_SCENARIOS_H_
