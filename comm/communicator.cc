#include "comm/communicator.h"

#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/collectives.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm {
namespace {

// Buffers larger than this are rejected: byte offsets must fit in int64
// with room to add chunks without overflow.
constexpr int64_t kMaxBytes = int64_t{1} << 60;

}  // namespace

Communicator::Communicator(std::vector<int> members, int rank, bool world,
                           absl::Duration default_timeout, std::shared_ptr<Counter> parent_counter)
    : members_(std::move(members)),
      rank_(rank),
      world_(world),
      default_timeout_(default_timeout > absl::ZeroDuration() ? default_timeout
                                                               : absl::Seconds(60)),
      counter_(std::make_shared<Counter>()) {
  counter_->parent = std::move(parent_counter);
}

Communicator::~Communicator() = default;

std::string Communicator::DebugName() const {
  if (world_) return absl::StrCat("rank ", rank_, " of ", size());
  return absl::StrCat("rank ", rank_, " of {", absl::StrJoin(members_, ","), "} (world rank ",
                      members_[rank_], ")");
}

absl::Status Communicator::Error(absl::string_view name, absl::StatusCode code,
                                 absl::string_view msg) const {
  return absl::Status(code, absl::StrCat(name, " on ", DebugName(), ": ", msg));
}

absl::Status Communicator::CheckCall(absl::string_view name, const CallOptions& options) const {
  if (options.timeout < absl::ZeroDuration()) {
    return Error(name, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("negative timeout ", absl::FormatDuration(options.timeout)));
  }
  const int op = static_cast<int>(options.reduce_op);
  if (op < 0 || op > static_cast<int>(ReduceOp::kMin)) {
    return Error(name, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("unknown reduce op ", op));
  }
  return absl::OkStatus();
}

absl::Status Communicator::CheckCounts(absl::string_view name, absl::string_view what,
                                       absl::Span<const int64_t> counts, DataType dtype) const {
  if (counts.size() != members_.size()) {
    return Error(name, absl::StatusCode::kInvalidArgument,
                 absl::StrCat(what, " has ", counts.size(), " entries; the group has ", size(),
                              " members"));
  }
  int64_t total = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    if (counts[j] < 0 || counts[j] > kMaxBytes / ByteSizeOf(dtype) - total) {
      return Error(name, absl::StatusCode::kInvalidArgument,
                   absl::StrCat(what, "[", j, "] = ", counts[j], " is ",
                                counts[j] < 0 ? "negative" : "too large"));
    }
    total += counts[j];
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Communicator::CheckChunkedCall(absl::string_view name,
                                                       const CallOptions& options,
                                                       absl::Span<const int64_t> counts,
                                                       DataType dtype) const {
  OFS_RETURN_IF_ERROR(CheckCall(name, options));
  OFS_RETURN_IF_ERROR(CheckCounts(name, "counts", counts, dtype));
  return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

absl::Status Communicator::CheckBuffer(absl::string_view name, absl::string_view what,
                                       const void* data, int64_t count, DataType dtype) const {
  if (count < 0 || count > kMaxBytes / ByteSizeOf(dtype)) {
    return Error(name, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("count ", count, " of ", what, " is out of range"));
  }
  if (data == nullptr && count > 0) {
    return Error(name, absl::StatusCode::kInvalidArgument,
                 absl::StrCat(what, " is null but holds ", count, " ", DataTypeName(dtype),
                              " elements"));
  }
  return absl::OkStatus();
}

absl::Status Communicator::CheckPeer(absl::string_view name, absl::string_view what,
                                     int peer) const {
  if (peer < 0 || peer >= size()) {
    return Error(name, absl::StatusCode::kInvalidArgument,
                 absl::StrCat(what, " ", peer, " is not a member (group of ", size(), ")"));
  }
  return absl::OkStatus();
}

absl::Status Communicator::Run(absl::string_view name, const CallOptions& options,
                               absl::FunctionRef<absl::Status(const Call&)> body) {
  absl::Status status = health();
  Traffic traffic;
  if (status.ok()) {
    Call call;
    call.timeout = options.timeout == absl::ZeroDuration() ? default_timeout_ : options.timeout;
    call.reduce_op = options.reduce_op;
    call.traffic = &traffic;
    status = body(call);
  }
  for (Counter* c = counter_.get(); c != nullptr; c = c->parent.get()) {
    c->sent.fetch_add(traffic.bytes_sent, std::memory_order_relaxed);
    c->received.fetch_add(traffic.bytes_received, std::memory_order_relaxed);
  }
  {
    absl::MutexLock lock(&mu_);
    last_call_ = traffic;
  }
  if (options.traffic != nullptr) *options.traffic = traffic;
  if (!status.ok()) return Error(name, status.code(), status.message());
  return absl::OkStatus();
}

absl::Status Communicator::AllGatherV(const void* send, void* recv,
                                      absl::Span<const int64_t> counts, DataType dtype,
                                      const CallOptions& options) {
  constexpr absl::string_view kName = "AllGatherV";
  OFS_ASSIGN_OR_RETURN(const int64_t total, CheckChunkedCall(kName, options, counts, dtype));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "send", send, counts[rank_], dtype));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "recv", recv, total, dtype));
  const int64_t es = ByteSizeOf(dtype);
  const int64_t own_offset =
      std::accumulate(counts.begin(), counts.begin() + rank_, int64_t{0}) * es;
  const char* own_place = static_cast<const char*>(recv) + own_offset;
  if (send != own_place && Overlaps(send, counts[rank_] * es, recv, total * es)) {
    return Error(kName, absl::StatusCode::kInvalidArgument,
                 "send overlaps recv but is not this rank's place in it");
  }
  return Run(kName, options,
             [&](const Call& call) { return DoAllGatherV(send, recv, counts, dtype, call); });
}

