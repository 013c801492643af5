#include "boxing/comm/nccl_communicator.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "boxing/comm/kv_store.h"

namespace oneflow_sbp::comm {
namespace {

int ReduceCode(ReduceOp op) {
  return op == ReduceOp::kMax ? 1 : op == ReduceOp::kMin ? 2 : 0;
}

int64_t Micros(absl::Duration d) {
  return d == absl::InfiniteDuration() ? int64_t{1} << 62 : absl::ToInt64Microseconds(d);
}

}  // namespace

NcclCommunicator::NcclCommunicator(nccl::Handle handle, int rank, int size, int world_rank,
                                   absl::Duration default_timeout)
    : handle_(handle),
      rank_(rank),
      size_(size),
      world_rank_(world_rank),
      default_timeout_(default_timeout) {}

NcclCommunicator::~NcclCommunicator() {
  {
    absl::MutexLock lock(&mu_);
    subgroups_.clear();
  }
  if (health().ok()) {
    nccl::Destroy(&handle_);
  } else {
    nccl::Abort(&handle_);
    nccl::Destroy(&handle_);
  }
  if (store_ != nullptr) store_->Shutdown(absl::Seconds(5));
}

std::string NcclCommunicator::DebugName() const {
  return absl::StrCat("nccl rank ", rank_, " of ", size_, " (world rank ", world_rank_, ")");
}

absl::Status NcclCommunicator::health() const {
  absl::MutexLock lock(&mu_);
  return health_;
}

void NcclCommunicator::Abort(const absl::Status& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (!health_.ok()) return;
    health_ = absl::AbortedError(absl::StrCat(DebugName(), " aborted: ", reason.message()));
  }
  nccl::Abort(&handle_);
}

absl::Status NcclCommunicator::Finish(absl::string_view name, const std::string& enqueue_error,
                                      absl::Duration timeout) {
  const absl::Duration t = timeout == absl::ZeroDuration() ? default_timeout_ : timeout;
  std::string error = enqueue_error;
  int state = 2;
  if (error.empty()) state = nccl::Wait(handle_, Micros(t), &error);
  if (state == 0) return absl::OkStatus();
  const absl::Status status =
      state == 1 ? absl::DeadlineExceededError(absl::StrCat(name, " on ", DebugName(),
                                                            ": not done after ",
                                                            absl::FormatDuration(t)))
                 : absl::InternalError(absl::StrCat(name, " on ", DebugName(), ": ", error));
  Abort(status);
  return status;
}

absl::Status NcclCommunicator::CheckCounts(absl::string_view name,
                                           absl::Span<const int64_t> counts) const {
  if (static_cast<int>(counts.size()) != size_) {
    return absl::InvalidArgumentError(absl::StrCat(name, " on ", DebugName(), ": ",
                                                   counts.size(), " counts for ", size_,
                                                   " members"));
  }
  for (int64_t c : counts) {
    if (c < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " on ", DebugName(), ": negative count ", c));
    }
  }
  return health();
}

absl::Status NcclCommunicator::CheckPeer(absl::string_view name, int peer) const {
  if (peer < 0 || peer >= size_ || peer == rank_) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " on ", DebugName(), ": bad peer ", peer));
  }
  return health();
}

absl::Status NcclCommunicator::AllGatherV(const void* send, void* recv,
                                          absl::Span<const int64_t> counts, DataType dtype,
                                          absl::Duration timeout) {
  absl::Status s = CheckCounts("AllGatherV", counts);
  if (!s.ok()) return s;
  return Finish("AllGatherV",
                nccl::AllGatherV(handle_, send, recv,
                                 std::vector<int64_t>(counts.begin(), counts.end()),
                                 static_cast<int>(dtype)),
                timeout);
}

