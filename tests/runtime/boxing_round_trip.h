// Boxing round trips on real ranks, shared by the executor tests on host
// memory (executor_test), through the device seam on the CPU
// (device_world_test) and on a GPU (cuda_boxing_test).
//
// A case distributes a full integer-valued tensor (values i % 97 + 1, so
// sums of addends stay exact in f32) over the source layout on the host,
// moves each shard to the world's device on its rank thread, runs the plan
// on every rank with ExecutePlan, brings the results back, assembles them
// and requires them bit-exact, and requires every rank's measured bytes
// per step to equal the plan's prediction.
#ifndef TESTS_RUNTIME_BOXING_ROUND_TRIP_H_
#define TESTS_RUNTIME_BOXING_ROUND_TRIP_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/communicator.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::boxing::testing {

// Runs fn on ranks 0 .. n-1 of a fresh world; each rank's status.
using RankRunner = std::function<absl::StatusOr<std::vector<absl::Status>>(
    int n, const std::function<absl::Status(comm::Communicator&)>& fn)>;

struct RoundTripWorld {
  // Null: comm::RunRanks on host memory.
  RankRunner run;
  // Where the shards live while the plan runs (the world's buffers).
  DeviceType device = DeviceType::kCpu;
};

// The full tensor of a case.
LocalTensor Full(DataType dtype, const Shape& shape);

// One plan from (src_p, src) to (dst_p, dst): "" or what went wrong.
std::string RunCase(const Shape& shape, DataType dtype, const Placement& src_p, const NdSbp& src,
                    const Placement& dst_p, const NdSbp& dst, const RoundTripWorld& world = {});

// Every N-D layout over {S(0), S(1), B, P} on `axes` mesh axes.
std::vector<NdSbp> Layouts(int axes);

// RunCase for every ordered pair of Layouts on `placement` (every
// stride-th pair), f32 with every third case i32; EXPECTs each to pass and
// at least one to run.
void EveryPair(const std::string& placement, const std::vector<Shape>& shapes, int stride = 1,
               const RoundTripWorld& world = {});

}  // namespace oneflow_sbp::boxing::testing

#endif  // TESTS_RUNTIME_BOXING_ROUND_TRIP_H_
