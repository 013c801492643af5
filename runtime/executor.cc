#include "runtime/executor.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "runtime/region_copy.h"
#include "runtime/step_lowering.h"

namespace oneflow_sbp::boxing {
namespace {

LocalDims DimsOf(const TensorSlice& s) {
  LocalDims d;
  for (const IndexRange& r : s.ranges()) d.push_back(r.size());
  return d;
}

// If `regions` (empty ones skipped), in order, are consecutive row-major
// runs of a shard holding `box`, the element offset of the first: then a
// collective can read or write them in place, with no packing.
std::optional<int64_t> ConsecutiveRuns(const TensorSlice& box,
                                       const std::vector<const TensorSlice*>& regions) {
  const LocalDims strides = RowMajorStrides(DimsOf(box));
  std::optional<int64_t> start;
  int64_t expected = 0;
  for (const TensorSlice* region : regions) {
    const TensorSlice& c = *region;
    if (c.elem_cnt() == 0) continue;
    // Contiguous iff dims after the first partial one are full and dims
    // before it have extent 1.
    int first_partial = -1;
    int64_t offset = 0;
    for (int d = 0; d < box.rank(); ++d) {
      const IndexRange r = c.range(d);
      offset += (r.begin - box.range(d).begin) * strides[d];
      const bool full = r.size() == box.range(d).size();
      if (first_partial < 0 && !full) {
        first_partial = d;
      } else if (first_partial >= 0 && !full) {
        return std::nullopt;
      }
    }
    for (int d = 0; d < first_partial; ++d) {
      if (c.range(d).size() != 1) return std::nullopt;
    }
    if (!start) start = expected = offset;
    if (offset != expected) return std::nullopt;
    expected += c.elem_cnt();
  }
  return start.value_or(0);
}

// True if `chunks`, in order, tile `box` as consecutive row-major runs.
bool Concatenates(const TensorSlice& box, const std::vector<TensorSlice>& chunks) {
  std::vector<const TensorSlice*> regions;
  int64_t total = 0;
  for (const TensorSlice& c : chunks) {
    regions.push_back(&c);
    total += c.elem_cnt();
  }
  const std::optional<int64_t> start = ConsecutiveRuns(box, regions);
  return start && *start == 0 && total == box.elem_cnt();
}

std::vector<int64_t> Counts(const std::vector<TensorSlice>& regions) {
  std::vector<int64_t> counts;
  for (const TensorSlice& r : regions) counts.push_back(r.elem_cnt());
  return counts;
}

// Buffers live on the input's device, so boxing device shards keeps every
// byte on the device (the communicator must then take device pointers).
absl::StatusOr<LocalTensor> Alloc(DataType dtype, const TensorSlice& slice, bool zero,
                                  DeviceType device) {
  return zero ? LocalTensor::Zeros(dtype, DimsOf(slice), device)
              : LocalTensor::Empty(dtype, DimsOf(slice), device);
}

// Packs `regions` of `shard` one after another into a fresh flat buffer.
absl::StatusOr<LocalTensor> PackAll(const LocalTensor& shard, const TensorSlice& slice,
                                    const std::vector<const TensorSlice*>& regions) {
  int64_t total = 0;
  for (const TensorSlice* r : regions) total += r->elem_cnt();
  absl::StatusOr<LocalTensor> buf = LocalTensor::Empty(shard.dtype(), {total}, shard.device());
  if (!buf.ok()) return buf;
  char* at = static_cast<char*>(buf->raw_data());
  const int64_t es = ByteSizeOf(shard.dtype());
  for (const TensorSlice* r : regions) {
    absl::Status s = PackRegion(shard, slice, *r, at);
    if (!s.ok()) return s;
    at += r->elem_cnt() * es;
  }
  return buf;
}

absl::Status UnpackAll(const LocalTensor& buf, const std::vector<const TensorSlice*>& regions,
                       LocalTensor* shard, const TensorSlice& slice, RegionOp op) {
  const char* at = static_cast<const char*>(buf.raw_data());
  const int64_t es = ByteSizeOf(buf.dtype());
  for (const TensorSlice* r : regions) {
    absl::Status s = UnpackRegion(at, *r, shard, slice, op);
    if (!s.ok()) return s;
    at += r->elem_cnt() * es;
  }
  return absl::OkStatus();
}

struct StepRun {
  const RankStep& rs;
  const LocalTensor& in;
  comm::Communicator& group;
  DataType dtype;
  comm::CallOptions options;
};

absl::StatusOr<LocalTensor> AllGather(const StepRun& r) {
  absl::StatusOr<LocalTensor> out = Alloc(r.dtype, r.rs.out, false, r.in.device());
  if (!out.ok()) return out;
  const std::vector<int64_t> counts = Counts(r.rs.chunks);
  const TensorSlice& mine = r.rs.chunks[r.rs.position];
  if (Concatenates(r.rs.out, r.rs.chunks)) {
    int64_t before = 0;
    for (int j = 0; j < r.rs.position; ++j) before += counts[j];
    char* place = static_cast<char*>(out->raw_data()) + before * ByteSizeOf(r.dtype);
    absl::Status s = PackRegion(r.in, r.rs.in, mine, place);
    if (s.ok()) s = r.group.AllGatherV(place, out->raw_data(), counts, r.dtype, r.options);
    if (!s.ok()) return s;
    return out;
  }
  absl::StatusOr<LocalTensor> gathered = LocalTensor::Empty(r.dtype, {r.rs.out.elem_cnt()}, r.in.device());
  if (!gathered.ok()) return gathered;
  absl::StatusOr<LocalTensor> sent = PackAll(r.in, r.rs.in, {&mine});
  if (!sent.ok()) return sent.status();
  absl::Status s =
      r.group.AllGatherV(sent->raw_data(), gathered->raw_data(), counts, r.dtype, r.options);
  std::vector<const TensorSlice*> regions;
  for (const TensorSlice& c : r.rs.chunks) regions.push_back(&c);
  if (s.ok()) s = UnpackAll(*gathered, regions, &*out, r.rs.out, RegionOp::kCopy);
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<LocalTensor> ReduceScatter(const StepRun& r) {
  absl::StatusOr<LocalTensor> out = Alloc(r.dtype, r.rs.out, false, r.in.device());
  if (!out.ok()) return out;
  const std::vector<int64_t> counts = Counts(r.rs.chunks);
  LocalTensor send = r.in;
  if (!Concatenates(r.rs.in, r.rs.chunks)) {
    std::vector<const TensorSlice*> regions;
    for (const TensorSlice& c : r.rs.chunks) regions.push_back(&c);
    absl::StatusOr<LocalTensor> packed = PackAll(r.in, r.rs.in, regions);
    if (!packed.ok()) return packed;
    send = *std::move(packed);
  }
  absl::Status s =
      r.group.ReduceScatterV(send.raw_data(), out->raw_data(), counts, r.dtype, r.options);
  if (!s.ok()) return s;
  return out;
}

// All-to-all and p2p: pack what goes to each member, exchange, unpack.
// Where the regions sent (or received) are consecutive runs of the shard,
// the exchange reads (or writes) the shard in place instead.
absl::StatusOr<LocalTensor> Exchange(const StepRun& r) {
  const RankStep& rs = r.rs;
  const int64_t es = ByteSizeOf(r.dtype);
  std::vector<const TensorSlice*> sends, recvs;
  std::vector<int64_t> send_counts, recv_counts;
  int64_t total_recv = 0;
  for (size_t j = 0; j < rs.group.size(); ++j) {
    int64_t sc = 0, rc = 0;
    for (const TensorSlice& t : rs.send[j]) sends.push_back(&t), sc += t.elem_cnt();
    for (const TensorSlice& t : rs.recv[j]) recvs.push_back(&t), rc += t.elem_cnt();
    send_counts.push_back(sc);
    recv_counts.push_back(rc);
    total_recv += rc;
  }
  absl::StatusOr<LocalTensor> empty = LocalTensor::Empty(r.dtype, {0}, r.in.device());
  if (!empty.ok()) return empty.status();
  LocalTensor packed = *std::move(empty);
  const void* send = packed.raw_data();
  if (rs.holds_input && !sends.empty()) {
    if (std::optional<int64_t> at = ConsecutiveRuns(rs.in, sends)) {
      send = static_cast<const char*>(r.in.raw_data()) + *at * es;
    } else {
      absl::StatusOr<LocalTensor> p = PackAll(r.in, rs.in, sends);
      if (!p.ok()) return p;
      packed = *std::move(p);
      send = packed.raw_data();
    }
  }
  LocalTensor out;
  std::optional<int64_t> direct;
  if (rs.holds_output) {
    // Outputs start from zeros where pieces do not cover them (P
    // destinations hold zeros outside what they own) or sums accumulate;
    // otherwise every element is written once and zeroing would be wasted.
    int64_t covered = total_recv;
    for (const TensorSlice& region : rs.local) covered += region.elem_cnt();
    absl::StatusOr<LocalTensor> o =
        Alloc(r.dtype, rs.out, rs.sum || covered != rs.out.elem_cnt(), r.in.device());
    if (!o.ok()) return o;
    out = *std::move(o);
    if (!rs.sum) direct = ConsecutiveRuns(rs.out, recvs);
  }
  LocalTensor received;
  void* recv;
  if (direct) {
    recv = static_cast<char*>(out.raw_data()) + *direct * es;
  } else {
    absl::StatusOr<LocalTensor> buf = LocalTensor::Empty(r.dtype, {total_recv}, r.in.device());
    if (!buf.ok()) return buf;
    received = *std::move(buf);
    recv = received.raw_data();
  }
  absl::Status s =
      r.group.AllToAllV(send, send_counts, recv, recv_counts, r.dtype, r.options);
  if (!s.ok()) return s;
  if (!rs.holds_output) return LocalTensor();
  const RegionOp op = rs.sum ? RegionOp::kAdd : RegionOp::kCopy;
  for (const TensorSlice& region : rs.local) {
    s = CopyRegion(r.in, rs.in, region, &out, rs.out, op);
    if (!s.ok()) return s;
  }
  if (!direct) {
    s = UnpackAll(received, recvs, &out, rs.out, op);
    if (!s.ok()) return s;
  }
  return out;
}

absl::StatusOr<LocalTensor> LocalStep(const StepRun& r) {
  const RankStep& rs = r.rs;
  switch (rs.kind) {
    case StepKind::kLocalSlice: {
      absl::StatusOr<LocalTensor> out = Alloc(r.dtype, rs.out, false, r.in.device());
      if (!out.ok()) return out;
      absl::Status s = CopyRegion(r.in, rs.in, rs.out, &*out, rs.out, RegionOp::kCopy);
      if (!s.ok()) return s;
      return out;
    }
    case StepKind::kLocalPartial:
      if (rs.keeps_value) return r.in;
      return Alloc(r.dtype, rs.out, true, r.in.device());
    default: {  // kLocalScatter: the shard placed into zeros
      absl::StatusOr<LocalTensor> out = Alloc(r.dtype, rs.out, true, r.in.device());
      if (!out.ok()) return out;
      absl::Status s = CopyRegion(r.in, rs.in, rs.in, &*out, rs.out, RegionOp::kCopy);
      if (!s.ok()) return s;
      return out;
    }
  }
}

absl::StatusOr<LocalTensor> RunStep(const StepRun& r) {
  switch (r.rs.kind) {
    case StepKind::kAllGather: return AllGather(r);
    case StepKind::kReduceScatter: return ReduceScatter(r);
    case StepKind::kAllReduce: {
      absl::StatusOr<LocalTensor> out = Alloc(r.dtype, r.rs.out, false, r.in.device());
      if (!out.ok()) return out;
      absl::Status s = r.group.AllReduce(r.in.raw_data(), out->raw_data(), r.in.elem_cnt(),
                                         r.dtype, r.options);
      if (!s.ok()) return s;
      return out;
    }
    case StepKind::kAllToAll:
    case StepKind::kPointToPoint:
      return Exchange(r);
    default:
      return LocalStep(r);
  }
}

absl::Status CheckShard(const BoxingPlan& plan, const LocalTensor& local, int64_t device_rank) {
  int64_t id = -1;
  for (int64_t p = 0; p < plan.src_placement.parallel_num(); ++p) {
    if (plan.src_placement.RankOf(p) == device_rank) id = p;
  }
  if (id < 0) return absl::OkStatus();
  const TensorSlice mine = SliceAt(plan.shape, plan.src, plan.src_placement.hierarchy(),
                                   plan.src_placement.CoordinateOf(id));
  if (!local.defined() || local.dtype() != plan.dtype || local.dims() != DimsOf(mine)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "boxing: rank ", device_rank, " holds ", mine.ToString(), " of ",
        DataTypeName(plan.dtype), plan.shape.ToString(), " as ", plan.src.ToString(),
        ", so its shard must be ", DataTypeName(plan.dtype), DimsToString(DimsOf(mine)),
        "; got ", local.defined() ? local.ToString(0) : std::string("undefined")));
  }
  return absl::OkStatus();
}

comm::ReduceOp ReduceOpOf(PartialKind kind) {
  return kind == PartialKind::kMax   ? comm::ReduceOp::kMax
         : kind == PartialKind::kMin ? comm::ReduceOp::kMin
                                     : comm::ReduceOp::kSum;
}

}  // namespace

