#include "tests/runtime/comm_scenarios.h"

#include <cstdio>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <thread>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/collectives.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::comm::testing {
namespace {

int Mod(int64_t i, int n) { return static_cast<int>(((i % n) + n) % n); }

int64_t Sum(absl::Span<const int64_t> v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// The value `source` (a rank, or a (sender, receiver) pair) holds at
// `index` under `salt`.
double Value(DataType dtype, int64_t source, int64_t index, int salt) {
  const int64_t h = source * 7 + index * 3 + salt * 5;
  if (dtype == DataType::kBool) return Mod(h, 3) == 0 ? 1 : 0;
  if (dtype == DataType::kUInt8) return Mod(h, 41);
  return Mod(h, 41) - 20;
}

double Combine(DataType dtype, ReduceOp op, double a, double b) {
  if (dtype == DataType::kBool) {
    return op == ReduceOp::kMin ? (a != 0 && b != 0) : (a != 0 || b != 0);
  }
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kMax:
      return std::max(a, b);
    case ReduceOp::kMin:
      return std::min(a, b);
  }
  return 0;
}

std::atomic<DeviceOps*> g_buffer_ops{nullptr};

// A typed buffer addressed by element index; values go in and out as
// doubles, which hold every test value exactly. With SetScenarioBufferOps
// the communicator sees device memory: Set writes a host mirror, data()
// uploads it (and hands the device copy out), Get downloads once after the
// device copy was handed out.
class Buffer {
 public:
  Buffer(DataType dtype, int64_t count)
      : dtype_(dtype),
        es_(ByteSizeOf(dtype)),
        bytes_(count * es_ + 1, char{0x5a}),
        ops_(g_buffer_ops.load()) {
    if (ops_ == nullptr) return;
    absl::StatusOr<void*> p = ops_->Allocate(static_cast<int64_t>(bytes_.size()));
    if (!p.ok()) {
      status_ = p.status();
      return;
    }
    device_ = static_cast<char*>(*p);
  }
  ~Buffer() {
    if (device_ != nullptr) ops_->Free(device_, static_cast<int64_t>(bytes_.size()));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // The buffer the communicator gets, at element `i`.
  void* data(int64_t i = 0) {
    if (device_ == nullptr) return at(i);
    if (host_dirty_) Move(CopyDirection::kHostToDevice);
    host_dirty_ = false;
    device_dirty_ = true;
    return device_ + i * es_;
  }

  void Set(int64_t i, double v) {
    Sync();
    host_dirty_ = true;
    char* p = at(i);
    switch (dtype_) {
      case DataType::kFloat16: Store(p, Eigen::half(static_cast<float>(v))); break;
      case DataType::kBFloat16: Store(p, Eigen::bfloat16(static_cast<float>(v))); break;
      case DataType::kFloat32: Store(p, static_cast<float>(v)); break;
      case DataType::kFloat64: Store(p, v); break;
      case DataType::kInt8: Store(p, static_cast<int8_t>(v)); break;
      case DataType::kInt32: Store(p, static_cast<int32_t>(v)); break;
      case DataType::kInt64: Store(p, static_cast<int64_t>(v)); break;
      case DataType::kUInt8: Store(p, static_cast<uint8_t>(v)); break;
      case DataType::kBool: Store(p, static_cast<uint8_t>(v != 0)); break;
    }
  }

  // NaN (which matches no expected value) if the device buffer failed.
  double Get(int64_t i) {
    Sync();
    if (!status_.ok()) return std::nan("");
    const char* p = at(i);
    switch (dtype_) {
      case DataType::kFloat16: return static_cast<float>(Load<Eigen::half>(p));
      case DataType::kBFloat16: return static_cast<float>(Load<Eigen::bfloat16>(p));
      case DataType::kFloat32: return Load<float>(p);
      case DataType::kFloat64: return Load<double>(p);
      case DataType::kInt8: return Load<int8_t>(p);
      case DataType::kInt32: return Load<int32_t>(p);
      case DataType::kInt64: return static_cast<double>(Load<int64_t>(p));
      case DataType::kUInt8: return Load<uint8_t>(p);
      case DataType::kBool: return Load<uint8_t>(p);
    }
    return std::nan("");
  }

 private:
  char* at(int64_t i) { return bytes_.data() + i * es_; }

  // Brings the host mirror up to date after the device copy was handed out.
  void Sync() {
    if (device_ != nullptr && device_dirty_) Move(CopyDirection::kDeviceToHost);
    device_dirty_ = false;
  }
  void Move(CopyDirection dir) {
    if (!status_.ok()) return;
    const int64_t n = static_cast<int64_t>(bytes_.size());
    status_ = dir == CopyDirection::kHostToDevice ? ops_->Copy(device_, bytes_.data(), n, dir)
                                                  : ops_->Copy(bytes_.data(), device_, n, dir);
    // Get reads a failed buffer as NaN; say why once, for GPU logs.
    if (!status_.ok()) std::fprintf(stderr, "scenario buffer: %s\n", status_.ToString().c_str());
  }

  template <typename T>
  static void Store(char* p, T v) { std::memcpy(p, &v, sizeof(T)); }
  template <typename T>
  static T Load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }

