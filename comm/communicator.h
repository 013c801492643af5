// Communicator: the collectives a group of SPMD ranks runs together, the
// same on every backend (in-process threads and Gloo processes through the
// ring backend, GPUs through NCCL).
//
// Example (every rank runs the same code; the backend made `world`):
//   std::vector<int64_t> counts = {3, 0, 2};            // elements per rank
//   absl::Status s = world.AllGatherV(mine, all, counts, DataType::kFloat32);
//   CallOptions max;
//   max.reduce_op = ReduceOp::kMax;
//   s = world.AllReduce(logits_max, logits_max, n, DataType::kFloat32, max);  // in place
//   auto rows = world.ForMeshAxes({2, 3}, AxisBit(1));  // my row of a [2,3] mesh
//   if (rows.ok()) s = (*rows)->Barrier();
//
// Buffers are raw pointers with element counts and a DataType; counts are
// in elements, byte counters in bytes. Nothing here says which backend
// runs the group.
//
// SPMD contract: every member of a group issues the same collective calls
// on it in the same order, with the same counts, root and reduce op (Send
// and Recv pair up per (sender, receiver) in order). Disagreeing calls do
// not corrupt memory: their messages never match, and the call fails with
// kDeadlineExceeded at its timeout. Calls on one communicator may come
// from several threads, but then their order, and so the pairing, is up to
// the caller; distinct communicators (sub-groups) may be used concurrently
// from different threads without any ordering between them.
//
// Errors (every call returns absl::Status; messages name the call, this
// rank's group and world rank, and the peer or value at fault):
//   kInvalidArgument   bad arguments (wrong number of counts, negative
//                      counts, a null buffer with a nonzero count, partially
//                      overlapping send and receive buffers, a root or peer
//                      out of range, the peer being this rank). Checked
//                      before anything is sent: the call consumes no
//                      sequence number and aborts nothing.
//   kDeadlineExceeded  the call's timeout passed (a peer is slow, hung, or
//                      issued a different call);
//   kAborted           the group was aborted: by Abort, or because another
//                      rank failed (in-process), or an earlier call failed;
//   kUnavailable       a peer process died or closed its connections (Gloo).
// After any error other than kInvalidArgument the communicator and every
// communicator sharing its transport (the world and all its sub-groups)
// are aborted: later calls fail at once with kAborted. On error the
// receive buffers hold unspecified contents. Start a fresh world to go on.
//
// Bytes per rank (ring algorithms; group of n, this rank at position k,
// c_j = bytes of member j's chunk, T = sum of chunks, indices mod n):
//   AllGatherV       sends T - c_{k+1}, receives T - c_k
//   ReduceScatterV   sends T - c_k, receives T - c_{k-1} (member k ends
//                    with reduced chunk k)
//   AllReduce        reduce-scatter then all-gather over n balanced chunks
//                    p_j of the elements (first count % n get one more):
//                    sends (T - p_k) + (T - p_{k+1}),
//                    receives (T - p_{k-1}) + (T - p_k)
//   AllToAllV        sends sum of send_counts to others, receives sum of
//                    recv_counts from others (own chunk is a local copy)
//   Broadcast        chain from the root in ring order: the root and the
//                    middle ranks send T, non-roots receive T
//   Barrier          ceil(log2 n) one-byte tokens each way
//   Send / Recv      exactly the message
// These are the boxing planner's predictions (boxing/collective_moves.cc);
// on the ring backend the counters below report what was really moved,
// counted per completed message exchange. NCCL reports no byte counts: its
// backend counts these same formulas for a call that completed (the bytes
// of NCCL's ring algorithms; its tree algorithms move other amounts).
#ifndef COMM_COMMUNICATOR_H_
#define COMM_COMMUNICATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "comm/reduce_op.h"
#include "comm/traffic.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::comm {

class Transport;

struct CallOptions {
  // How long the whole call may take; zero means the communicator's
  // default_timeout(). absl::InfiniteDuration() waits forever (not
  // recommended). Negative is kInvalidArgument.
  absl::Duration timeout = absl::ZeroDuration();
  // For AllReduce and ReduceScatterV.
  ReduceOp reduce_op = ReduceOp::kSum;
  // If set, receives the bytes this call moved on this rank (on failure,
  // what completed before it).
  Traffic* traffic = nullptr;
};