comm::Traffic PlannedTraffic(const BoxingPlan& plan, int step, int64_t device_rank) {
  const auto it = std::find(plan.ranks.begin(), plan.ranks.end(), device_rank);
  const BoxingStep& s = plan.steps[step];
  if (it == plan.ranks.end() || s.bytes_sent.empty()) return {};
  const size_t p = static_cast<size_t>(it - plan.ranks.begin());
  return comm::Traffic{s.bytes_sent[p], s.bytes_received[p]};
}

absl::StatusOr<LocalTensor> ExecutePlan(const BoxingPlan& plan, const LocalTensor& local,
                                        comm::Communicator& world, ExecutionReport* report,
                                        const comm::CallOptions& options) {
  const int64_t me = world.rank();
  if (std::find(plan.ranks.begin(), plan.ranks.end(), me) == plan.ranks.end()) {
    return LocalTensor();
  }
  absl::Status s = CheckShard(plan, local, me);
  if (!s.ok()) return s;
  const absl::Time start = absl::Now();
  LocalTensor cur = local;
  for (int k = 0; k < static_cast<int>(plan.steps.size()); ++k) {
    const absl::Time step_start = absl::Now();
    absl::StatusOr<RankStep> rs = LowerStep(plan, k, me);
    if (!rs.ok()) return rs.status();
    StepReport step_report;
    step_report.kind = rs->kind;
    if (rs->active) {
      std::vector<int> members(rs->group.begin(), rs->group.end());
      absl::StatusOr<std::shared_ptr<comm::Communicator>> group = world.SubGroup(members);
      if (!group.ok()) return group.status();
      comm::CallOptions call = options;
      call.traffic = &step_report.traffic;
      // Reductions combine partials by their kind: P sums, P(max) maxes.
      const BoxingStep& step = plan.steps[k];
      if (step.from.is_partial()) call.reduce_op = ReduceOpOf(step.from.partial_kind());
      absl::StatusOr<LocalTensor> next = RunStep(StepRun{*rs, cur, **group, plan.dtype, call});
      if (!next.ok()) return next.status();
      cur = *std::move(next);
    }
    step_report.seconds = absl::ToDoubleSeconds(absl::Now() - step_start);
    if (report != nullptr) report->steps.push_back(step_report);
  }
  if (report != nullptr) report->seconds = absl::ToDoubleSeconds(absl::Now() - start);
  bool in_dst = false;
  for (int64_t p = 0; p < plan.dst_placement.parallel_num(); ++p) {
    in_dst = in_dst || plan.dst_placement.RankOf(p) == me;
  }
  if (!in_dst) return LocalTensor();
  return cur;
}

}  // namespace oneflow_sbp::boxing