  DataType dtype_;
  int64_t es_;
  std::vector<char> bytes_;
  DeviceOps* const ops_;
  char* device_ = nullptr;
  // The host mirror holds values the device copy lacks, or the reverse.
  bool host_dirty_ = true;
  bool device_dirty_ = false;
  absl::Status status_;
};

// Options that record the call's traffic in `t`.
CallOptions Counted(Traffic* t, ReduceOp op = ReduceOp::kSum) {
  CallOptions options;
  options.reduce_op = op;
  options.traffic = t;
  return options;
}

std::string Where(const Communicator& comm, absl::string_view call, DataType dtype) {
  return absl::StrCat(call, " ", DataTypeName(dtype), " on ", comm.DebugName());
}

// Element `index` reduced with `op` over the values of sources 0 .. n-1.
double Reduced(DataType dtype, ReduceOp op, int n, int64_t index, int salt) {
  double r = Value(dtype, 0, index, salt);
  for (int j = 1; j < n; ++j) r = Combine(dtype, op, r, Value(dtype, j, index, salt));
  return r;
}

absl::Status CheckValue(const std::string& where, int64_t i, double got, double want) {
  if (got == want) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(where, ": element ", i, " is ", got, ", want ", want));
}

absl::Status CheckTraffic(const std::string& where, const Traffic& got, const Traffic& want) {
  if (got == want) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(where, ": moved ", got.ToString(), "; the formula says ", want.ToString()));
}

absl::Status Annotate(const std::string& where, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
}

std::vector<int64_t> Bytes(absl::Span<const int64_t> counts, DataType dtype) {
  std::vector<int64_t> b(counts.begin(), counts.end());
  for (int64_t& x : b) x *= ByteSizeOf(dtype);
  return b;
}

}  // namespace

void SetScenarioBufferOps(DeviceOps* ops) { g_buffer_ops.store(ops); }

Traffic ExpectedAllGather(absl::Span<const int64_t> c, int k) {
  const int n = static_cast<int>(c.size());
  const int64_t t = Sum(c);
  return {t - c[Mod(k + 1, n)], t - c[k]};
}

Traffic ExpectedReduceScatter(absl::Span<const int64_t> c, int k) {
  const int n = static_cast<int>(c.size());
  const int64_t t = Sum(c);
  return {t - c[k], t - c[Mod(k - 1, n)]};
}

Traffic ExpectedAllReduce(int64_t count, int element_bytes, int n, int k) {
  auto p = [&](int j) {
    return BalancedPart(IndexRange{0, count}, n, Mod(j, n)).size() * element_bytes;
  };
  const int64_t t = count * element_bytes;
  return {(t - p(k)) + (t - p(k + 1)), (t - p(k - 1)) + (t - p(k))};
}

Traffic ExpectedBroadcast(int64_t bytes, int n, int k, int root) {
  const int d = Mod(k - root, n);
  return {d == n - 1 ? 0 : bytes, d == 0 ? 0 : bytes};
}

Traffic ExpectedBarrier(int n) {
  int64_t rounds = 0;
  for (int dist = 1; dist < n; dist *= 2) ++rounds;
  return {rounds, rounds};
}

std::vector<int64_t> UnevenCounts(int n, int pattern) {
  std::vector<int64_t> c(n);
  for (int j = 0; j < n; ++j) {
    switch (pattern % 4) {
      case 0: c[j] = Mod(j * 3 + 1, 4); break;    // 1, 0, 3, 2, 1, 0: zeros inside
      case 1: c[j] = (j == 0) ? 0 : 2 * j + 5; break;  // a zero first
      case 2: c[j] = 0; break;                     // nothing at all
      default: c[j] = 17 + 11 * j; break;          // larger, all nonzero
    }
  }
  return c;
}