absl::Status Communicator::ReduceScatterV(const void* send, void* recv,
                                          absl::Span<const int64_t> counts, DataType dtype,
                                          const CallOptions& options) {
  constexpr absl::string_view kName = "ReduceScatterV";
  OFS_ASSIGN_OR_RETURN(const int64_t total, CheckChunkedCall(kName, options, counts, dtype));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "send", send, total, dtype));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "recv", recv, counts[rank_], dtype));
  return Run(kName, options,
             [&](const Call& call) { return DoReduceScatterV(send, recv, counts, dtype, call); });
}

absl::Status Communicator::AllReduce(const void* send, void* recv, int64_t count, DataType dtype,
                                     const CallOptions& options) {
  constexpr absl::string_view kName = "AllReduce";
  OFS_RETURN_IF_ERROR(CheckCall(kName, options));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "send", send, count, dtype));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "recv", recv, count, dtype));
  const int64_t bytes = count * ByteSizeOf(dtype);
  if (send != recv && Overlaps(send, bytes, recv, bytes)) {
    return Error(kName, absl::StatusCode::kInvalidArgument,
                 "send and recv overlap without being the same buffer");
  }
  return Run(kName, options,
             [&](const Call& call) { return DoAllReduce(send, recv, count, dtype, call); });
}

absl::Status Communicator::AllToAllV(const void* send, absl::Span<const int64_t> send_counts,
                                     void* recv, absl::Span<const int64_t> recv_counts,
                                     DataType dtype, const CallOptions& options) {
  constexpr absl::string_view kName = "AllToAllV";
  OFS_RETURN_IF_ERROR(CheckCall(kName, options));
  OFS_RETURN_IF_ERROR(CheckCounts(kName, "send_counts", send_counts, dtype));
  OFS_RETURN_IF_ERROR(CheckCounts(kName, "recv_counts", recv_counts, dtype));
  if (send_counts[rank_] != recv_counts[rank_]) {
    return Error(kName, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("send_counts[", rank_, "] = ", send_counts[rank_],
                              " differs from recv_counts[", rank_, "] = ", recv_counts[rank_],
                              " (this rank's own chunk)"));
  }
  const int64_t send_total = std::accumulate(send_counts.begin(), send_counts.end(), int64_t{0});
  const int64_t recv_total = std::accumulate(recv_counts.begin(), recv_counts.end(), int64_t{0});
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "send", send, send_total, dtype));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "recv", recv, recv_total, dtype));
  const int64_t es = ByteSizeOf(dtype);
  if (Overlaps(send, send_total * es, recv, recv_total * es)) {
    return Error(kName, absl::StatusCode::kInvalidArgument, "send and recv overlap");
  }
  return Run(kName, options, [&](const Call& call) {
    return DoAllToAllV(send, send_counts, recv, recv_counts, dtype, call);
  });
}

absl::Status Communicator::Broadcast(void* buffer, int64_t count, DataType dtype, int root,
                                     const CallOptions& options) {
  constexpr absl::string_view kName = "Broadcast";
  OFS_RETURN_IF_ERROR(CheckCall(kName, options));
  OFS_RETURN_IF_ERROR(CheckPeer(kName, "root", root));
  OFS_RETURN_IF_ERROR(CheckBuffer(kName, "buffer", buffer, count, dtype));
  return Run(kName, options,
             [&](const Call& call) { return DoBroadcast(buffer, count, dtype, root, call); });
}

