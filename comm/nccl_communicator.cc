#include "comm/nccl_communicator.h"

#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/kv_store.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm {

struct NcclShared {
  absl::Mutex mu;
  absl::Status health ABSL_GUARDED_BY(mu);
  std::unique_ptr<KvStoreClient> client;  // thread-safe
  std::unique_ptr<KvStoreServer> server;  // world rank 0 only
  int device = 0;

  ~NcclShared() {
    if (server != nullptr) server->Shutdown(absl::Seconds(5));
  }
};

namespace {

int ReduceCode(DataType dtype, ReduceOp op) {
  // Bool sum is logical or (reduce_op.h): NCCL would add the 0/1 bytes.
  if (dtype == DataType::kBool && op == ReduceOp::kSum) return 1;
  return op == ReduceOp::kMax ? 1 : op == ReduceOp::kMin ? 2 : 0;
}

int64_t Micros(absl::Duration d) {
  return d == absl::InfiniteDuration() ? int64_t{1} << 62 : absl::ToInt64Microseconds(d);
}

int Mod(int64_t i, int n) { return static_cast<int>(((i % n) + n) % n); }

int64_t Sum(absl::Span<const int64_t> v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

}  // namespace

// Device views of one call's buffers. Device pointers pass through; host
// buffers get device scratch, copied in before the call (if read) and out
// after it (if written). The same host pointer and size maps to the same
// scratch, so in-place calls stay in place.
class NcclCommunicator::Staging {
 public:
  explicit Staging(const nccl::Handle& h) : h_(h) {}
  ~Staging() {
    for (const Entry& e : entries_) nccl::FreeDevice(e.device);
  }

  // *device = the device view of `bytes` at `p`; "" or an error.
  std::string Add(const void* p, int64_t bytes, bool in, bool out, void** device) {
    if (bytes <= 0 || p == nullptr || nccl::IsDevicePointer(p)) {
      *device = const_cast<void*>(p);
      return "";
    }
    for (Entry& e : entries_) {
      if (e.host == p && e.bytes == bytes) {
        e.out = e.out || out;
        *device = e.device;
        // Added first as written only (the receive side of an in-place
        // call: a one-rank all-gather's send is its whole receive buffer),
        // and now read: the host data must go up after all.
        if (in && !e.in) {
          e.in = true;
          return nccl::CopyToDevice(h_, e.device, p, bytes);
        }
        return "";
      }
    }
    Entry e{const_cast<void*>(p), nullptr, bytes, in, out};
    std::string err = nccl::DeviceScratch(h_, &e.device, bytes);
    if (err.empty()) entries_.push_back(e);
    if (err.empty() && in) err = nccl::CopyToDevice(h_, e.device, p, bytes);
    *device = e.device;
    return err;
  }

  std::string CopyOut() {
    for (const Entry& e : entries_) {
      if (!e.out) continue;
      const std::string err = nccl::CopyToHost(h_, e.host, e.device, e.bytes);
      if (!err.empty()) return err;
    }
    return "";
  }