absl::Status CheckAllGatherV(Communicator& comm, absl::Span<const int64_t> counts, DataType dtype,
                             int salt, bool in_place) {
  const std::string where =
      Where(comm, in_place ? "AllGatherV(in place)" : "AllGatherV", dtype) +
      " counts {" + absl::StrJoin(counts, ",") + "}";
  const int k = comm.rank();
  const int64_t total = Sum(counts);
  const int64_t own_offset = Sum(counts.subspan(0, k));
  Buffer send(dtype, counts[k]);
  Buffer recv(dtype, total);
  for (int64_t i = 0; i < counts[k]; ++i) {
    (in_place ? recv : send).Set((in_place ? own_offset : 0) + i, Value(dtype, k, i, salt));
  }
  Traffic t;
  const CallOptions options = Counted(&t);
  const void* src = in_place ? recv.data(own_offset) : send.data();
  OFS_RETURN_IF_ERROR(Annotate(where, comm.AllGatherV(src, recv.data(), counts, dtype, options)));
  int64_t off = 0;
  for (int j = 0; j < comm.size(); ++j) {
    for (int64_t i = 0; i < counts[j]; ++i) {
      OFS_RETURN_IF_ERROR(CheckValue(where, off + i, recv.Get(off + i), Value(dtype, j, i, salt)));
    }
    off += counts[j];
  }
  return CheckTraffic(where, t, ExpectedAllGather(Bytes(counts, dtype), k));
}

absl::Status CheckReduceScatterV(Communicator& comm, absl::Span<const int64_t> counts,
                                 DataType dtype, ReduceOp op, int salt) {
  const std::string where = Where(comm, absl::StrCat("ReduceScatterV(", ReduceOpName(op), ")"),
                                  dtype) + " counts {" + absl::StrJoin(counts, ",") + "}";
  const int k = comm.rank();
  const int64_t total = Sum(counts);
  const int64_t own_offset = Sum(counts.subspan(0, k));
  Buffer send(dtype, total);
  Buffer recv(dtype, counts[k]);
  for (int64_t i = 0; i < total; ++i) send.Set(i, Value(dtype, k, i, salt));
  Traffic t;
  const CallOptions options = Counted(&t, op);
  OFS_RETURN_IF_ERROR(
      Annotate(where, comm.ReduceScatterV(send.data(), recv.data(), counts, dtype, options)));
  for (int64_t i = 0; i < counts[k]; ++i) {
    OFS_RETURN_IF_ERROR(
        CheckValue(where, i, recv.Get(i), Reduced(dtype, op, comm.size(), own_offset + i, salt)));
  }
  return CheckTraffic(where, t, ExpectedReduceScatter(Bytes(counts, dtype), k));
}

absl::Status CheckAllReduce(Communicator& comm, int64_t count, DataType dtype, ReduceOp op,
                            int salt, bool in_place) {
  const std::string where =
      Where(comm, absl::StrCat("AllReduce(", ReduceOpName(op), in_place ? ", in place" : "", ")"),
            dtype) + absl::StrCat(" count ", count);
  const int k = comm.rank();
  Buffer send(dtype, count);
  Buffer recv(dtype, count);
  Buffer& src = in_place ? recv : send;
  for (int64_t i = 0; i < count; ++i) src.Set(i, Value(dtype, k, i, salt));
  Traffic t;
  const CallOptions options = Counted(&t, op);
  OFS_RETURN_IF_ERROR(
      Annotate(where, comm.AllReduce(src.data(), recv.data(), count, dtype, options)));
  for (int64_t i = 0; i < count; ++i) {
    OFS_RETURN_IF_ERROR(CheckValue(where, i, recv.Get(i), Reduced(dtype, op, comm.size(), i, salt)));
  }
  return CheckTraffic(where, t, ExpectedAllReduce(count, ByteSizeOf(dtype), comm.size(), k));
}