absl::Status Communicator::Send(const void* data, int64_t count, DataType dtype, int peer,
                                const CallOptions& options) {
  return PointToPointCall("Send", /*send=*/true, const_cast<void*>(data), count, dtype, peer,
                          options);
}

absl::Status Communicator::Recv(void* data, int64_t count, DataType dtype, int peer,
                                const CallOptions& options) {
  return PointToPointCall("Recv", /*send=*/false, data, count, dtype, peer, options);
}

absl::Status Communicator::PointToPointCall(absl::string_view name, bool send, void* data,
                                            int64_t count, DataType dtype, int peer,
                                            const CallOptions& options) {
  OFS_RETURN_IF_ERROR(CheckCall(name, options));
  OFS_RETURN_IF_ERROR(CheckPeer(name, "peer", peer));
  if (peer == rank_) {
    return Error(name, absl::StatusCode::kInvalidArgument, "peer is this rank");
  }
  OFS_RETURN_IF_ERROR(CheckBuffer(name, "data", data, count, dtype));
  return Run(name, options, [&](const Call& call) {
    return DoPointToPoint(send, data, count, dtype, peer, call);
  });
}

absl::Status Communicator::Barrier(const CallOptions& options) {
  constexpr absl::string_view kName = "Barrier";
  OFS_RETURN_IF_ERROR(CheckCall(kName, options));
  return Run(kName, options, [&](const Call& call) { return DoBarrier(call); });
}

absl::StatusOr<std::shared_ptr<Communicator>> Communicator::SubGroup(
    absl::Span<const int> ranks) {
  constexpr absl::string_view kName = "SubGroup";
  std::vector<bool> seen(size(), false);
  for (int r : ranks) {
    OFS_RETURN_IF_ERROR(CheckPeer(kName, "rank", r));
    if (seen[r]) {
      return Error(kName, absl::StatusCode::kInvalidArgument,
                   absl::StrCat("rank ", r, " is listed twice in {", absl::StrJoin(ranks, ","),
                                "}"));
    }
    seen[r] = true;
  }
  if (!seen[rank_]) {
    return Error(kName, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("this rank (", rank_, ") is not in {", absl::StrJoin(ranks, ","),
                              "}"));
  }
  std::vector<int> key(ranks.begin(), ranks.end());
  absl::MutexLock lock(&mu_);
  std::shared_ptr<Communicator>& slot = subgroups_[key];
  if (slot == nullptr) {
    std::vector<int> members;
    members.reserve(key.size());
    int my_position = 0;
    for (size_t i = 0; i < key.size(); ++i) {
      members.push_back(members_[key[i]]);
      if (key[i] == rank_) my_position = static_cast<int>(i);
    }
    absl::StatusOr<std::shared_ptr<Communicator>> made =
        NewSubGroup(key, std::move(members), my_position);
    if (!made.ok()) {
      subgroups_.erase(key);
      return Error(kName, made.status().code(), made.status().message());
    }
    slot = *std::move(made);
  }
  return slot;
}

absl::StatusOr<std::vector<int>> Communicator::MeshGroup(absl::Span<const int64_t> hierarchy,
                                                         MeshAxisMask axes) const {
  constexpr absl::string_view kName = "ForMeshAxes";
  std::vector<int64_t> ids(size());
  std::iota(ids.begin(), ids.end(), 0);
  absl::StatusOr<Placement> mesh = Placement::Make(DeviceType::kCpu, ids, hierarchy);
  if (!mesh.ok()) {
    return Error(kName, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("hierarchy [", absl::StrJoin(hierarchy, ","), "] does not fit ",
                              size(), " ranks: ", mesh.status().message()));
  }
  if (mesh->num_axes() < 32 && (axes >> mesh->num_axes()) != 0) {
    return Error(kName, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("axis mask ", axes, " names axes beyond hierarchy [",
                              absl::StrJoin(hierarchy, ","), "]"));
  }
  const std::vector<int64_t> group = mesh->SubGroup(rank_, axes);
  return std::vector<int>(group.begin(), group.end());
}

absl::StatusOr<std::shared_ptr<Communicator>> Communicator::ForMeshAxes(
    absl::Span<const int64_t> hierarchy, MeshAxisMask axes) {
  OFS_ASSIGN_OR_RETURN(const std::vector<int> ranks, MeshGroup(hierarchy, axes));
  return SubGroup(ranks);
}

Traffic Communicator::last_call_traffic() const {
  absl::MutexLock lock(&mu_);
  return last_call_;
}

Traffic Communicator::total_traffic() const {
  return Traffic{counter_->sent.load(std::memory_order_relaxed),
                 counter_->received.load(std::memory_order_relaxed)};
}

}  // namespace oneflow_sbp::comm
