// RingCommunicator: the Communicator backend that runs ring algorithms
// (collectives.h) over a point-to-point host Transport and reduces on the
// host. The in-process world (inprocess_world.h) and the Gloo backend
// (gloo_communicator.h) both make one through Communicator::CreateWorld;
// nothing outside comm needs this header.
//
// Messages of different groups and calls never mix: each group has an id
// derived from its parent's and its members' positions, every collective
// call takes the next sequence number of its group, and point-to-point
// messages count per (sender, receiver). Sub-groups share the world's
// transport, so creating one sends nothing.
#ifndef COMM_RING_COMMUNICATOR_H_
#define COMM_RING_COMMUNICATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace oneflow_sbp::comm {

struct GroupCall;

class RingCommunicator final : public Communicator {
 public:
  RingCommunicator(std::shared_ptr<Transport> transport, std::vector<int> members, int rank,
                   uint64_t group_id, absl::Duration default_timeout,
                   std::shared_ptr<Counter> parent_counter);

  void Abort(const absl::Status& reason) override;
  absl::Status health() const override;

 protected:
  absl::Status DoAllGatherV(const void* send, void* recv, absl::Span<const int64_t> counts,
                            DataType dtype, const Call& call) override;
  absl::Status DoReduceScatterV(const void* send, void* recv, absl::Span<const int64_t> counts,
                                DataType dtype, const Call& call) override;
  absl::Status DoAllReduce(const void* send, void* recv, int64_t count, DataType dtype,
                           const Call& call) override;
  absl::Status DoAllToAllV(const void* send, absl::Span<const int64_t> send_counts, void* recv,
                           absl::Span<const int64_t> recv_counts, DataType dtype,
                           const Call& call) override;
  absl::Status DoBroadcast(void* buffer, int64_t count, DataType dtype, int root,
                           const Call& call) override;
  absl::Status DoPointToPoint(bool send, void* data, int64_t count, DataType dtype, int peer,
                              const Call& call) override;
  absl::Status DoBarrier(const Call& call) override;
  absl::StatusOr<std::shared_ptr<Communicator>> NewSubGroup(const std::vector<int>& positions,
                                                            std::vector<int> members,
                                                            int position) override;

 private:
  // The GroupCall of one call with message tags from `tag_base`;
  // `payload` (one of the call's buffers, or null) picks the host path in
  // a device world when it is host memory.
  GroupCall MakeCall(uint64_t tag_base, const Call& call, const void* payload = nullptr) const;
  uint64_t NextCollectiveTag();
  uint64_t NextPointToPointTag(int src, int dst, std::atomic<uint64_t>& counter) const;

  const std::shared_ptr<Transport> transport_;
  const uint64_t group_id_;
  std::atomic<uint64_t> next_seq_{0};
  // Per peer: how many Sends to it / Recvs from it this rank has issued.
  std::unique_ptr<std::atomic<uint64_t>[]> sends_to_;
  std::unique_ptr<std::atomic<uint64_t>[]> recvs_from_;
};

}  // namespace oneflow_sbp::comm

#endif  // COMM_RING_COMMUNICATOR_H_