absl::Status CheckAllToAllV(Communicator& comm, DataType dtype, int salt) {
  const std::string where = Where(comm, absl::StrCat("AllToAllV(salt ", salt, ")"), dtype);
  const int n = comm.size();
  const int k = comm.rank();
  // Elements from a to b; zero for some pairs, including some a == b.
  auto m = [&](int a, int b) -> int64_t { return Mod(a * 2 + b * 3 + salt, 4) * (1 + salt % 3); };
  std::vector<int64_t> send_counts(n);
  std::vector<int64_t> recv_counts(n);
  for (int j = 0; j < n; ++j) {
    send_counts[j] = m(k, j);
    recv_counts[j] = m(j, k);
  }
  Buffer send(dtype, Sum(send_counts));
  Buffer recv(dtype, Sum(recv_counts));
  int64_t off = 0;
  for (int j = 0; j < n; ++j) {
    for (int64_t i = 0; i < send_counts[j]; ++i) send.Set(off + i, Value(dtype, k * 16 + j, i, salt));
    off += send_counts[j];
  }
  Traffic t;
  const CallOptions options = Counted(&t);
  OFS_RETURN_IF_ERROR(Annotate(where, comm.AllToAllV(send.data(), send_counts, recv.data(),
                                                  recv_counts, dtype, options)));
  off = 0;
  for (int j = 0; j < n; ++j) {
    for (int64_t i = 0; i < recv_counts[j]; ++i) {
      OFS_RETURN_IF_ERROR(CheckValue(where, off + i, recv.Get(off + i), Value(dtype, j * 16 + k, i, salt)));
    }
    off += recv_counts[j];
  }
  const int64_t es = ByteSizeOf(dtype);
  const Traffic want{(Sum(send_counts) - send_counts[k]) * es,
                     (Sum(recv_counts) - recv_counts[k]) * es};
  return CheckTraffic(where, t, want);
}

absl::Status CheckBroadcast(Communicator& comm, int64_t count, DataType dtype, int root, int salt) {
  const std::string where =
      Where(comm, absl::StrCat("Broadcast(root ", root, ")"), dtype) + absl::StrCat(" count ", count);
  Buffer buf(dtype, count);
  if (comm.rank() == root) {
    for (int64_t i = 0; i < count; ++i) buf.Set(i, Value(dtype, root, i, salt));
  }
  Traffic t;
  const CallOptions options = Counted(&t);
  OFS_RETURN_IF_ERROR(Annotate(where, comm.Broadcast(buf.data(), count, dtype, root, options)));
  for (int64_t i = 0; i < count; ++i) {
    OFS_RETURN_IF_ERROR(CheckValue(where, i, buf.Get(i), Value(dtype, root, i, salt)));
  }
  return CheckTraffic(where, t,
                      ExpectedBroadcast(count * ByteSizeOf(dtype), comm.size(), comm.rank(), root));
}

absl::Status CheckSendRecv(Communicator& comm, DataType dtype, int salt) {
  const int n = comm.size();
  const int k = comm.rank();
  if (n == 1) return absl::OkStatus();
  const std::string where = Where(comm, "Send/Recv ring", dtype);
  const int next = Mod(k + 1, n);
  const int prev = Mod(k - 1, n);
  for (int round = 0; round < 2; ++round) {
    // Rank j sends (j + round) % 3 * 4 elements: zero for some.
    auto count = [&](int j) -> int64_t { return Mod(j + round, 3) * 4; };
    Buffer out(dtype, count(k));
    Buffer in(dtype, count(prev));
    for (int64_t i = 0; i < count(k); ++i) out.Set(i, Value(dtype, k, i, salt + round));
    Traffic sent;
    Traffic received;
    const CallOptions send_options = Counted(&sent);
    const CallOptions recv_options = Counted(&received);
    // Even ranks send first, odd ranks receive first, so the ring never
    // waits on itself (with n odd, the last even rank sends to rank 0,
    // which receives once its own send completed).
    auto do_send = [&] { return comm.Send(out.data(), count(k), dtype, next, send_options); };
    auto do_recv = [&] { return comm.Recv(in.data(), count(prev), dtype, prev, recv_options); };
    if (k % 2 == 0) {
      OFS_RETURN_IF_ERROR(Annotate(where, do_send()));
      OFS_RETURN_IF_ERROR(Annotate(where, do_recv()));
    } else {
      OFS_RETURN_IF_ERROR(Annotate(where, do_recv()));
      OFS_RETURN_IF_ERROR(Annotate(where, do_send()));
    }
    for (int64_t i = 0; i < count(prev); ++i) {
      OFS_RETURN_IF_ERROR(CheckValue(where, i, in.Get(i), Value(dtype, prev, i, salt + round)));
    }
    const int64_t es = ByteSizeOf(dtype);
    OFS_RETURN_IF_ERROR(CheckTraffic(where + " (send)", sent, {count(k) * es, 0}));
    OFS_RETURN_IF_ERROR(CheckTraffic(where + " (recv)", received, {0, count(prev) * es}));
  }
  return absl::OkStatus();
}

