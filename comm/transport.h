// Transport: the point-to-point layer under every Communicator backend.
//
// A backend (in-process threads, Gloo processes) implements only this
// interface; the collective algorithms (collectives.h) are written once on
// top of it, so the bytes they move are the same on every backend.
//
// Example (one ring step: post the send and the receive, then wait for both,
// so two neighbours never wait on each other's send):
//   P2POp ops[2] = {P2POp::Send(next, tag, chunk, 64), P2POp::Recv(prev, tag, in, 64)};
//   absl::Status s = transport.Exchange(ops, absl::Now() + absl::Seconds(1));
//
// Matching: a send from rank a to rank b matches a receive posted by b from
// a with the same tag; several pending messages with one (a, b, tag) match
// in posting order. Both sides must give the same byte count: callers fold
// the byte count into the tag (see collectives.h), so a disagreement
// becomes an unmatched message (kDeadlineExceeded), never a partial copy.
//
// Failure model: any failed Exchange aborts the transport (the world, for
// the in-process backend), because the ranks' call sequences no longer
// agree after a collective fails half way. Once aborted, every pending and
// later Exchange fails at once.
#ifndef COMM_TRANSPORT_H_
#define COMM_TRANSPORT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "comm/buffer_ops.h"

namespace oneflow_sbp::comm {

// One message of an Exchange. `peer` is a world rank other than this one.
struct P2POp {
  enum class Kind : uint8_t { kSend, kRecv };
  Kind kind = Kind::kSend;
  int peer = 0;
  uint64_t tag = 0;
  // Source of a send (only read), destination of a receive. May be null
  // only when bytes == 0.
  void* data = nullptr;
  int64_t bytes = 0;
  // Where `data` lives: the world's payload memory (the transport's
  // buffers(): the device for a device world) or plain host memory.
  Memory memory = Memory::kWorld;
  // A receive that reduces (only where the transport FusesReduce()): with
  // `addend` set, the receive leaves data[i] = reduce_op(message[i],
  // addend[i]) over bytes / ByteSizeOf(reduce_dtype) elements instead of
  // the message itself. `addend` is world memory that either is `data` or
  // does not overlap it, and is only read.
  const void* addend = nullptr;
  ReduceOp reduce_op = ReduceOp::kSum;
  DataType reduce_dtype = DataType::kFloat32;

  static P2POp Send(int peer, uint64_t tag, const void* data, int64_t bytes,
                    Memory memory = Memory::kWorld) {
    return {Kind::kSend, peer, tag, const_cast<void*>(data), bytes, memory};
  }
  static P2POp Recv(int peer, uint64_t tag, void* data, int64_t bytes,
                    Memory memory = Memory::kWorld) {
    return {Kind::kRecv, peer, tag, data, bytes, memory};
  }
  static P2POp RecvReduce(int peer, uint64_t tag, void* data, int64_t bytes, const void* addend,
                          ReduceOp op, DataType dtype) {
    return {Kind::kRecv, peer, tag, data, bytes, Memory::kWorld, addend, op, dtype};
  }
};

class Transport {
 public:
  virtual ~Transport() = default;

  // This process's (or thread's) rank in the world, and the world size.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Posts every op, then waits until all have completed or `deadline`
  // passes. OK means every op completed: each send's bytes were delivered
  // into the matching receive's buffer. On any error no op touches its
  // buffer after Exchange returns, receive buffers hold unspecified
  // contents, and the transport is aborted. Codes:
  //   kDeadlineExceeded  the deadline passed (the message names the peers
  //                      still pending);
  //   kAborted           this transport was aborted (by Abort, or by a
  //                      failure on another rank of an in-process world);
  //   kUnavailable       a peer's connection failed (Gloo: the peer died
  //                      or aborted and closed its sockets);
  //   kInvalidArgument   a peer out of range or equal to rank(), negative
  //                      bytes, or matched messages of different sizes.
  // Thread-safe; ops from concurrent calls never mix because their tags
  // differ.
  virtual absl::Status Exchange(absl::Span<const P2POp> ops, absl::Time deadline) = 0;

  // Fails every pending and later Exchange with kAborted quoting `reason`.
  // The first reason wins; later calls do nothing. Peers learn of it: the
  // in-process world aborts every rank, Gloo closes this rank's
  // connections so that peers waiting on it fail with kUnavailable.
  virtual void Abort(const absl::Status& reason) = 0;

  // OK until aborted; then the kAborted status later calls will return.
  virtual absl::Status health() const = 0;

  // How the collectives over this transport touch world memory (copies,
  // reductions, staging). Host unless the backend says otherwise (the
  // in-process world on a device).
  virtual BufferOps buffers() const { return BufferOps(); }

  // True when this transport honours P2POp::addend: it reduces while it
  // delivers (the in-process world reads the sender's buffer directly, so
  // a ring step reads two streams and writes one, with no copy first).
  // Otherwise the collectives receive, then reduce.
  virtual bool FusesReduce() const { return false; }
};

}  // namespace oneflow_sbp::comm

#endif  // COMM_TRANSPORT_H_
