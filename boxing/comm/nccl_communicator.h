// The NCCL backend: one process per GPU, the same collective calls as
// Communicator (communicator.h) on DEVICE buffers, and the same rendezvous
// as the Gloo backend (rank 0 serves the kv_store on master_addr:
// master_port and publishes the NCCL unique id there).
//
// Example (in each of the N processes, one GPU each):
//   NcclOptions o;
//   o.rank = rank;  o.size = n;  o.master_port = 29500;
//   absl::StatusOr<std::unique_ptr<NcclCommunicator>> world = ConnectNccl(o);
//   if (world.ok()) s = (*world)->AllReduce(d_buf, d_buf, count, DataType::kFloat32);
//   auto rows = (*world)->ForMeshAxes({2, 2}, AxisBit(1));   // ncclCommSplit
//
// Mapping: AllReduce and Broadcast are NCCL's; AllGatherV is one group of
// ncclBroadcast (one per member); ReduceScatterV one group of ncclReduce;
// AllToAllV and Send/Recv are grouped ncclSend/ncclRecv (own chunk by a
// device copy); Barrier is an all-reduce of one element. Sub-groups come
// from ncclCommSplit, cached per member set like Communicator::SubGroup.
//
// No call can hang a rank: communicators are non-blocking, and every call
// polls its stream and ncclCommGetAsyncError until done or its timeout;
// on timeout or error the communicator is aborted (ncclCommAbort) and the
// call returns kDeadlineExceeded / kInternal naming the call and rank;
// later calls return kAborted. Argument errors are kInvalidArgument and
// abort nothing.
//
// Not (yet) a Communicator: that class runs the ring algorithms over a
// host Transport. The boxing executor takes a Communicator, so boxing
// collectives on device memory through NCCL need that class split into
// an interface first (docs/GPU.md).
#ifndef BOXING_COMM_NCCL_COMMUNICATOR_H_
#define BOXING_COMM_NCCL_COMMUNICATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "boxing/comm/nccl_ops.h"
#include "boxing/comm/reduce_op.h"
#include "oneflow_sbp/data_type.h"
#include "oneflow_sbp/placement.h"

namespace oneflow_sbp::comm {

class KvStoreServer;

struct NcclOptions {
  int rank = 0;
  int size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // required: 1 .. 65535
  // -1: rank % device count.
  int device = -1;
  absl::Duration connect_timeout = absl::Seconds(60);
  absl::Duration default_timeout = absl::Seconds(60);
};

class NcclCommunicator {
 public:
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::string DebugName() const;

  // As Communicator, on device pointers; `timeout` zero means the default.
  absl::Status AllGatherV(const void* send, void* recv, absl::Span<const int64_t> counts,
                          DataType dtype, absl::Duration timeout = absl::ZeroDuration());
  absl::Status ReduceScatterV(const void* send, void* recv, absl::Span<const int64_t> counts,
                              DataType dtype, ReduceOp op = ReduceOp::kSum,
                              absl::Duration timeout = absl::ZeroDuration());
  absl::Status AllReduce(const void* send, void* recv, int64_t count, DataType dtype,
                         ReduceOp op = ReduceOp::kSum,
                         absl::Duration timeout = absl::ZeroDuration());
  absl::Status AllToAllV(const void* send, absl::Span<const int64_t> send_counts, void* recv,
                         absl::Span<const int64_t> recv_counts, DataType dtype,
                         absl::Duration timeout = absl::ZeroDuration());
  absl::Status Broadcast(void* buffer, int64_t count, DataType dtype, int root,
                         absl::Duration timeout = absl::ZeroDuration());
  absl::Status Send(const void* data, int64_t count, DataType dtype, int peer,
                    absl::Duration timeout = absl::ZeroDuration());
  absl::Status Recv(void* data, int64_t count, DataType dtype, int peer,
                    absl::Duration timeout = absl::ZeroDuration());
  absl::Status Barrier(absl::Duration timeout = absl::ZeroDuration());

  // Members sharing every mesh coordinate outside `axes` (as
  // Communicator::ForMeshAxes), by ncclCommSplit; cached. Every member of
  // this group must call it together (the split is collective).
  absl::StatusOr<std::shared_ptr<NcclCommunicator>> ForMeshAxes(
      absl::Span<const int64_t> hierarchy, MeshAxisMask axes);

  void Abort(const absl::Status& reason);
  absl::Status health() const;

 private:
  friend absl::StatusOr<std::unique_ptr<NcclCommunicator>> ConnectNccl(const NcclOptions&);
  NcclCommunicator(nccl::Handle handle, int rank, int size, int world_rank,
                   absl::Duration default_timeout);

  // Waits for the enqueued work of `name`; aborts on timeout or error.
  absl::Status Finish(absl::string_view name, const std::string& enqueue_error,
                      absl::Duration timeout);
  absl::Status CheckCounts(absl::string_view name, absl::Span<const int64_t> counts) const;
  absl::Status CheckPeer(absl::string_view name, int peer) const;

  nccl::Handle handle_;
  const int rank_;
  const int size_;
  const int world_rank_;
  const absl::Duration default_timeout_;
  std::unique_ptr<KvStoreServer> store_;  // rank 0 of the world only
  void* scratch_ = nullptr;               // one device element for Barrier

  mutable absl::Mutex mu_;
  absl::Status health_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::vector<int64_t>, std::shared_ptr<NcclCommunicator>> subgroups_
      ABSL_GUARDED_BY(mu_);
};

// Joins the world described by `options`. kInvalidArgument for bad
// options, kFailedPrecondition without a CUDA device, kDeadlineExceeded if
// the ranks do not all arrive within connect_timeout, kUnavailable if the
// store cannot be served or reached, kInternal for NCCL errors.
absl::StatusOr<std::unique_ptr<NcclCommunicator>> ConnectNccl(const NcclOptions& options);

}  // namespace oneflow_sbp::comm

#endif  // BOXING_COMM_NCCL_COMMUNICATOR_H_