absl::Status CheckBarrier(Communicator& comm) {
  Traffic t;
  const CallOptions options = Counted(&t);
  const std::string where = absl::StrCat("Barrier on ", comm.DebugName());
  OFS_RETURN_IF_ERROR(Annotate(where, comm.Barrier(options)));
  return CheckTraffic(where, t, ExpectedBarrier(comm.size()));
}

absl::Status CheckEveryCollective(Communicator& comm) {
  const int n = comm.size();
  constexpr DataType kAll[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                               DataType::kFloat64, DataType::kInt8,     DataType::kInt32,
                               DataType::kInt64,   DataType::kUInt8,    DataType::kBool};
  constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin};
  for (int pattern = 0; pattern < 4; ++pattern) {
    const std::vector<int64_t> counts = UnevenCounts(n, pattern);
    for (DataType dtype : {DataType::kFloat32, DataType::kInt64, DataType::kFloat16}) {
      OFS_RETURN_IF_ERROR(CheckAllGatherV(comm, counts, dtype, pattern, /*in_place=*/false));
      OFS_RETURN_IF_ERROR(CheckAllGatherV(comm, counts, dtype, pattern + 1, /*in_place=*/true));
      OFS_RETURN_IF_ERROR(CheckReduceScatterV(comm, counts, dtype, ReduceOp::kSum, pattern));
    }
    OFS_RETURN_IF_ERROR(CheckReduceScatterV(comm, counts, DataType::kInt32, ReduceOp::kMax, pattern));
    OFS_RETURN_IF_ERROR(CheckReduceScatterV(comm, counts, DataType::kBFloat16, ReduceOp::kMin, pattern));
  }
  for (DataType dtype : kAll) {
    for (ReduceOp op : kOps) {
      // Counts around n: fewer elements than ranks, an exact multiple, and
      // a remainder, so balanced chunks of 0 and of uneven sizes occur.
      for (int64_t count : {int64_t{0}, int64_t{n - 1}, int64_t{3 * n}, int64_t{5 * n + 2}}) {
        OFS_RETURN_IF_ERROR(CheckAllReduce(comm, count, dtype, op, static_cast<int>(count),
                                       /*in_place=*/count % 2 == 0));
      }
    }
  }
  for (int salt = 0; salt < 3; ++salt) {
    OFS_RETURN_IF_ERROR(CheckAllToAllV(comm, salt == 1 ? DataType::kInt8 : DataType::kFloat32, salt));
  }
  for (int root = 0; root < n; ++root) {
    OFS_RETURN_IF_ERROR(CheckBroadcast(comm, 5 + root, DataType::kFloat64, root, root));
  }
  OFS_RETURN_IF_ERROR(CheckBroadcast(comm, 0, DataType::kFloat32, n - 1, 0));
  // 2.5 pipeline segments.
  OFS_RETURN_IF_ERROR(CheckBroadcast(comm, 5 * kBroadcastSegmentBytes / 8, DataType::kFloat32,
                                 n / 2, 7));
  OFS_RETURN_IF_ERROR(CheckSendRecv(comm, DataType::kInt32, 3));
  return CheckBarrier(comm);
}

absl::Status CheckMultiSegmentCollectives(Communicator& comm) {
  const int n = comm.size();
  // The Gloo transport cuts messages at
  // 1 MiB and reduces each piece of a ring step as it arrives. Chunks of
  // about 2.5 segments, not a whole number of them, in place and not, for
  // every reduce op and a 2-byte dtype (segment boundaries fall inside no
  // element), and an all-gather of as many bytes.
  const int64_t segment = int64_t{1} << 20;
  const int64_t f32_big = n * (5 * segment / 2 / 4) + 3;
  OFS_RETURN_IF_ERROR(CheckAllReduce(comm, f32_big, DataType::kFloat32, ReduceOp::kSum, 11,
                                     /*in_place=*/true));
  OFS_RETURN_IF_ERROR(CheckAllReduce(comm, f32_big, DataType::kFloat32, ReduceOp::kMax, 12,
                                     /*in_place=*/false));
  OFS_RETURN_IF_ERROR(CheckAllReduce(comm, 2 * f32_big + 1, DataType::kFloat16, ReduceOp::kMin,
                                     13, /*in_place=*/true));
  std::vector<int64_t> big_counts(n);
  for (int j = 0; j < n; ++j) big_counts[j] = (5 * segment / 2 / 4) * (j % 2 + 1) + j;
  OFS_RETURN_IF_ERROR(
      CheckReduceScatterV(comm, big_counts, DataType::kFloat32, ReduceOp::kSum, 14));
  OFS_RETURN_IF_ERROR(CheckAllGatherV(comm, big_counts, DataType::kFloat32, 15,
                                      /*in_place=*/true));
  return absl::OkStatus();
}

