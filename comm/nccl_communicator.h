// The NCCL backend of Communicator (communicator.h): one process (or one
// thread) per GPU, the same collective calls, checks and errors as the
// ring backend, and the same rendezvous as the Gloo backend (rank 0 serves
// the kv_store on master_addr:master_port and publishes the NCCL unique id
// there).
//
// Example (in each of the N processes, one GPU each):
//   NcclOptions o;
//   o.rank = rank;  o.size = n;  o.master_port = 29500;
//   absl::StatusOr<std::unique_ptr<NcclCommunicator>> world = ConnectNccl(o);
//   if (world.ok()) s = (*world)->AllReduce(d_buf, d_buf, count, DataType::kFloat32);
//   auto rows = (*world)->ForMeshAxes({2, 2}, AxisBit(1));   // ncclCommSplit
//   ExecutePlan(plan, device_shard, **world, &report);       // boxing on NCCL
//
// Buffers: device pointers go to NCCL as they are; host buffers are staged
// through device scratch (copied in, the call, copied out), so host code
// and the shared test scenarios run unchanged, only slower. NCCL runs on
// its own stream, so each call first waits for the calling thread's
// compute stream (the kernels that wrote or still read its buffers).
//
// Mapping: AllReduce and Broadcast are NCCL's; AllGatherV is one group of
// ncclBroadcast (one per member); ReduceScatterV one group of ncclReduce;
// AllToAllV and Send/Recv are grouped ncclSend/ncclRecv (own chunk by a
// device copy); Barrier is an all-reduce of one byte. Bool sums are maxes
// (logical or, as reduce_op.h defines them).
//
// Groups: ForMeshAxes splits this communicator (ncclCommSplit; every
// member of this group calls it together the first time, cached per
// hierarchy and axes). SubGroup is created by the listed members only: the
// first of them publishes a fresh unique id in the world's kv_store and all
// of them run ncclCommInitRank (as the boxing executor needs: only a step's
// active ranks ask for its group).
//
// Traffic: NCCL does not report bytes. A completed call counts the bytes of
// the ring algorithm of communicator.h (NCCL's ring; its tree or NVLS
// algorithms move other amounts); AllToAllV and Send/Recv count their exact
// payload. Sub-group bytes add to the parent's total as on the ring backend.
//
// No call can hang a rank: communicators are non-blocking, and every call
// polls its stream and ncclCommGetAsyncError until done or its timeout;
// on timeout or error the communicator is aborted (ncclCommAbort) and the
// call returns kDeadlineExceeded / kInternal naming the call and rank;
// later calls on the world and every sub-group return kAborted.
#ifndef COMM_NCCL_COMMUNICATOR_H_
#define COMM_NCCL_COMMUNICATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "comm/communicator.h"
#include "comm/nccl_ops.h"
#include "comm/reduce_op.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::comm {


struct NcclOptions {
  int rank = 0;
  int size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // required: 1 .. 65535
  // The job secret every rank shares (job_auth.h); required by the store.
  std::string job_secret;
  // -1: rank % device count.
  int device = -1;
  absl::Duration connect_timeout = absl::Seconds(60);
  absl::Duration default_timeout = absl::Seconds(60);
};

// State shared by a world and all its sub-groups (health, kv_store).
struct NcclShared;

class NcclCommunicator final : public Communicator {
 public:
  ~NcclCommunicator() override;

  absl::StatusOr<std::shared_ptr<Communicator>> ForMeshAxes(absl::Span<const int64_t> hierarchy,
                                                            MeshAxisMask axes) override;
  void Abort(const absl::Status& reason) override;
  absl::Status health() const override;

 protected:
  absl::Status DoAllGatherV(const void* send, void* recv, absl::Span<const int64_t> counts,
                            DataType dtype, const Call& call) override;
  absl::Status DoReduceScatterV(const void* send, void* recv, absl::Span<const int64_t> counts,
                                DataType dtype, const Call& call) override;
  absl::Status DoAllReduce(const void* send, void* recv, int64_t count, DataType dtype,
                           const Call& call) override;
  absl::Status DoAllToAllV(const void* send, absl::Span<const int64_t> send_counts, void* recv,
                           absl::Span<const int64_t> recv_counts, DataType dtype,
                           const Call& call) override;
  absl::Status DoBroadcast(void* buffer, int64_t count, DataType dtype, int root,
                           const Call& call) override;
  absl::Status DoPointToPoint(bool send, void* data, int64_t count, DataType dtype, int peer,
                              const Call& call) override;
  absl::Status DoBarrier(const Call& call) override;
  absl::StatusOr<std::shared_ptr<Communicator>> NewSubGroup(const std::vector<int>& positions,
                                                            std::vector<int> members,
                                                            int position) override;

 private:
  friend absl::StatusOr<std::unique_ptr<NcclCommunicator>> ConnectNccl(const NcclOptions&);
  NcclCommunicator(nccl::Handle handle, std::shared_ptr<NcclShared> shared,
                   std::vector<int> members, int rank, bool world, std::string key,
                   absl::Duration default_timeout, std::shared_ptr<Counter> parent_counter);

  class Staging;  // host buffers of one call in device scratch

  // Waits for the enqueued work of a call; aborts on timeout or error.
  absl::Status Finish(const std::string& enqueue_error, absl::Duration timeout);
  // Finish, then copies staged results back to the host.
  absl::Status Complete(Staging& staging, const std::string& enqueue_error,
                        absl::Duration timeout);
  // Waits for a new child communicator; on failure frees it and aborts.
  absl::StatusOr<std::shared_ptr<Communicator>> FinishChild(std::string error,
                                                           nccl::Handle child,
                                                           std::vector<int> members,
                                                           int position, std::string key);

  nccl::Handle handle_;
  const std::shared_ptr<NcclShared> shared_;
  // Names this group in the kv_store (its sub-groups' ids live under it).
  const std::string key_;
  void* scratch_ = nullptr;  // one device byte for Barrier

  absl::Mutex split_mu_;
  absl::flat_hash_map<std::vector<int64_t>, std::shared_ptr<Communicator>> splits_
      ABSL_GUARDED_BY(split_mu_);
};

// Joins the world described by `options`. kInvalidArgument for bad
// options, kFailedPrecondition without a CUDA device, kDeadlineExceeded if
// the ranks do not all arrive within connect_timeout, kUnavailable if the
// store cannot be served or reached, kInternal for NCCL errors.
absl::StatusOr<std::unique_ptr<NcclCommunicator>> ConnectNccl(const NcclOptions& options);

}  // namespace oneflow_sbp::comm

#endif  // COMM_NCCL_COMMUNICATOR_H_