 private:
  struct Entry {
    void* host;
    void* device;
    int64_t bytes;
    bool in;
    bool out;
  };
  const nccl::Handle& h_;
  std::vector<Entry> entries_;
};

NcclCommunicator::NcclCommunicator(nccl::Handle handle, std::shared_ptr<NcclShared> shared,
                                   std::vector<int> members, int rank, bool world,
                                   std::string key, absl::Duration default_timeout,
                                   std::shared_ptr<Counter> parent_counter)
    : Communicator(std::move(members), rank, world, default_timeout, std::move(parent_counter)),
      handle_(handle),
      shared_(std::move(shared)),
      key_(std::move(key)) {}

NcclCommunicator::~NcclCommunicator() {
  {
    absl::MutexLock lock(&split_mu_);
    splits_.clear();
  }
  nccl::FreeDevice(scratch_);
  if (!health().ok()) nccl::Abort(&handle_);
  nccl::Destroy(&handle_);
}

absl::Status NcclCommunicator::health() const {
  absl::MutexLock lock(&shared_->mu);
  return shared_->health;
}

void NcclCommunicator::Abort(const absl::Status& reason) {
  {
    absl::MutexLock lock(&shared_->mu);
    if (shared_->health.ok()) {
      shared_->health =
          absl::AbortedError(absl::StrCat(DebugName(), " aborted: ", reason.message()));
    }
  }
  // This group's pending work stops now; the world's other groups fail
  // their next call (kAborted) or their own timeout.
  nccl::Abort(&handle_);
}

absl::Status NcclCommunicator::Finish(const std::string& enqueue_error, absl::Duration timeout) {
  std::string error = enqueue_error;
  int state = 2;
  if (error.empty()) state = nccl::Wait(handle_, Micros(timeout), &error);
  if (state == 0) return absl::OkStatus();
  const absl::Status status =
      state == 1 ? absl::DeadlineExceededError(
                       absl::StrCat("nccl: not done after ", absl::FormatDuration(timeout)))
                 : absl::InternalError(error);
  Abort(status);
  return status;
}

// Each Do* stages host buffers, enqueues, waits, copies results back, and
// on success reports the ring model's bytes (see the header).

absl::Status NcclCommunicator::Complete(Staging& staging, const std::string& enqueue_error,
                                        absl::Duration timeout) {
  OFS_RETURN_IF_ERROR(Finish(enqueue_error, timeout));
  const std::string err = staging.CopyOut();
  return err.empty() ? absl::OkStatus() : absl::InternalError(err);
}

absl::Status NcclCommunicator::DoAllGatherV(const void* send, void* recv,
                                            absl::Span<const int64_t> counts, DataType dtype,
                                            const Call& call) {
  const int64_t es = ByteSizeOf(dtype);
  const int k = rank();
  Staging st(handle_);
  void* dsend = nullptr;
  void* drecv = nullptr;
  std::string err = nccl::WaitForCompute(handle_);
  if (err.empty()) err = st.Add(recv, Sum(counts) * es, /*in=*/false, /*out=*/true, &drecv);
  if (err.empty()) err = st.Add(send, counts[k] * es, true, false, &dsend);
  if (err.empty()) {
    err = nccl::AllGatherV(handle_, dsend, drecv,
                           std::vector<int64_t>(counts.begin(), counts.end()),
                           static_cast<int>(dtype));
  }
  OFS_RETURN_IF_ERROR(Complete(st, err, call.timeout));
  const int64_t t = Sum(counts) * es;
  *call.traffic = {t - counts[Mod(k + 1, size())] * es, t - counts[k] * es};
  return absl::OkStatus();
}

absl::Status NcclCommunicator::DoReduceScatterV(const void* send, void* recv,
                                                absl::Span<const int64_t> counts, DataType dtype,
                                                const Call& call) {
  const int64_t es = ByteSizeOf(dtype);
  const int k = rank();
  Staging st(handle_);
  void* dsend = nullptr;
  void* drecv = nullptr;
  std::string err = nccl::WaitForCompute(handle_);
  if (err.empty()) err = st.Add(send, Sum(counts) * es, true, false, &dsend);
  if (err.empty()) err = st.Add(recv, counts[k] * es, false, true, &drecv);
  if (err.empty()) {
    err = nccl::ReduceScatterV(handle_, dsend, drecv,
                               std::vector<int64_t>(counts.begin(), counts.end()),
                               static_cast<int>(dtype), ReduceCode(dtype, call.reduce_op), k);
  }
  OFS_RETURN_IF_ERROR(Complete(st, err, call.timeout));
  const int64_t t = Sum(counts) * es;
  *call.traffic = {t - counts[k] * es, t - counts[Mod(k - 1, size())] * es};
  return absl::OkStatus();
}

absl::Status NcclCommunicator::DoAllReduce(const void* send, void* recv, int64_t count,
                                           DataType dtype, const Call& call) {
  const int64_t es = ByteSizeOf(dtype);
  Staging st(handle_);
  void* dsend = nullptr;
  void* drecv = nullptr;
  std::string err = nccl::WaitForCompute(handle_);
  if (err.empty()) err = st.Add(send, count * es, true, false, &dsend);
  if (err.empty()) err = st.Add(recv, count * es, false, true, &drecv);
  if (err.empty()) {
    err = nccl::AllReduce(handle_, dsend, drecv, count, static_cast<int>(dtype),
                          ReduceCode(dtype, call.reduce_op));
  }
  OFS_RETURN_IF_ERROR(Complete(st, err, call.timeout));
  // Ring: reduce-scatter then all-gather over n balanced parts.
  const int n = size();
  const int k = rank();
  auto part = [&](int j) { return (count / n + (Mod(j, n) < count % n ? 1 : 0)) * es; };
  const int64_t t = count * es;
  *call.traffic = {(t - part(k)) + (t - part(k + 1)), (t - part(k - 1)) + (t - part(k))};
  return absl::OkStatus();
}

absl::Status NcclCommunicator::DoAllToAllV(const void* send,
                                           absl::Span<const int64_t> send_counts, void* recv,
                                           absl::Span<const int64_t> recv_counts, DataType dtype,
                                           const Call& call) {
  const int64_t es = ByteSizeOf(dtype);
  Staging st(handle_);
  void* dsend_v = nullptr;
  void* drecv_v = nullptr;
  std::string err = nccl::WaitForCompute(handle_);
  if (err.empty()) err = st.Add(send, Sum(send_counts) * es, true, false, &dsend_v);
  if (err.empty()) err = st.Add(recv, Sum(recv_counts) * es, false, true, &drecv_v);
  char* dsend = static_cast<char*>(dsend_v);
  char* drecv = static_cast<char*>(drecv_v);
  std::vector<nccl::P2P> ops;
  Traffic moved;
  int64_t soff = 0, roff = 0;
  for (int j = 0; j < size() && err.empty(); ++j) {
    if (j == rank()) {
      err = nccl::CopyOnStream(handle_, drecv + roff, dsend + soff, send_counts[j] * es);
    } else {
      if (send_counts[j] > 0) ops.push_back({true, j, dsend + soff, send_counts[j] * es});
      if (recv_counts[j] > 0) ops.push_back({false, j, drecv + roff, recv_counts[j] * es});
      moved.bytes_sent += send_counts[j] * es;
      moved.bytes_received += recv_counts[j] * es;
    }
    soff += send_counts[j] * es;
    roff += recv_counts[j] * es;
  }
  if (err.empty()) err = nccl::Grouped(handle_, ops);
  OFS_RETURN_IF_ERROR(Complete(st, err, call.timeout));
  *call.traffic = moved;
  return absl::OkStatus();
}

absl::Status NcclCommunicator::DoBroadcast(void* buffer, int64_t count, DataType dtype, int root,
                                           const Call& call) {
  const int64_t bytes = count * ByteSizeOf(dtype);
  Staging st(handle_);
  void* dbuf = nullptr;
  std::string err = nccl::WaitForCompute(handle_);
  if (err.empty()) err = st.Add(buffer, bytes, rank() == root, rank() != root, &dbuf);
  if (err.empty()) err = nccl::Broadcast(handle_, dbuf, count, static_cast<int>(dtype), root);
  OFS_RETURN_IF_ERROR(Complete(st, err, call.timeout));
  // Chain from the root in ring order.
  const int d = Mod(rank() - root, size());
  *call.traffic = {d == size() - 1 ? 0 : bytes, d == 0 ? 0 : bytes};
  return absl::OkStatus();
}

absl::Status NcclCommunicator::DoPointToPoint(bool send, void* data, int64_t count,
                                              DataType dtype, int peer, const Call& call) {
  const int64_t bytes = count * ByteSizeOf(dtype);
  Staging st(handle_);
  void* d = nullptr;
  std::string err = nccl::WaitForCompute(handle_);
  if (err.empty()) err = st.Add(data, bytes, send, !send, &d);
  if (err.empty()) err = nccl::Grouped(handle_, {{send, peer, d, bytes}});
  OFS_RETURN_IF_ERROR(Complete(st, err, call.timeout));
  *call.traffic = send ? Traffic{bytes, 0} : Traffic{0, bytes};
  return absl::OkStatus();
}

absl::Status NcclCommunicator::DoBarrier(const Call& call) {
  if (scratch_ == nullptr) {
    const std::string err = nccl::DeviceScratch(handle_, &scratch_, 8);
    if (!err.empty()) return absl::InternalError(absl::StrCat("barrier scratch: ", err));
  }
  OFS_RETURN_IF_ERROR(Finish(
      nccl::AllReduce(handle_, scratch_, scratch_, 1, static_cast<int>(DataType::kUInt8), 0),
      call.timeout));
  // Dissemination model: ceil(log2 n) one-byte tokens each way.
  int64_t rounds = 0;
  for (int dist = 1; dist < size(); dist *= 2) ++rounds;
  *call.traffic = {rounds, rounds};
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Communicator>> NcclCommunicator::FinishChild(
    std::string err, nccl::Handle child, std::vector<int> members, int position,
    std::string key) {
  // The child is non-blocking too: wait for its creation like a call.
  if (err.empty()) {
    const int state = nccl::Wait(child, Micros(default_timeout()), &err);
    if (state == 1) err = "nccl: new communicator not ready in time";
  }
  if (!err.empty()) {
    nccl::Abort(&child);
    nccl::Destroy(&child);
    const absl::Status status = absl::InternalError(err);
    Abort(status);
    return status;
  }
  return std::shared_ptr<Communicator>(new NcclCommunicator(
      child, shared_, std::move(members), position, /*world=*/false, std::move(key),
      default_timeout(), counter()));
}

absl::StatusOr<std::shared_ptr<Communicator>> NcclCommunicator::NewSubGroup(
    const std::vector<int>& positions, std::vector<int> members, int position) {
  OFS_RETURN_IF_ERROR(health());
  // Only the listed members get here, so the group cannot be split off
  // this one (a collective of all members): its first member publishes a
  // fresh unique id under a key every member derives the same way.
  const std::string key = absl::StrCat(key_, "/", absl::StrJoin(positions, ","));
  const absl::Time deadline = absl::Now() + default_timeout();
  std::string id;
  if (position == 0) {
    const std::string err = nccl::NewUniqueId(&id);
    if (!err.empty()) return absl::InternalError(absl::StrCat("ncclGetUniqueId: ", err));
    OFS_RETURN_IF_ERROR(shared_->client->Set(key, id, deadline));
  } else {
    OFS_ASSIGN_OR_RETURN(id, shared_->client->Get(key, deadline));
  }
  nccl::Handle child;
  const std::string err = nccl::InitRank(id, static_cast<int>(positions.size()), position,
                                         shared_->device, &child);
  return FinishChild(err, child, std::move(members), position, key);
}

absl::StatusOr<std::shared_ptr<Communicator>> NcclCommunicator::ForMeshAxes(
    absl::Span<const int64_t> hierarchy, MeshAxisMask axes) {
  OFS_ASSIGN_OR_RETURN(const std::vector<int> group, MeshGroup(hierarchy, axes));
  std::vector<int64_t> cache_key(hierarchy.begin(), hierarchy.end());
  cache_key.push_back(axes);
  absl::MutexLock lock(&split_mu_);
  auto it = splits_.find(cache_key);
  if (it != splits_.end()) return it->second;
  OFS_RETURN_IF_ERROR(health());
  // Color: the group's first member (unique per group); key: this rank's
  // place in the group, so members come in mesh order as on the ring
  // backend.
  int position = 0;
  std::vector<int> members;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] == rank()) position = static_cast<int>(i);
    members.push_back(world_ranks()[group[i]]);
  }
  nccl::Handle child;
  const std::string err =
      nccl::Split(handle_, group.front(), position, Micros(default_timeout()), &child);
  absl::StatusOr<std::shared_ptr<Communicator>> made = FinishChild(
      err, child, std::move(members), position,
      absl::StrCat(key_, "/mesh[", absl::StrJoin(hierarchy, ","), "]:", axes));
  if (!made.ok()) {
    return Error("ForMeshAxes", made.status().code(), made.status().message());
  }
  splits_[cache_key] = *made;
  return made;
}