absl::Status CheckMeshSubGroups(Communicator& world, absl::Span<const int64_t> hierarchy,
                                bool concurrent) {
  std::vector<int64_t> ids(world.size());
  std::iota(ids.begin(), ids.end(), 0);
  absl::StatusOr<Placement> mesh = Placement::Make(DeviceType::kCpu, ids, hierarchy);
  if (!mesh.ok()) return mesh.status();
  const int axes = mesh->num_axes();

  std::vector<std::shared_ptr<Communicator>> groups;
  for (MeshAxisMask mask = 1; mask < (MeshAxisMask{1} << axes); ++mask) {
    absl::StatusOr<std::shared_ptr<Communicator>> g = world.ForMeshAxes(hierarchy, mask);
    if (!g.ok()) return g.status();
    absl::StatusOr<std::shared_ptr<Communicator>> again = world.ForMeshAxes(hierarchy, mask);
    if (!again.ok() || *again != *g) {
      return absl::InternalError(absl::StrCat("ForMeshAxes mask ", mask, " is not cached"));
    }
    const std::vector<int64_t> want = mesh->SubGroup(world.rank(), mask);
    const std::vector<int64_t> got((*g)->world_ranks().begin(), (*g)->world_ranks().end());
    if (got != want) {
      return absl::InternalError(absl::StrCat("ForMeshAxes mask ", mask, " on ",
                                              world.DebugName(), " gave {",
                                              absl::StrJoin(got, ","), "}, want {",
                                              absl::StrJoin(want, ","), "}"));
    }
    groups.push_back(*g);
  }

  // Data differ per subset (salt from the mask) and per group (the values
  // come from world ranks, and each group has different members).
  auto run = [&](size_t i) -> absl::Status {
    Communicator& g = *groups[i];
    const int salt = static_cast<int>(i + 1) * 10 + g.world_ranks()[0];
    OFS_RETURN_IF_ERROR(CheckAllReduce(g, 7 * g.size() + 3, DataType::kInt64, ReduceOp::kSum, salt,
                                   /*in_place=*/false));
    OFS_RETURN_IF_ERROR(CheckAllGatherV(g, UnevenCounts(g.size(), static_cast<int>(i)),
                                    DataType::kFloat32, salt, /*in_place=*/false));
    return CheckBarrier(g);
  };
  const Traffic world_before = world.total_traffic();
  std::vector<Traffic> group_before;
  for (const auto& g : groups) group_before.push_back(g->total_traffic());
  std::vector<absl::Status> results(groups.size());
  if (concurrent) {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < groups.size(); ++i) {
      threads.emplace_back([&, i] { results[i] = run(i); });
    }
    for (std::thread& t : threads) t.join();
  } else {
    for (size_t i = 0; i < groups.size(); ++i) results[i] = run(i);
  }
  // Sub-group traffic counts in the world's total (nothing else runs on
  // this world meanwhile).
  Traffic groups_grown;
  for (size_t i = 0; i < groups.size(); ++i) {
    OFS_RETURN_IF_ERROR(results[i]);
    const Traffic now = groups[i]->total_traffic();
    groups_grown += Traffic{now.bytes_sent - group_before[i].bytes_sent,
                            now.bytes_received - group_before[i].bytes_received};
  }
  const Traffic world_now = world.total_traffic();
  const Traffic world_grown{world_now.bytes_sent - world_before.bytes_sent,
                            world_now.bytes_received - world_before.bytes_received};
  if (world_grown != groups_grown) {
    return absl::InternalError(absl::StrCat("world traffic grew by ", world_grown.ToString(),
                                            "; the sub-groups moved ", groups_grown.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::comm::testing
