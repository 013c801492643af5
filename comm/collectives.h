// The collective algorithms, written once over Transport (transport.h) so
// that every backend moves exactly the same bytes. Internal to the
// Communicator (communicator.h), which validates arguments and assigns
// tags; these functions assume valid arguments.
//
// Group of n ranks, this rank at position k, chunk c_j = bytes of member j,
// T = sum of chunks, indices mod n. Per-rank bytes (what the boxing
// planner predicts, boxing/collective_moves.cc):
//   RingAllGatherV      sends T - c_{k+1}, receives T - c_k
//   RingReduceScatter   member k ends with reduced chunk k;
//                       sends T - c_k, receives T - c_{k-1}
//   RingAllReduce       ring reduce-scatter over n balanced element chunks
//                       p_j (the first count % n get one more element),
//                       then ring all-gather of them:
//                       sends (T - p_k) + (T - p_{k+1}),
//                       receives (T - p_{k-1}) + (T - p_k)
//   PairwiseAllToAllV   exactly the per-peer counts (own chunk is copied),
//                       every pair's message posted at once
//   ChainBroadcast      ring order from the root, pipelined in segments:
//                       the root and every middle rank send T, every
//                       non-root receives T, the last rank sends nothing
//   DisseminationBarrier ceil(log2 n) rounds of a 1-byte token each way
// Zero-byte messages are never posted (both sides know the sizes).
//
// Tags: each message's tag is MixTag(MixTag(tag_base, step), bytes), where
// tag_base is unique per (group, call sequence number) and step numbers the
// messages of one call between one pair of ranks. Folding in the byte
// count makes a size disagreement between two ranks an unmatched message
// (a timeout) rather than a transport-level size error.
//
// Reductions are deterministic: chunk j is reduced along the ring once, in
// the order k+1, k+2, ..., k, and all-reduce broadcasts that one result, so
// every rank ends with bit-identical values on every run.
//
// Payload memory: every copy, reduction and staging buffer goes through
// GroupCall::buffers (buffer_ops.h), so the same algorithms run on host
// buffers (the default, plain memcpy) and on device buffers.
#ifndef COMM_COLLECTIVES_H_
#define COMM_COLLECTIVES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "comm/buffer_ops.h"
#include "comm/reduce_op.h"
#include "comm/traffic.h"
#include "comm/transport.h"
#include "oneflow_sbp/values/data_type.h"

namespace oneflow_sbp::comm {

// A deterministic 64-bit mix (the same in every process; absl::Hash is
// seeded per process and cannot be used for tags).
uint64_t MixTag(uint64_t a, uint64_t b);

// Broadcast pipelines messages of at most this many bytes.
inline constexpr int64_t kBroadcastSegmentBytes = int64_t{1} << 20;

// One call of one group: who is who, when to give up, and where to count.
struct GroupCall {
  Transport* transport = nullptr;
  // World ranks of the members, in group order; members[me] is this rank.
  absl::Span<const int> members;
  int me = 0;
  uint64_t tag_base = 0;
  absl::Time deadline = absl::InfiniteFuture();
  // Bytes of every completed exchange are added here (never null).
  Traffic* traffic = nullptr;
  // How the call's buffers are copied, reduced and staged (the
  // transport's buffers(), or the host path for a call on host buffers in
  // a device world).
  BufferOps buffers;
  // Where the call's payload lives: world memory, or plain host memory for
  // a call on host buffers in a device world (then `buffers` is the host
  // path). Messages that name no memory of their own get this.
  Memory payload = Memory::kWorld;

  int size() const { return static_cast<int>(members.size()); }
};

// `send` holds chunk_bytes[me]; `recv` receives every chunk, member by
// member. send may be recv + offset of chunk me (in place).
absl::Status RingAllGatherV(const GroupCall& call, const void* send, void* recv,
                            absl::Span<const int64_t> chunk_bytes);

// `send` holds sum(chunk_counts) elements (this rank's addends of every
// chunk); `out` receives chunk_counts[me] reduced elements. `out` may
// overlap `send`.
absl::Status RingReduceScatter(const GroupCall& call, const void* send,
                               absl::Span<const int64_t> chunk_counts, DataType dtype,
                               ReduceOp op, void* out);

// `count` elements; `recv` may equal `send` (in place).
absl::Status RingAllReduce(const GroupCall& call, const void* send, void* recv, int64_t count,
                           DataType dtype, ReduceOp op);

// `send` holds send_bytes[j] for member j, packed in member order; `recv`
// likewise. send and recv do not overlap.
absl::Status PairwiseAllToAllV(const GroupCall& call, const void* send,
                               absl::Span<const int64_t> send_bytes, void* recv,
                               absl::Span<const int64_t> recv_bytes);

// The root's `bytes` at `buffer` reach every member's `buffer`.
absl::Status ChainBroadcast(const GroupCall& call, void* buffer, int64_t bytes, int root);

absl::Status DisseminationBarrier(const GroupCall& call);

// One message to or from member `peer` (step 0).
absl::Status PointToPoint(const GroupCall& call, P2POp::Kind kind, int peer, void* data,
                          int64_t bytes);

// True when [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool Overlaps(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes);

}  // namespace oneflow_sbp::comm

#endif  // COMM_COLLECTIVES_H_
