// `sbp boxing --execute`: runs a plan on real ranks with seeded,
// integer-valued data, checks the result against the full tensor, and
// collects every rank's measured bytes per step next to the plan's.
#ifndef CLI_BOXING_EXECUTION_H_
#define CLI_BOXING_EXECUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boxing/boxing_plan.h"
#include "comm/communicator.h"
#include "proto/boxing.pb.h"

namespace oneflow_sbp::cli {

struct ExecutionSummary {
  // [step][participant]: measured traffic, in BoxingPlan::ranks order.
  std::vector<std::vector<comm::Traffic>> measured;
  // [step][participant]: seconds the step took there.
  std::vector<std::vector<double>> seconds;
  bool verified = false;
  // "" or what differs.
  std::string mismatch;
  double wall_s = 0;
  // True when every rank's bytes per step equal the plan's.
  bool bytes_as_planned = true;
  // Timed re-runs (`repeat` > 0): per run, the slowest rank's seconds
  // from leaving a barrier to holding its output.
  std::vector<double> repeat_seconds;
};

// Every rank of `world` (world position == device rank; the world must
// cover every rank of both placements) calls this. The summary is
// complete on rank 0 only. `device`: where the world's buffers live (the
// shards move there for the plan, and the summary's host data is staged
// through it). `repeat` > 0 re-runs the plan that many times on the same
// source shards after the checked run (so the first, cold run with its
// page faults is not among them) and fills repeat_seconds: a timed
// collective for benchmarks (tools/bench/peers.py) that still moves
// exactly the planned, verified bytes.
absl::StatusOr<ExecutionSummary> ExecuteAndVerify(const boxing::BoxingPlan& plan,
                                                  comm::Communicator& world, uint64_t seed,
                                                  DeviceType device = DeviceType::kCpu,
                                                  int repeat = 0);

// The plan's text report with measured bytes per rank appended.
std::string ExecutionText(const boxing::BoxingPlan& plan, const ExecutionSummary& summary,
                          absl::string_view backend, int world_size);
oneflow::ExecutionProto ExecutionToProto(const ExecutionSummary& summary,
                                         absl::string_view backend);

}  // namespace oneflow_sbp::cli

#endif  // CLI_BOXING_EXECUTION_H_