absl::Status NcclCommunicator::ReduceScatterV(const void* send, void* recv,
                                              absl::Span<const int64_t> counts, DataType dtype,
                                              ReduceOp op, absl::Duration timeout) {
  absl::Status s = CheckCounts("ReduceScatterV", counts);
  if (!s.ok()) return s;
  return Finish("ReduceScatterV",
                nccl::ReduceScatterV(handle_, send, recv,
                                     std::vector<int64_t>(counts.begin(), counts.end()),
                                     static_cast<int>(dtype), ReduceCode(op), rank_),
                timeout);
}

absl::Status NcclCommunicator::AllReduce(const void* send, void* recv, int64_t count,
                                         DataType dtype, ReduceOp op, absl::Duration timeout) {
  if (count < 0) return absl::InvalidArgumentError(absl::StrCat("AllReduce count ", count));
  absl::Status s = health();
  if (!s.ok()) return s;
  return Finish("AllReduce",
                nccl::AllReduce(handle_, send, recv, count, static_cast<int>(dtype),
                                ReduceCode(op)),
                timeout);
}

absl::Status NcclCommunicator::AllToAllV(const void* send, absl::Span<const int64_t> send_counts,
                                         void* recv, absl::Span<const int64_t> recv_counts,
                                         DataType dtype, absl::Duration timeout) {
  absl::Status s = CheckCounts("AllToAllV", send_counts);
  if (s.ok()) s = CheckCounts("AllToAllV", recv_counts);
  if (!s.ok()) return s;
  const int64_t es = ByteSizeOf(dtype);
  std::vector<nccl::P2P> ops;
  int64_t soff = 0, roff = 0;
  std::string err;
  for (int j = 0; j < size_; ++j) {
    char* sp = const_cast<char*>(static_cast<const char*>(send)) + soff * es;
    char* rp = static_cast<char*>(recv) + roff * es;
    if (j == rank_) {
      if (send_counts[j] != recv_counts[j]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AllToAllV on ", DebugName(), ": own chunk ", send_counts[j], " vs ", recv_counts[j]));
      }
      if (err.empty()) err = nccl::CopyOnStream(handle_, rp, sp, send_counts[j] * es);
    } else {
      if (send_counts[j] > 0) ops.push_back({true, j, sp, send_counts[j] * es});
      if (recv_counts[j] > 0) ops.push_back({false, j, rp, recv_counts[j] * es});
    }
    soff += send_counts[j];
    roff += recv_counts[j];
  }
  if (err.empty()) err = nccl::Grouped(handle_, ops);
  return Finish("AllToAllV", err, timeout);
}

absl::Status NcclCommunicator::Broadcast(void* buffer, int64_t count, DataType dtype, int root,
                                         absl::Duration timeout) {
  if (root < 0 || root >= size_ || count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Broadcast on ", DebugName(), ": root ", root, ", count ", count));
  }
  absl::Status s = health();
  if (!s.ok()) return s;
  return Finish("Broadcast", nccl::Broadcast(handle_, buffer, count, static_cast<int>(dtype), root),
                timeout);
}

absl::Status NcclCommunicator::Send(const void* data, int64_t count, DataType dtype, int peer,
                                    absl::Duration timeout) {
  absl::Status s = CheckPeer("Send", peer);
  if (!s.ok()) return s;
  return Finish("Send",
                nccl::Grouped(handle_, {{true, peer, const_cast<void*>(data),
                                         count * ByteSizeOf(dtype)}}),
                timeout);
}

absl::Status NcclCommunicator::Recv(void* data, int64_t count, DataType dtype, int peer,
                                    absl::Duration timeout) {
  absl::Status s = CheckPeer("Recv", peer);
  if (!s.ok()) return s;
  return Finish("Recv", nccl::Grouped(handle_, {{false, peer, data, count * ByteSizeOf(dtype)}}),
                timeout);
}

absl::Status NcclCommunicator::Barrier(absl::Duration timeout) {
  absl::Status s = health();
  if (!s.ok()) return s;
  if (scratch_ == nullptr) {
    const std::string err = nccl::DeviceScratch(&scratch_, 8);
    if (!err.empty()) return absl::InternalError(absl::StrCat("Barrier scratch: ", err));
  }
  return Finish("Barrier",
                nccl::AllReduce(handle_, scratch_, scratch_, 1, static_cast<int>(DataType::kUInt8),
                                0),
                timeout);
}

