// The in-process backend: N ranks as N threads of one process, sharing one
// InProcessWorld. The embedded default; needs nothing.
//
// Example:
//   absl::StatusOr<std::vector<absl::Status>> ranks = RunRanks(4, [](Communicator& comm) {
//     std::vector<float> x(8, comm.rank());
//     return comm.AllReduce(x.data(), x.data(), x.size(), DataType::kFloat32);
//   });
//   // ranks->at(r) is rank r's status.
//
// Transfers are rendezvous: a receive posts its destination buffer, and
// whichever side arrives second copies the sender's bytes straight into it
// (one memcpy, no mailbox copy). Waits block on an absl::Mutex condition
// with the call's deadline; nothing spins.
//
// Device worlds: with InProcessOptions::device = kCuda the ranks' buffers
// are device memory (N rank threads sharing one GPU): every transfer is a
// device-to-device copy (cudaMemcpyAsync on the copying thread's stream,
// synchronised before the peer is told), reductions run on the device, and
// staging buffers are device memory; see buffer_ops.h. Every payload
// pointer given to the communicator must then be device memory of that
// device. Needs the program to link //oneflow_sbp/storage/cuda:device_ops_cuda
// (--config=cuda); without it Create and RunRanks return kUnimplemented
// naming the build option. Example (the boxing executor on one GPU):
//   RunRanks(4, [&](Communicator& w) { ... ExecutePlan(plan, cuda_shard, w) ... },
//            InProcessOptions::OnDevice(DeviceType::kCuda));
//
// Faults: when one rank fails (RunRanks: its function returns an error or
// throws; any rank: a call times out or Abort is called), the world is
// aborted and every other rank's pending and later calls return kAborted
// at once, quoting the first failure. An aborted world stays aborted;
// create a fresh one to go on.
#ifndef COMM_INPROCESS_WORLD_H_
#define COMM_INPROCESS_WORLD_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/communicator.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::comm {

struct InProcessOptions {
  // Timeout of every call that does not set its own (CallOptions::timeout).
  absl::Duration default_timeout = absl::Seconds(60);
  // Where the ranks' payload buffers live. kCpu: host memory, plain
  // memcpy (the fast default). kCuda: device memory of the current GPU.
  DeviceType device = DeviceType::kCpu;
  // For tests: route every payload copy, reduction and staging buffer
  // through these ops (not owned; must outlive the world) instead of
  // GetDeviceOps(device), e.g. GetDeviceOps(kCpu) to run the device path
  // on host memory, or a wrapper that injects faults. Overrides `device`.
  DeviceOps* through = nullptr;

  static InProcessOptions OnDevice(DeviceType device) {
    InProcessOptions o;
    o.device = device;
    return o;
  }
};

class InProcessWorld {
 public:
  // Largest world.
  static constexpr int kMaxRanks = 4096;

  // kInvalidArgument unless 1 <= size <= kMaxRanks and the default timeout
  // is positive; kUnimplemented (naming the build option) for a device
  // without a linked DeviceOps backend.
  static absl::StatusOr<std::shared_ptr<InProcessWorld>> Create(int size,
                                                                const InProcessOptions& options = {});

  int size() const;
  // Where the ranks' payload buffers live (InProcessOptions::device).
  DeviceType device() const;

  // The world communicator of `rank`, to be used by that rank's thread.
  // Each rank connects once: a second Connect for the same rank is
  // kFailedPrecondition (two communicators of one rank would disagree on
  // call sequence numbers). kInvalidArgument for a rank out of range.
  absl::StatusOr<std::unique_ptr<Communicator>> Connect(int rank);

  // Aborts every rank's communicators (see the header comment). The first
  // reason wins.
  void Abort(const absl::Status& reason);
  // OK until aborted.
  absl::Status health() const;

  class State;

 private:
  InProcessWorld(std::shared_ptr<State> state, const InProcessOptions& options);

  std::shared_ptr<State> state_;
  const InProcessOptions options_;
};

// Runs fn(world communicator of rank r) for r in [0, n) on n threads of a
// fresh world and returns each rank's status, once every thread has
// returned. A rank whose fn returns an error or throws (std::bad_alloc
// becomes kResourceExhausted, any other exception kInternal, naming the
// rank and what()) aborts the world, so the others fail promptly instead
// of waiting for their timeouts. The outer status is kInvalidArgument for
// a bad n or options, kUnimplemented for a device without a backend (see
// Create), kResourceExhausted when a rank's thread cannot be started
// (thread or memory limits; the ranks already started are aborted and
// joined first).
absl::StatusOr<std::vector<absl::Status>> RunRanks(
    int n, const std::function<absl::Status(Communicator&)>& fn,
    const InProcessOptions& options = {});

}  // namespace oneflow_sbp::comm

#endif  // COMM_INPROCESS_WORLD_H_