// The interface every backend implements. The public calls are not
// virtual: they check their arguments the same way on every backend (so
// kInvalidArgument means the same everywhere), then hand the call to the
// backend's Do* method, then record its traffic and name the call in any
// error. Backends: RingCommunicator (ring_communicator.h: ring algorithms
// over a host Transport; in-process threads and Gloo processes) and
// NcclCommunicator (nccl_communicator.h, --config=cuda).
class Communicator {
 public:
  // The ring backend's world communicator of this rank over `transport`
  // (RingCommunicator). `default_timeout` > 0 applies to calls whose
  // options leave it zero.
  static std::unique_ptr<Communicator> CreateWorld(std::shared_ptr<Transport> transport,
                                                   absl::Duration default_timeout);

  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator();

  // This rank's position in the group, and the group size.
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(members_.size()); }
  // World rank of every member, in group order.
  absl::Span<const int> world_ranks() const { return members_; }
  absl::Duration default_timeout() const { return default_timeout_; }
  // "rank 1 of {0,2} (world rank 2)", or "rank 1 of 4" for the world.
  std::string DebugName() const;

  // Every member contributes counts[rank()] elements from `send`; `recv`
  // receives sum(counts) elements, member 0's first. counts.size() ==
  // size(). `send` may point at this rank's place inside `recv`.
  absl::Status AllGatherV(const void* send, void* recv, absl::Span<const int64_t> counts,
                          DataType dtype, const CallOptions& options = {});

  // `send` holds sum(counts) elements, this rank's addends of every
  // member's chunk in member order; `recv` receives counts[rank()]
  // elements: chunk rank() reduced over all members with
  // options.reduce_op. `recv` may overlap `send`.
  absl::Status ReduceScatterV(const void* send, void* recv, absl::Span<const int64_t> counts,
                              DataType dtype, const CallOptions& options = {});

  // `count` elements reduced element-wise over all members into every
  // member's `recv`. `recv` may equal `send` (in place); partial overlap is
  // kInvalidArgument. Every member gets bit-identical results.
  absl::Status AllReduce(const void* send, void* recv, int64_t count, DataType dtype,
                         const CallOptions& options = {});

  // `send` holds send_counts[j] elements for member j, packed in member
  // order; `recv` receives recv_counts[j] elements from member j, packed
  // likewise. Both spans have size() entries; recv_counts[j] on this rank
  // must equal send_counts[rank()] on member j. send and recv must not
  // overlap.
  absl::Status AllToAllV(const void* send, absl::Span<const int64_t> send_counts, void* recv,
                         absl::Span<const int64_t> recv_counts, DataType dtype,
                         const CallOptions& options = {});

  // The root's `count` elements at `buffer` are copied into every member's
  // `buffer`. 0 <= root < size().
  absl::Status Broadcast(void* buffer, int64_t count, DataType dtype, int root,
                         const CallOptions& options = {});

  // Point to point with member `peer` (!= rank()). The k-th Send from a to
  // b pairs with the k-th Recv on b from a; counts must agree.
  absl::Status Send(const void* data, int64_t count, DataType dtype, int peer,
                    const CallOptions& options = {});
  absl::Status Recv(void* data, int64_t count, DataType dtype, int peer,
                    const CallOptions& options = {});

  // Returns once every member has entered the barrier.
  absl::Status Barrier(const CallOptions& options = {});

  // The group of the listed members of this group, in the listed order
  // (positions in this group, not world ranks). This rank must be listed;
  // no duplicates. Created on first use and cached, so asking again gives
  // the same communicator. Groups never mix messages, even when used
  // concurrently. Its traffic also counts in this communicator's
  // total_traffic(). Every member must derive the group the same way (from
  // the same parent). Ring backend: local, no messages. NCCL backend: the
  // listed members (only they) create it together on first use.
  absl::StatusOr<std::shared_ptr<Communicator>> SubGroup(absl::Span<const int> ranks);

  // The members that share every mesh coordinate with this rank outside
  // the axes in `axes`, on a mesh of shape `hierarchy` over this group
  // (row-major, last axis fastest; see Placement::SubGroup). The product of
  // `hierarchy` must be size(); `axes` must name only axes of `hierarchy`.
  // An empty mask gives the group of this rank alone. Ring backend: the
  // SubGroup of those members. NCCL backend: every member of THIS group
  // calls it together the first time (ncclCommSplit).
  virtual absl::StatusOr<std::shared_ptr<Communicator>> ForMeshAxes(
      absl::Span<const int64_t> hierarchy, MeshAxisMask axes);

  // Bytes of the most recent call that finished on this communicator (from
  // any thread), and of every call on it and its sub-groups so far.
  Traffic last_call_traffic() const;
  Traffic total_traffic() const;

  // Aborts the group: every pending and later call on every communicator
  // sharing its connections (the world and all its sub-groups) fails.
  virtual void Abort(const absl::Status& reason) = 0;
  // OK until aborted.
  virtual absl::Status health() const = 0;

 protected:
  // Totals shared with ancestors: a sub-group's bytes also count in its
  // parent's (and so the world's) total.
  struct Counter {
    std::atomic<int64_t> sent{0};
    std::atomic<int64_t> received{0};
    std::shared_ptr<Counter> parent;
  };

  // What a backend's Do* method gets besides the buffers: the resolved
  // timeout (> 0), the reduce op, and where to add the bytes it moved.
  struct Call {
    absl::Duration timeout;
    ReduceOp reduce_op = ReduceOp::kSum;
    Traffic* traffic = nullptr;
  };

  // `members`: world ranks in group order; `world`: whether this is the
  // world group (for DebugName); `parent_counter`: the parent's counter
  // (null for a world).
  Communicator(std::vector<int> members, int rank, bool world, absl::Duration default_timeout,
               std::shared_ptr<Counter> parent_counter);

  // The backend's part of each call, run only with checked arguments and a
  // healthy group. Errors need not name the call or rank (the caller
  // prefixes them). Counts are elements; byte sizes follow from dtype.
  virtual absl::Status DoAllGatherV(const void* send, void* recv,
                                    absl::Span<const int64_t> counts, DataType dtype,
                                    const Call& call) = 0;
  virtual absl::Status DoReduceScatterV(const void* send, void* recv,
                                        absl::Span<const int64_t> counts, DataType dtype,
                                        const Call& call) = 0;
  virtual absl::Status DoAllReduce(const void* send, void* recv, int64_t count, DataType dtype,
                                   const Call& call) = 0;
  virtual absl::Status DoAllToAllV(const void* send, absl::Span<const int64_t> send_counts,
                                   void* recv, absl::Span<const int64_t> recv_counts,
                                   DataType dtype, const Call& call) = 0;
  virtual absl::Status DoBroadcast(void* buffer, int64_t count, DataType dtype, int root,
                                   const Call& call) = 0;
  // Send (send = true) or Recv.
  virtual absl::Status DoPointToPoint(bool send, void* data, int64_t count, DataType dtype,
                                      int peer, const Call& call) = 0;
  virtual absl::Status DoBarrier(const Call& call) = 0;
  // The sub-group of the checked `positions` (in this group, listed order):
  // `members` are their world ranks, `position` this rank's place among
  // them. SubGroup caches the result.
  virtual absl::StatusOr<std::shared_ptr<Communicator>> NewSubGroup(
      const std::vector<int>& positions, std::vector<int> members, int position) = 0;

  // ForMeshAxes' checks; the positions of this rank's group.
  absl::StatusOr<std::vector<int>> MeshGroup(absl::Span<const int64_t> hierarchy,
                                             MeshAxisMask axes) const;
  absl::Status Error(absl::string_view name, absl::StatusCode code, absl::string_view msg) const;
  const std::shared_ptr<Counter>& counter() const { return counter_; }

 private:
  absl::Status CheckCall(absl::string_view name, const CallOptions& options) const;
  absl::Status CheckCounts(absl::string_view name, absl::string_view what,
                           absl::Span<const int64_t> counts, DataType dtype) const;
  // CheckCall and CheckCounts of a call with one count per member; the sum
  // of the counts.
  absl::StatusOr<int64_t> CheckChunkedCall(absl::string_view name, const CallOptions& options,
                                           absl::Span<const int64_t> counts, DataType dtype) const;
  absl::Status CheckBuffer(absl::string_view name, absl::string_view what, const void* data,
                           int64_t count, DataType dtype) const;
  absl::Status CheckPeer(absl::string_view name, absl::string_view what, int peer) const;
  absl::Status PointToPointCall(absl::string_view name, bool send, void* data, int64_t count,
                                DataType dtype, int peer, const CallOptions& options);

  // Runs one checked call: checks health, runs `body`, records traffic and
  // prefixes errors with the call's name.
  absl::Status Run(absl::string_view name, const CallOptions& options,
                   absl::FunctionRef<absl::Status(const Call&)> body);

  const std::vector<int> members_;
  const int rank_;
  const bool world_;
  const absl::Duration default_timeout_;
  const std::shared_ptr<Counter> counter_;

  mutable absl::Mutex mu_;
  Traffic last_call_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::vector<int>, std::shared_ptr<Communicator>> subgroups_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace oneflow_sbp::comm

#endif  // COMM_COMMUNICATOR_H_
