#include "comm/collectives.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::comm {
namespace {

int Mod(int64_t i, int n) { return static_cast<int>(((i % n) + n) % n); }

// Byte offset of every chunk, plus the total at the end.
std::vector<int64_t> Offsets(absl::Span<const int64_t> sizes) {
  std::vector<int64_t> off(sizes.size() + 1, 0);
  for (size_t j = 0; j < sizes.size(); ++j) off[j + 1] = off[j] + sizes[j];
  return off;
}

// A message to or from a member (group position). `step` numbers the
// messages of one call between one pair of ranks.
struct Msg {
  int member;
  void* data;
  int64_t bytes;
  uint64_t step;
  Memory memory = Memory::kWorld;
};

// A message's memory: its own if it names host memory (barrier tokens),
// else the call's payload memory.
Memory MemoryOf(const GroupCall& call, const Msg& m) {
  return m.memory == Memory::kHost ? Memory::kHost : call.payload;
}

// Posts the sends and receives together and waits for all; zero-byte
// messages are skipped. Bytes are counted only once everything completed,
// so the counters never include a message that did not arrive. `extra`
// may append further receives (fused ones) and returns their bytes.
template <typename Extra>
absl::Status PostWith(const GroupCall& call, absl::Span<const Msg> sends,
                      absl::Span<const Msg> recvs, Extra extra) {
  absl::InlinedVector<P2POp, 4> ops;
  Traffic moved;
  auto tag = [&](const Msg& m) { return MixTag(MixTag(call.tag_base, m.step), m.bytes); };
  for (const Msg& m : sends) {
    if (m.bytes == 0) continue;
    ops.push_back(P2POp::Send(call.members[m.member], tag(m), m.data, m.bytes, MemoryOf(call, m)));
    moved.bytes_sent += m.bytes;
  }
  for (const Msg& m : recvs) {
    if (m.bytes == 0) continue;
    ops.push_back(P2POp::Recv(call.members[m.member], tag(m), m.data, m.bytes, MemoryOf(call, m)));
    moved.bytes_received += m.bytes;
  }
  moved.bytes_received += extra(ops);
  if (ops.empty()) return absl::OkStatus();
  absl::Status status = call.transport->Exchange(ops, call.deadline);
  if (status.ok()) *call.traffic += moved;
  return status;
}

absl::Status Post(const GroupCall& call, absl::Span<const Msg> sends, absl::Span<const Msg> recvs) {
  return PostWith(call, sends, recvs, [](absl::InlinedVector<P2POp, 4>&) { return int64_t{0}; });
}

// One send and one receive of the same step (a ring or pairwise step).
absl::Status SendRecvStep(const GroupCall& call, uint64_t step, int to, const void* send_data,
                          int64_t send_bytes, int from, void* recv_data, int64_t recv_bytes,
                          Memory memory = Memory::kWorld) {
  const Msg send{to, const_cast<void*>(send_data), send_bytes, step, memory};
  const Msg recv{from, recv_data, recv_bytes, step, memory};
  return Post(call, {&send, 1}, {&recv, 1});
}

// Ring all-gather over chunks already in place in `buf`: at step s member
// k forwards chunk k - s to k + 1 and receives chunk k - s - 1 from k - 1.
// `first_step` keeps these tags apart from an earlier phase of the call.
absl::Status RingAllGatherInPlace(const GroupCall& call, char* buf,
                                  absl::Span<const int64_t> sizes, uint64_t first_step) {
  const int n = call.size();
  const int k = call.me;
  const std::vector<int64_t> off = Offsets(sizes);
  for (int s = 0; s + 1 < n; ++s) {
    const int out = Mod(k - s, n);
    const int in = Mod(k - s - 1, n);
    absl::Status status = SendRecvStep(call, first_step + s, Mod(k + 1, n), buf + off[out],
                                       sizes[out], Mod(k - 1, n), buf + off[in], sizes[in]);
    OFS_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// Ring reduce-scatter: at step s member k sends its partial of chunk
// k - s - 1 to k + 1 and receives the partial of chunk k - s - 2 from
// k - 1, combining it with its own addend: partial = op(received, own).
// After n - 1 steps the partial made last is chunk k with every addend.
//
// Where a partial goes (its "target"): into `work` + the chunk's offset
// when the caller gives a full-size work buffer (the all-reduce's receive
// buffer, which the all-gather overwrites anyway), else into two staging
// buffers that alternate (one is being sent while the other receives); the
// last step's target is `out` whenever that is safe. How it is made:
//   - fused (a host transport that FusesReduce, the in-process world): the
//     transport writes op(peer's partial, addend) straight into the target
//     from the peer's buffer, so a step reads two streams and writes one;
//   - host, not fused (Gloo): receive into the target (or a staging buffer
//     when the target is the addend itself, as in an in-place all-reduce),
//     then ReduceTo(received, addend, target) in one pass;
//   - device: receive into a staging buffer and reduce the addend into it
//     (BufferOps::Reduce), as before.
// Every path computes op(received, own) element by element in the same
// order, so the results are the same bits whichever runs.
absl::Status RingReduceScatterImpl(const GroupCall& call, const char* send,
                                   absl::Span<const int64_t> counts, DataType dtype, ReduceOp op,
                                   char* out, uint64_t first_step, char* work = nullptr) {
  const int n = call.size();
  const int k = call.me;
  const int64_t es = ByteSizeOf(dtype);
  std::vector<int64_t> sizes(counts.size());
  for (size_t j = 0; j < counts.size(); ++j) sizes[j] = counts[j] * es;
  const std::vector<int64_t> off = Offsets(sizes);
  const BufferOps& mem = call.buffers;
  if (n == 1) {
    if (sizes[0] <= 0 || out == send) return absl::OkStatus();
    if (mem.host()) {
      std::memmove(out, send, sizes[0]);
      return absl::OkStatus();
    }
    // Device copies may not overlap: go through a staging buffer.
    OFS_ASSIGN_OR_RETURN(BufferOps::Staging tmp, mem.Allocate(sizes[0]));
    absl::Status status = mem.Copy(tmp.data(), send, sizes[0]);
    if (status.ok()) status = mem.Copy(out, tmp.data(), sizes[0]);
    return status;
  }
  const bool host = mem.host();
  const bool fused = host && call.transport->FusesReduce();
  if (!host) work = nullptr;
  // The last step may write straight into `out` unless `out` overlaps
  // addends that are still read, other than its own chunk's at the same
  // place (combined element by element, so in place is fine).
  const char* own = send + off[k];
  const bool direct =
      (host && out == own) || !Overlaps(out, sizes[k], send, off[n]) ||
      (work != nullptr && out == work + off[k]);
  // Without a work buffer, a host `out` apart from `send` also holds the
  // partials of the steps an even number of steps before the last (those
  // that fit), so partials alternate between `out` and one staging buffer
  // and the last lands in `out`. Two alternating staging buffers otherwise.
  const bool out_free = host && work == nullptr && !Overlaps(out, sizes[k], send, off[n]);
  auto in_out = [&](int s) {
    return out_free && (n - 2 - s) % 2 == 0 && sizes[Mod(k - s - 2, n)] <= sizes[k];
  };
  int staged_steps = 0;
  bool consecutive = false;  // two staged steps in a row need two buffers
  for (int s = 0; s + 1 < n; ++s) {
    const bool staged = work == nullptr ? !in_out(s) && !(s + 2 == n && direct)
                                        : !fused && work == send;  // landing for in place
    if (staged && s > 0 && staged_steps > 0 && work == nullptr && !in_out(s - 1)) {
      consecutive = true;
    }
    staged_steps += staged ? 1 : 0;
  }
  const int64_t max_chunk = *std::max_element(sizes.begin(), sizes.end());
  BufferOps::Staging staging;
  char* bufs[2] = {nullptr, nullptr};
  if (staged_steps > 0) {
    const int slots = consecutive || work != nullptr ? 2 : 1;
    OFS_ASSIGN_OR_RETURN(BufferOps::Staging st, mem.Allocate(slots * max_chunk));
    staging = std::move(st);
    bufs[0] = staging.data();
    bufs[1] = staging.data() + (slots - 1) * max_chunk;
  }
  const char* partial = nullptr;  // what this step forwards (null: own addend)
  for (int s = 0; s + 1 < n; ++s) {
    const int fwd = Mod(k - s - 1, n);
    const int in = Mod(k - s - 2, n);
    const bool last = s + 2 == n;
    const char* addend = send + off[in];
    char* target = (last && direct) || in_out(s) ? out
                   : work != nullptr              ? work + off[in]
                                                  : bufs[s % 2];
    const char* src = partial != nullptr ? partial : send + off[fwd];
    const Msg send_msg{Mod(k + 1, n), const_cast<char*>(src), sizes[fwd], first_step + s};
    absl::Status status;
    if (fused) {
      const uint64_t tag = MixTag(MixTag(call.tag_base, first_step + s), sizes[in]);
      status = PostWith(call, {&send_msg, 1}, {}, [&](absl::InlinedVector<P2POp, 4>& ops) {
        if (sizes[in] == 0) return int64_t{0};
        ops.push_back(P2POp::RecvReduce(call.members[Mod(k - 1, n)], tag, target, sizes[in],
                                        addend, op, dtype));
        return sizes[in];
      });
    } else {
      // A receive must not land on the addend it is combined with.
      char* landing = host && !Overlaps(target, sizes[in], addend, sizes[in]) ? target
                      : host                                                  ? bufs[s % 2]
                                                                              : target;
      const Msg recv_msg{Mod(k - 1, n), landing, sizes[in], first_step + s};
      status = Post(call, {&send_msg, 1}, {&recv_msg, 1});
      if (status.ok()) {
        status = host ? mem.ReduceTo(op, dtype, landing, addend, target, counts[in])
                      : mem.Reduce(op, dtype, addend, target, counts[in]);
      }
    }
    OFS_RETURN_IF_ERROR(status);
    partial = target;
  }
  if (partial != out) return mem.Copy(out, partial, sizes[k]);
  return absl::OkStatus();
}

}  // namespace

uint64_t MixTag(uint64_t a, uint64_t b) {
  // splitmix64's finaliser over a combination that is not symmetric in a
  // and b, so (a, b) and (b, a) give different tags.
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

bool Overlaps(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  if (a_bytes <= 0 || b_bytes <= 0) return false;
  // std::less gives a total order on pointers into different objects.
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  std::less<const char*> lt;
  return lt(pa, pb + b_bytes) && lt(pb, pa + a_bytes);
}

absl::Status RingAllGatherV(const GroupCall& call, const void* send, void* recv,
                            absl::Span<const int64_t> chunk_bytes) {
  char* out = static_cast<char*>(recv);
  const std::vector<int64_t> off = Offsets(chunk_bytes);
  const int64_t own = chunk_bytes[call.me];
  // send is recv's own place or does not overlap it (Communicator checks).
  absl::Status status = call.buffers.Copy(out + off[call.me], send, own);
  OFS_RETURN_IF_ERROR(status);
  return RingAllGatherInPlace(call, out, chunk_bytes, /*first_step=*/0);
}

absl::Status RingReduceScatter(const GroupCall& call, const void* send,
                               absl::Span<const int64_t> chunk_counts, DataType dtype,
                               ReduceOp op, void* out) {
  return RingReduceScatterImpl(call, static_cast<const char*>(send), chunk_counts, dtype, op,
                               static_cast<char*>(out), /*first_step=*/0);
}

absl::Status RingAllReduce(const GroupCall& call, const void* send, void* recv, int64_t count,
                           DataType dtype, ReduceOp op) {
  const int n = call.size();
  const int64_t es = ByteSizeOf(dtype);
  std::vector<int64_t> counts(n);
  std::vector<int64_t> sizes(n);
  for (int j = 0; j < n; ++j) {
    counts[j] = BalancedPart(IndexRange{0, count}, n, j).size();
    sizes[j] = counts[j] * es;
  }
  const std::vector<int64_t> off = Offsets(sizes);
  char* out = static_cast<char*>(recv);
  // The partials go straight into `recv` (chunk j's partial at chunk j's
  // place): the all-gather overwrites those places anyway, so no staging.
  absl::Status status = RingReduceScatterImpl(call, static_cast<const char*>(send), counts, dtype,
                                              op, out + off[call.me], /*first_step=*/0, out);
  OFS_RETURN_IF_ERROR(status);
  // The reduce-scatter used steps 0 .. n-2.
  return RingAllGatherInPlace(call, out, sizes, /*first_step=*/n - 1);
}

absl::Status PairwiseAllToAllV(const GroupCall& call, const void* send,
                               absl::Span<const int64_t> send_bytes, void* recv,
                               absl::Span<const int64_t> recv_bytes) {
  const int n = call.size();
  const int k = call.me;
  const char* in = static_cast<const char*>(send);
  char* out = static_cast<char*>(recv);
  const std::vector<int64_t> soff = Offsets(send_bytes);
  const std::vector<int64_t> roff = Offsets(recv_bytes);
  absl::Status copied = call.buffers.Copy(out + roff[k], in + soff[k], send_bytes[k]);
  OFS_RETURN_IF_ERROR(copied);
  // Message s goes to k + s and comes from k - s (tagged s on both sides),
  // and all of them are posted at once: every link carries its message at
  // the same time, where n - 1 steps in lockstep would each wait for the
  // slowest pair.
  absl::InlinedVector<Msg, 8> sends, recvs;
  for (int s = 1; s < n; ++s) {
    const int to = Mod(k + s, n);
    const int from = Mod(k - s, n);
    sends.push_back(Msg{to, const_cast<char*>(in + soff[to]), send_bytes[to],
                        static_cast<uint64_t>(s)});
    recvs.push_back(Msg{from, out + roff[from], recv_bytes[from], static_cast<uint64_t>(s)});
  }
  return Post(call, sends, recvs);
}

absl::Status ChainBroadcast(const GroupCall& call, void* buffer, int64_t bytes, int root) {
  const int n = call.size();
  if (n == 1 || bytes == 0) return absl::OkStatus();
  char* buf = static_cast<char*>(buffer);
  const int d = Mod(call.me - root, n);  // distance from the root along the ring
  const int64_t segments = (bytes + kBroadcastSegmentBytes - 1) / kBroadcastSegmentBytes;
  // Segment i travels every link with step i.
  auto segment = [&](int member, int64_t i) {
    const int64_t begin = i * kBroadcastSegmentBytes;
    return Msg{member, buf + begin, std::min(kBroadcastSegmentBytes, bytes - begin),
               static_cast<uint64_t>(i)};
  };
  // Iteration t receives segment t and forwards segment t - 1 (the root,
  // which has every segment, sends segment t), so a middle rank's receive
  // overlaps its send.
  for (int64_t t = 0; t <= segments; ++t) {
    absl::InlinedVector<Msg, 1> sends;
    absl::InlinedVector<Msg, 1> recvs;
    const int64_t fwd = d == 0 ? t : t - 1;
    if (d != n - 1 && fwd >= 0 && fwd < segments) sends.push_back(segment(Mod(call.me + 1, n), fwd));
    if (d != 0 && t < segments) recvs.push_back(segment(Mod(call.me - 1, n), t));
    absl::Status status = Post(call, sends, recvs);
    OFS_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

absl::Status DisseminationBarrier(const GroupCall& call) {
  const int n = call.size();
  // Tokens are host memory in every world (nothing to stage on a device).
  char token_out = 1;
  char token_in = 0;
  uint64_t round = 0;
  for (int dist = 1; dist < n; dist *= 2, ++round) {
    absl::Status status = SendRecvStep(call, round, Mod(call.me + dist, n), &token_out, 1,
                                       Mod(call.me - dist, n), &token_in, 1, Memory::kHost);
    OFS_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

absl::Status PointToPoint(const GroupCall& call, P2POp::Kind kind, int peer, void* data,
                          int64_t bytes) {
  const Msg m{peer, data, bytes, 0};
  if (kind == P2POp::Kind::kSend) return Post(call, {&m, 1}, {});
  return Post(call, {}, {&m, 1});
}

}  // namespace oneflow_sbp::comm