absl::StatusOr<std::shared_ptr<NcclCommunicator>> NcclCommunicator::ForMeshAxes(
    absl::Span<const int64_t> hierarchy, MeshAxisMask axes) {
  int64_t total = 1;
  for (int64_t d : hierarchy) total *= d;
  if (total != size_ || hierarchy.empty() || (axes >> hierarchy.size()) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("ForMeshAxes on ", DebugName(),
                                                   ": hierarchy does not fit or axes outside"));
  }
  std::vector<int64_t> key(hierarchy.begin(), hierarchy.end());
  key.push_back(axes);
  {
    absl::MutexLock lock(&mu_);
    auto it = subgroups_.find(key);
    if (it != subgroups_.end()) return it->second;
  }
  // Color: this rank's coordinates outside `axes` (row-major); key: its
  // position inside the group (coordinates on `axes`), so members come in
  // mesh order as in Communicator::ForMeshAxes.
  const int n = static_cast<int>(hierarchy.size());
  std::vector<int64_t> coord(n);
  int64_t rest = rank_;
  for (int d = n - 1; d >= 0; --d) {
    coord[d] = rest % hierarchy[d];
    rest /= hierarchy[d];
  }
  int64_t color = 0, position = 0, group = 1;
  for (int d = 0; d < n; ++d) {
    if (axes & AxisBit(d)) {
      position = position * hierarchy[d] + coord[d];
      group *= hierarchy[d];
    } else {
      color = color * hierarchy[d] + coord[d];
    }
  }
  nccl::Handle child;
  std::string err = nccl::Split(handle_, static_cast<int>(color), static_cast<int>(position),
                                &child);
  // The child is non-blocking too: wait for its creation like a call.
  if (err.empty()) {
    const int state = nccl::Wait(child, Micros(default_timeout_), &err);
    if (state == 1) err = "ncclCommSplit did not finish in time";
  }
  if (!err.empty()) {
    nccl::Abort(&child);
    nccl::Destroy(&child);
    const absl::Status status =
        absl::InternalError(absl::StrCat("ForMeshAxes on ", DebugName(), ": ", err));
    Abort(status);
    return status;
  }
  auto sub = std::shared_ptr<NcclCommunicator>(new NcclCommunicator(
      child, static_cast<int>(position), static_cast<int>(group), world_rank_, default_timeout_));
  absl::MutexLock lock(&mu_);
  subgroups_[key] = sub;
  return sub;
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
  const absl::Time deadline = absl::Now() + o.connect_timeout;
  std::unique_ptr<KvStoreServer> server;
  if (o.rank == 0) {
    absl::StatusOr<std::unique_ptr<KvStoreServer>> s =
        KvStoreServer::Start(o.master_addr, o.master_port);
    if (!s.ok()) return s.status();
    server = *std::move(s);
  }
  absl::StatusOr<std::unique_ptr<KvStoreClient>> client =
      KvStoreClient::Connect(o.master_addr, o.master_port, deadline);
  if (!client.ok()) return client.status();
  std::string id;
  if (o.rank == 0) {
    const std::string err = nccl::NewUniqueId(&id);
    if (!err.empty()) return absl::InternalError(absl::StrCat("ncclGetUniqueId: ", err));
    absl::Status s = (*client)->Set("nccl/unique_id", id, deadline);
    if (!s.ok()) return s;
  } else {
    absl::StatusOr<std::string> v = (*client)->Get("nccl/unique_id", deadline);
    if (!v.ok()) return v.status();
    id = *std::move(v);
  }
  nccl::Handle handle;
  const int device = o.device >= 0 ? o.device : o.rank % devices;
  std::string err = nccl::InitRank(id, o.size, o.rank, device, &handle);
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
  auto world = std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(handle, o.rank, o.size, o.rank, o.default_timeout));
  world->store_ = std::move(server);
  return world;
}

}  // namespace oneflow_sbp::comm
