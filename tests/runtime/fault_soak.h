// Fault soak helpers, shared by tests/runtime/fault_soak_test.cc (in-process ranks)
// and the Gloo rank processes of tests/runtime/comm_worker_main.cc, so that both
// backends run the same random boxing plans with the same faults.
//
// A run is one random boxing plan on 4 to 6 ranks (SoakCase, from a seed).
// Without a fault, every rank executes the whole plan (ExecutePlan), then a
// world barrier, and checks its destination shard. With a fault, every rank
// executes the plan one step at a time, so that the faulty rank can fail
// exactly before step `step` (or, with step == number of steps, after the
// plan and before the barrier); the final barrier stands for the next
// operation of a real program, which is where a rank that did not take part
// in the failed step learns of the failure.
#ifndef TESTS_RUNTIME_FAULT_SOAK_H_
#define TESTS_RUNTIME_FAULT_SOAK_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "boxing/boxing_plan.h"
#include "comm/communicator.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp::testing {

struct SoakCase {
  Shape shape;
  DataType dtype = DataType::kFloat32;
  // One placement for source and destination, over ranks 0..n-1.
  Placement placement;
  NdSbp src;
  NdSbp dst;
  int world_size() const { return static_cast<int>(placement.parallel_num()); }
  std::string ToString() const;
};

// A random case on 4, 5 or 6 ranks, 1-D or 2-D mesh, 2-D tensor with
// extents 1..13, any S(0)/S(1)/B/P layouts. Deterministic in `seed`.
SoakCase RandomCase(uint64_t seed);

// The plan for `c` (same placement both sides).
absl::StatusOr<boxing::BoxingPlan> PlanFor(const SoakCase& c);

// What the faulty rank does at its fault point. Names are the command-line
// spelling of comm_worker's `soak` scenario.
enum class FaultKind : uint8_t {
  kNone,
  kReturnError,  // returns an error (in-process) / returns from main (Gloo)
  kThrow,        // throws (in-process only)
  kAbort,        // calls Abort on its communicator, then returns its health
  kSleep,        // sleeps past the call timeout, then carries on
  kExit,         // _exit(3) (Gloo only)
  kCrash,        // abort(), SIGABRT (Gloo only)
};
const char* FaultKindName(FaultKind kind);
absl::StatusOr<FaultKind> ParseFaultKind(const std::string& name);

struct Fault {
  FaultKind kind = FaultKind::kNone;
  int rank = 0;
  // 0 .. plan.steps.size(): before that step (the last: before the barrier).
  int step = 0;
};

// The plan's steps as a chain of one-step plans: step k alone, from the
// layout before it to the layout after it.
boxing::BoxingPlan StepPlan(const boxing::BoxingPlan& plan, int k);

// One rank's part of a run (see the file comment). `inject` runs on the
// faulty rank at the fault point; its error (if any) is returned at once.
// Errors: the communicator's, or kDataLoss for a wrong destination shard.
absl::Status RunSoakRank(const SoakCase& c, const boxing::BoxingPlan& plan, const Fault& fault,
                         comm::Communicator& world,
                         const std::function<absl::Status(comm::Communicator&)>& inject);

// Threads of this process, its open file descriptors, and its child
// processes (zombies included), read from /proc.
int CountThreads();
int CountOpenFds();
int CountChildren();

}  // namespace oneflow_sbp::testing

#endif  // TESTS_RUNTIME_FAULT_SOAK_H_