absl::StatusOr<std::unique_ptr<NcclCommunicator>> ConnectNccl(const NcclOptions& o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size || o.master_port < 1 ||
      o.master_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("nccl options: rank ", o.rank, " of ", o.size,
                                                   ", master_port ", o.master_port));
  }
  const int devices = nccl::DeviceCount();
  if (devices == 0) {
    return absl::FailedPreconditionError("nccl backend: no CUDA device on this machine");
  }
  if (o.job_secret.empty()) {
    return absl::InvalidArgumentError(
        "nccl options: the job secret is empty (set OFS_JOB_SECRET in every rank; sbp launch "
        "does)");
  }
  const absl::Time deadline = absl::Now() + o.connect_timeout;
  auto shared = std::make_shared<NcclShared>();
  shared->device = o.device >= 0 ? o.device : o.rank % devices;
  if (o.rank == 0) {
    KvStoreOptions store;
    store.secret = o.job_secret;
    store.world_size = o.size;
    OFS_ASSIGN_OR_RETURN(shared->server,
                         KvStoreServer::Start(o.master_addr, o.master_port, store));
  }
  OFS_ASSIGN_OR_RETURN(shared->client, KvStoreClient::Connect(o.master_addr, o.master_port,
                                                              o.job_secret, o.rank, deadline));
  std::string id;
  if (o.rank == 0) {
    const std::string err = nccl::NewUniqueId(&id);
    if (!err.empty()) return absl::InternalError(absl::StrCat("ncclGetUniqueId: ", err));
    OFS_RETURN_IF_ERROR(shared->client->Set("nccl/unique_id", id, deadline));
  } else {
    OFS_ASSIGN_OR_RETURN(id, shared->client->Get("nccl/unique_id", deadline));
  }
  nccl::Handle handle;
  std::string err = nccl::InitRank(id, o.size, o.rank, shared->device, &handle);
  if (err.empty()) {
    const int state =
        nccl::Wait(handle, absl::ToInt64Microseconds(deadline - absl::Now()), &err);
    if (state == 1) {
      nccl::Abort(&handle);
      nccl::Destroy(&handle);
      return absl::DeadlineExceededError(
          absl::StrCat("nccl rank ", o.rank, ": not every rank joined in time"));
    }
  }
  if (!err.empty()) {
    nccl::Abort(&handle);
    nccl::Destroy(&handle);
    return absl::InternalError(absl::StrCat("nccl init of rank ", o.rank, ": ", err));
  }
  std::vector<int> members(o.size);
  std::iota(members.begin(), members.end(), 0);
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(
      handle, std::move(shared), std::move(members), o.rank, /*world=*/true, "nccl/group",
      o.default_timeout, nullptr));
}

}  // namespace oneflow_sbp::comm
