// NCCL and CUDA-runtime calls of the NCCL backend behind a plain C++
// interface (nccl_ops.cu is built by nvcc; nccl_communicator.cc, built by
// gcc with absl, calls these without any CUDA or NCCL header).
//
// Communicators are created non-blocking (ncclConfig_t.blocking = 0) so
// that no call can hang a rank: every enqueue returns at once, and Wait
// polls the stream and ncclCommGetAsyncError until done, an error, or the
// deadline, after which the caller aborts the communicator.
#ifndef COMM_NCCL_OPS_H_
#define COMM_NCCL_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace oneflow_sbp::comm::nccl {

// ncclUniqueId as bytes (rank 0 creates it and publishes it).
std::string NewUniqueId(std::string* id);

// An opaque ncclComm_t plus the stream its calls run on.
struct Handle {
  void* comm = nullptr;
  void* stream = nullptr;
  int device = 0;
};

// Starts ncclCommInitRankConfig (non-blocking) on `device`; completion
// comes through Wait.
std::string InitRank(const std::string& id, int size, int rank, int device, Handle* out);
// ncclCommSplit (non-blocking) with this rank's color and key; a new
// stream for the child. Waits up to `timeout_us` for NCCL to hand out the
// child (its job sets it after the call returns); the child's own
// readiness then comes through Wait.
std::string Split(const Handle& parent, int color, int key, int64_t timeout_us, Handle* out);

// Enqueues; dtype is a cuda::DtypeCode, reduce_op 0 sum, 1 max, 2 min.
std::string AllReduce(const Handle& h, const void* send, void* recv, int64_t count, int dtype,
                      int reduce_op);
std::string Broadcast(const Handle& h, void* buffer, int64_t count, int dtype, int root);
// One group of broadcasts: member j's counts[j] elements at send (on j)
// land at recv + offset_j on every member (an uneven all-gather).
std::string AllGatherV(const Handle& h, const void* send, void* recv,
                       const std::vector<int64_t>& counts, int dtype);
// One group of reduces: chunk j (counts[j] elements at offset_j of send)
// reduced onto member j's recv (an uneven reduce-scatter).
std::string ReduceScatterV(const Handle& h, const void* send, void* recv,
                           const std::vector<int64_t>& counts, int dtype, int reduce_op, int me);

struct P2P {
  bool send = true;
  int peer = 0;
  void* data = nullptr;
  int64_t bytes = 0;
};
// One ncclGroupStart/End of ncclSend/ncclRecv (bytes as ncclUint8).
std::string Grouped(const Handle& h, const std::vector<P2P>& ops);
// Orders the handle's stream after the work already enqueued on the
// calling thread's compute stream (cuda_device.h's ThreadStream), where the
// kernels and copies that wrote a call's device buffers run: the handle's
// stream is a different non-blocking stream, so NCCL would otherwise read
// buffers those kernels are still writing (and overwrite ones they are
// still reading). An event the handle's stream waits on, so the host does
// not block. Call before enqueueing.
std::string WaitForCompute(const Handle& h);
// A device-to-device copy on the handle's stream (own all-to-all chunk).
std::string CopyOnStream(const Handle& h, void* dst, const void* src, int64_t bytes);

// 0: done; 1: still running at the deadline (the caller aborts); 2: an
// NCCL or CUDA error, in *error.
int Wait(const Handle& h, int64_t timeout_us, std::string* error);
// ncclCommAbort: frees the communicator without waiting for peers.
void Abort(Handle* h);
void Destroy(Handle* h);

// A device scratch of `bytes` on the handle's device; "" on success.
std::string DeviceScratch(const Handle& h, void** ptr, int64_t bytes);
void FreeDevice(void* ptr);
// True for device (or managed) memory; false for host memory, which the
// communicator stages through device scratch.
bool IsDevicePointer(const void* ptr);
// Synchronous copies on the handle's stream (staging of host buffers).
std::string CopyToDevice(const Handle& h, void* device, const void* host, int64_t bytes);
std::string CopyToHost(const Handle& h, void* host, const void* device, int64_t bytes);
int DeviceCount();

}  // namespace oneflow_sbp::comm::nccl

#endif  // COMM_NCCL_OPS_H_
