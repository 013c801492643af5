#include "comm/ring_communicator.h"

#include <numeric>
#include <utility>

#include "comm/collectives.h"
#include "comm/transport.h"

namespace oneflow_sbp::comm {
namespace {

// Salts that keep the tag spaces of worlds, sub-groups, collectives and
// point-to-point messages apart.
constexpr uint64_t kWorldSalt = 0x6f6e65666c6f7731ULL;
constexpr uint64_t kSubGroupSalt = 0x7375626772707332ULL;
constexpr uint64_t kPointToPointSalt = 0x7032706d73677333ULL;

std::vector<int64_t> ToBytes(absl::Span<const int64_t> counts, DataType dtype) {
  std::vector<int64_t> bytes(counts.begin(), counts.end());
  for (int64_t& b : bytes) b *= ByteSizeOf(dtype);
  return bytes;
}

}  // namespace

std::unique_ptr<Communicator> Communicator::CreateWorld(std::shared_ptr<Transport> transport,
                                                        absl::Duration default_timeout) {
  const int n = transport->size();
  std::vector<int> members(n);
  std::iota(members.begin(), members.end(), 0);
  const int rank = transport->rank();
  return std::make_unique<RingCommunicator>(std::move(transport), std::move(members), rank,
                                            MixTag(kWorldSalt, n), default_timeout, nullptr);
}

RingCommunicator::RingCommunicator(std::shared_ptr<Transport> transport, std::vector<int> members,
                                   int rank, uint64_t group_id, absl::Duration default_timeout,
                                   std::shared_ptr<Counter> parent_counter)
    : Communicator(members, rank,
                   /*world=*/group_id == MixTag(kWorldSalt, transport->size()), default_timeout,
                   std::move(parent_counter)),
      transport_(std::move(transport)),
      group_id_(group_id),
      sends_to_(new std::atomic<uint64_t>[members.size()]),
      recvs_from_(new std::atomic<uint64_t>[members.size()]) {
  for (size_t i = 0; i < members.size(); ++i) {
    sends_to_[i] = 0;
    recvs_from_[i] = 0;
  }
}

void RingCommunicator::Abort(const absl::Status& reason) { transport_->Abort(reason); }

absl::Status RingCommunicator::health() const { return transport_->health(); }

GroupCall RingCommunicator::MakeCall(uint64_t tag_base, const Call& c,
                                     const void* payload) const {
  GroupCall call;
  call.transport = transport_.get();
  call.members = world_ranks();
  call.me = rank();
  call.tag_base = tag_base;
  call.deadline = absl::Now() + c.timeout;
  call.traffic = c.traffic;
  call.buffers = transport_->buffers();
  // A device world also takes calls on plain host buffers (as NCCL's
  // backend does by staging): the demo's counters, a kernel's per-row
  // statistics. Those run on the host path; every rank of the call passes
  // host memory, and a rank that passed device memory still gets the
  // right bytes, because each message names its memory.
  if (payload != nullptr && !call.buffers.host() && !call.buffers.Holds(payload)) {
    call.buffers = BufferOps();
    call.payload = Memory::kHost;
  }
  return call;
}

uint64_t RingCommunicator::NextCollectiveTag() {
  return MixTag(group_id_, next_seq_.fetch_add(1, std::memory_order_relaxed));
}

uint64_t RingCommunicator::NextPointToPointTag(int src, int dst,
                                               std::atomic<uint64_t>& counter) const {
  const uint64_t seq = counter.fetch_add(1, std::memory_order_relaxed);
  return MixTag(MixTag(MixTag(group_id_ ^ kPointToPointSalt, src), dst), seq);
}

absl::Status RingCommunicator::DoAllGatherV(const void* send, void* recv,
                                            absl::Span<const int64_t> counts, DataType dtype,
                                            const Call& call) {
  return RingAllGatherV(MakeCall(NextCollectiveTag(), call, recv), send, recv,
                        ToBytes(counts, dtype));
}

absl::Status RingCommunicator::DoReduceScatterV(const void* send, void* recv,
                                                absl::Span<const int64_t> counts, DataType dtype,
                                                const Call& call) {
  return RingReduceScatter(MakeCall(NextCollectiveTag(), call, send), send, counts, dtype,
                           call.reduce_op, recv);
}

absl::Status RingCommunicator::DoAllReduce(const void* send, void* recv, int64_t count,
                                           DataType dtype, const Call& call) {
  return RingAllReduce(MakeCall(NextCollectiveTag(), call, recv), send, recv, count, dtype,
                       call.reduce_op);
}

absl::Status RingCommunicator::DoAllToAllV(const void* send,
                                           absl::Span<const int64_t> send_counts, void* recv,
                                           absl::Span<const int64_t> recv_counts, DataType dtype,
                                           const Call& call) {
  return PairwiseAllToAllV(MakeCall(NextCollectiveTag(), call, recv != nullptr ? recv : send),
                           send,
                           ToBytes(send_counts, dtype), recv, ToBytes(recv_counts, dtype));
}

absl::Status RingCommunicator::DoBroadcast(void* buffer, int64_t count, DataType dtype, int root,
                                           const Call& call) {
  return ChainBroadcast(MakeCall(NextCollectiveTag(), call, buffer), buffer, count * ByteSizeOf(dtype),
                        root);
}

absl::Status RingCommunicator::DoPointToPoint(bool send, void* data, int64_t count,
                                              DataType dtype, int peer, const Call& call) {
  const uint64_t tag = send ? NextPointToPointTag(rank(), peer, sends_to_[peer])
                            : NextPointToPointTag(peer, rank(), recvs_from_[peer]);
  return PointToPoint(MakeCall(tag, call, data), send ? P2POp::Kind::kSend : P2POp::Kind::kRecv, peer,
                      data, count * ByteSizeOf(dtype));
}

absl::Status RingCommunicator::DoBarrier(const Call& call) {
  return DisseminationBarrier(MakeCall(NextCollectiveTag(), call));
}

absl::StatusOr<std::shared_ptr<Communicator>> RingCommunicator::NewSubGroup(
    const std::vector<int>& positions, std::vector<int> members, int position) {
  // The id depends only on the parent's id and the listed positions, so
  // every member derives the same id without talking to the others.
  uint64_t id = MixTag(MixTag(group_id_, kSubGroupSalt), positions.size());
  for (int p : positions) id = MixTag(id, p);
  return std::shared_ptr<Communicator>(std::make_shared<RingCommunicator>(
      transport_, std::move(members), position, id, default_timeout(), counter()));
}

}  // namespace oneflow_sbp::comm
