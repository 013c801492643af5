#include "comm/nccl_ops.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "oneflow_sbp/storage/cuda/cuda_device.h"

namespace oneflow_sbp::comm::nccl {
namespace {

std::string Err(ncclResult_t r) {
  if (r == ncclSuccess || r == ncclInProgress) return "";
  return std::string("nccl: ") + ncclGetErrorString(r);
}
std::string CudaErr(cudaError_t e) {
  return e == cudaSuccess ? std::string() : std::string("cuda: ") + cudaGetErrorString(e);
}

ncclComm_t C(const Handle& h) { return static_cast<ncclComm_t>(h.comm); }
cudaStream_t S(const Handle& h) { return static_cast<cudaStream_t>(h.stream); }

bool Type(int dtype, ncclDataType_t* t) {
  using oneflow_sbp::cuda::DtypeCode;
  switch (dtype) {
    case DtypeCode::kF16: *t = ncclFloat16; return true;
    case DtypeCode::kBF16: *t = ncclBfloat16; return true;
    case DtypeCode::kF32: *t = ncclFloat32; return true;
    case DtypeCode::kF64: *t = ncclFloat64; return true;
    case DtypeCode::kI8: *t = ncclInt8; return true;
    case DtypeCode::kI32: *t = ncclInt32; return true;
    case DtypeCode::kI64: *t = ncclInt64; return true;
    case DtypeCode::kU8: *t = ncclUint8; return true;
    case DtypeCode::kBool: *t = ncclUint8; return true;  // max == or; sum needs care
    default: return false;
  }
}

ncclRedOp_t Op(int reduce_op) {
  return reduce_op == 1 ? ncclMax : reduce_op == 2 ? ncclMin : ncclSum;
}

int ElemSize(int dtype) {
  using oneflow_sbp::cuda::DtypeCode;
  switch (dtype) {
    case DtypeCode::kF16: case DtypeCode::kBF16: return 2;
    case DtypeCode::kF32: case DtypeCode::kI32: return 4;
    case DtypeCode::kF64: case DtypeCode::kI64: return 8;
    default: return 1;
  }
}

}  // namespace

std::string NewUniqueId(std::string* id) {
  ncclUniqueId u;
  const ncclResult_t r = ncclGetUniqueId(&u);
  if (r != ncclSuccess) return Err(r);
  id->assign(u.internal, sizeof(u.internal));
  return "";
}

std::string InitRank(const std::string& id, int size, int rank, int device, Handle* out) {
  ncclUniqueId u;
  if (id.size() != sizeof(u.internal)) return "nccl: unique id of the wrong size";
  std::memcpy(u.internal, id.data(), sizeof(u.internal));
  std::string e = CudaErr(cudaSetDevice(device));
  if (!e.empty()) return e;
  cudaStream_t s = nullptr;
  e = CudaErr(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (!e.empty()) return e;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  e = Err(ncclCommInitRankConfig(&comm, size, u, rank, &config));
  out->comm = comm;
  out->stream = s;
  out->device = device;
  return e;
}

std::string Split(const Handle& parent, int color, int key, int64_t timeout_us, Handle* out) {
  std::string e = CudaErr(cudaSetDevice(parent.device));
  if (!e.empty()) return e;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  // A non-blocking split returns at once and its job writes the new
  // communicator into *slot later (seen on NCCL 2.28: NULL on return, the
  // child's "Init START" after it). The slot is on the heap so that a job
  // still running when we give up writes into memory that stays valid (it
  // is then leaked, a pointer's worth).
  auto* slot = new ncclComm_t(nullptr);
  e = Err(ncclCommSplit(C(parent), color, key, slot, &config));
  if (!e.empty()) {
    delete slot;
    return e;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
  ncclComm_t comm = nullptr;
  while ((comm = __atomic_load_n(slot, __ATOMIC_ACQUIRE)) == nullptr) {
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(C(parent), &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress) {
      return "nccl split: " + Err(async);  // slot leaked: the job may still write it
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return "nccl split: the new communicator did not appear in time";
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  delete slot;
  cudaStream_t s = nullptr;
  e = CudaErr(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  out->comm = comm;
  out->stream = s;
  out->device = parent.device;
  return e;
}

std::string AllReduce(const Handle& h, const void* send, void* recv, int64_t count, int dtype,
                      int reduce_op) {
  ncclDataType_t t;
  if (!Type(dtype, &t)) return "nccl: unsupported dtype";
  return Err(ncclAllReduce(send, recv, count, t, Op(reduce_op), C(h), S(h)));
}

std::string Broadcast(const Handle& h, void* buffer, int64_t count, int dtype, int root) {
  ncclDataType_t t;
  if (!Type(dtype, &t)) return "nccl: unsupported dtype";
  return Err(ncclBroadcast(buffer, buffer, count, t, root, C(h), S(h)));
}

std::string AllGatherV(const Handle& h, const void* send, void* recv,
                       const std::vector<int64_t>& counts, int dtype) {
  ncclDataType_t t;
  if (!Type(dtype, &t)) return "nccl: unsupported dtype";
  const int es = ElemSize(dtype);
  std::string e = Err(ncclGroupStart());
  int64_t off = 0;
  for (size_t j = 0; j < counts.size() && e.empty(); ++j) {
    e = Err(ncclBroadcast(send, static_cast<char*>(recv) + off * es, counts[j], t,
                          static_cast<int>(j), C(h), S(h)));
    off += counts[j];
  }
  const std::string end = Err(ncclGroupEnd());
  return e.empty() ? end : e;
}

std::string ReduceScatterV(const Handle& h, const void* send, void* recv,
                           const std::vector<int64_t>& counts, int dtype, int reduce_op, int me) {
  ncclDataType_t t;
  if (!Type(dtype, &t)) return "nccl: unsupported dtype";
  const int es = ElemSize(dtype);
  std::string e = Err(ncclGroupStart());
  int64_t off = 0;
  for (size_t j = 0; j < counts.size() && e.empty(); ++j) {
    e = Err(ncclReduce(static_cast<const char*>(send) + off * es,
                       static_cast<int>(j) == me ? recv : nullptr, counts[j], t, Op(reduce_op),
                       static_cast<int>(j), C(h), S(h)));
    off += counts[j];
  }
  const std::string end = Err(ncclGroupEnd());
  return e.empty() ? end : e;
}

std::string Grouped(const Handle& h, const std::vector<P2P>& ops) {
  std::string e = Err(ncclGroupStart());
  for (const P2P& op : ops) {
    if (!e.empty()) break;
    e = op.send ? Err(ncclSend(op.data, op.bytes, ncclUint8, op.peer, C(h), S(h)))
                : Err(ncclRecv(op.data, op.bytes, ncclUint8, op.peer, C(h), S(h)));
  }
  const std::string end = Err(ncclGroupEnd());
  return e.empty() ? end : e;
}

std::string WaitForCompute(const Handle& h) {
  std::string e = CudaErr(cudaSetDevice(h.device));
  if (!e.empty()) return e;
  cudaEvent_t done = nullptr;
  e = CudaErr(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  if (!e.empty()) return e;
  const cudaStream_t compute = static_cast<cudaStream_t>(oneflow_sbp::cuda::ThreadStream());
  e = CudaErr(cudaEventRecord(done, compute));
  if (e.empty()) e = CudaErr(cudaStreamWaitEvent(S(h), done, 0));
  // Destroying an event with waits still pending is allowed: the runtime
  // frees it once the wait is satisfied.
  cudaEventDestroy(done);
  return e;
}

std::string CopyOnStream(const Handle& h, void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0 || dst == src) return "";
  return CudaErr(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, S(h)));
}

int Wait(const Handle& h, int64_t timeout_us, std::string* error) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
  while (true) {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(C(h), &async);
    if (r != ncclSuccess) {
      *error = Err(r);
      return 2;
    }
    if (async != ncclSuccess && async != ncclInProgress) {
      *error = Err(async);
      return 2;
    }
    if (async == ncclSuccess) {
      const cudaError_t q = h.stream ? cudaStreamQuery(S(h)) : cudaSuccess;
      if (q == cudaSuccess) return 0;
      if (q != cudaErrorNotReady) {
        *error = CudaErr(q);
        return 2;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return 1;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void Abort(Handle* h) {
  if (h->comm != nullptr) ncclCommAbort(C(*h));
  h->comm = nullptr;
}

void Destroy(Handle* h) {
  if (h->comm != nullptr) {
    ncclCommFinalize(C(*h));
    std::string ignored;
    Wait(*h, 10 * 1000 * 1000, &ignored);
    ncclCommDestroy(C(*h));
  }
  if (h->stream != nullptr) cudaStreamDestroy(S(*h));
  h->comm = nullptr;
  h->stream = nullptr;
}

std::string DeviceScratch(const Handle& h, void** ptr, int64_t bytes) {
  std::string e = CudaErr(cudaSetDevice(h.device));
  return e.empty() ? CudaErr(cudaMalloc(ptr, bytes)) : e;
}

void FreeDevice(void* ptr) {
  if (ptr != nullptr) cudaFree(ptr);
}

bool IsDevicePointer(const void* ptr) { return ::oneflow_sbp::cuda::IsDevicePointer(ptr); }

namespace {
std::string SyncCopy(const Handle& h, void* dst, const void* src, int64_t bytes,
                     cudaMemcpyKind kind) {
  if (bytes <= 0) return "";
  std::string e = CudaErr(cudaSetDevice(h.device));
  if (e.empty()) e = CudaErr(cudaMemcpyAsync(dst, src, bytes, kind, S(h)));
  if (e.empty()) e = CudaErr(cudaStreamSynchronize(S(h)));
  return e;
}
}  // namespace

std::string CopyToDevice(const Handle& h, void* device, const void* host, int64_t bytes) {
  return SyncCopy(h, device, host, bytes, cudaMemcpyHostToDevice);
}

std::string CopyToHost(const Handle& h, void* host, const void* device, int64_t bytes) {
  return SyncCopy(h, host, device, bytes, cudaMemcpyDeviceToHost);
}

int DeviceCount() { return oneflow_sbp::cuda::DeviceCount(); }

}  // namespace oneflow_sbp::comm::nccl
