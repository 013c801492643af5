#include "runtime/executor.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "oneflow_sbp/values/status_macros.h"
#include "runtime/region_copy.h"
#include "runtime/step_lowering.h"

namespace oneflow_sbp::runtime {
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
  OFS_RETURN_IF_ERROR(buf.status());
  char* at = static_cast<char*>(buf->raw_data());
  const int64_t es = ByteSizeOf(shard.dtype());
  for (const TensorSlice* r : regions) {
    absl::Status s = PackRegion(shard, slice, *r, at);
    OFS_RETURN_IF_ERROR(s);
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
    OFS_RETURN_IF_ERROR(s);
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
  // The logical shape (every member derives the same exchange bands from it).
  const Shape& shape;
};

// Above kBandBytes, an all-gather that cannot write its output in place and
// every reduce-scatter go band by band: each chunk is cut into the same
// number of balanced parts along dim 0, and part b of every chunk makes
// band b, one collective each. The staging buffers (packed input, gathered
// output, the ring's own) then hold one band instead of the whole tensor,
// which kept `sbp boxing --execute` above 4x the tensor (P -> S(1), S(1) ->
// B); every rank moves the same bytes in all, as the ring's traffic is a
// sum over chunk sizes.
constexpr int64_t kBandBytes = int64_t{4} << 20;

int64_t BandCount(const std::vector<TensorSlice>& chunks, int64_t es) {
  int64_t bytes = 0;
  int64_t rows = -1;
  for (const TensorSlice& c : chunks) {
    bytes += c.elem_cnt() * es;
    if (c.rank() > 0 && c.elem_cnt() > 0) {
      rows = rows < 0 ? c.range(0).size() : std::min(rows, c.range(0).size());
    }
  }
  if (bytes <= kBandBytes || rows <= 1) return 1;
  return std::min(rows, (bytes + kBandBytes - 1) / kBandBytes);
}

// Part `band` of every chunk.
std::vector<TensorSlice> BandPieces(const std::vector<TensorSlice>& chunks, int64_t bands,
                                    int64_t band) {
  std::vector<TensorSlice> pieces = chunks;
  if (bands == 1) return pieces;
  for (TensorSlice& p : pieces) p.set_range(0, BalancedPart(p.range(0), bands, band));
  return pieces;
}

// Pointers to the non-empty `pieces`, in order (what a packed buffer of
// the pieces holds).
std::vector<const TensorSlice*> NonEmpty(const std::vector<TensorSlice>& pieces) {
  std::vector<const TensorSlice*> out;
  for (const TensorSlice& p : pieces) {
    if (p.elem_cnt() > 0) out.push_back(&p);
  }
  return out;
}

// Collects the traffic of a step's band calls: CallOptions::traffic
// receives one call's bytes, the step reports their sum.
class BandTraffic {
 public:
  explicit BandTraffic(const comm::CallOptions& options) : options_(options), step_(options.traffic) {
    options_.traffic = &call_;
    if (step_ != nullptr) *step_ = comm::Traffic{};
  }
  const comm::CallOptions& options() {
    call_ = comm::Traffic{};
    return options_;
  }
  // After each call, successful or not.
  void Add() {
    if (step_ != nullptr) *step_ += call_;
  }

 private:
  comm::CallOptions options_;
  comm::Traffic* step_;
  comm::Traffic call_;
};

absl::StatusOr<LocalTensor> AllGather(const StepRun& r) {
  absl::StatusOr<LocalTensor> out = Alloc(r.dtype, r.rs.out, false, r.in.device());
  OFS_RETURN_IF_ERROR(out.status());
  const std::vector<int64_t> counts = Counts(r.rs.chunks);
  const TensorSlice& mine = r.rs.chunks[r.rs.position];
  if (Concatenates(r.rs.out, r.rs.chunks)) {
    int64_t before = 0;
    for (int j = 0; j < r.rs.position; ++j) before += counts[j];
    char* place = static_cast<char*>(out->raw_data()) + before * ByteSizeOf(r.dtype);
    absl::Status s = PackRegion(r.in, r.rs.in, mine, place);
    if (s.ok()) s = r.group.AllGatherV(place, out->raw_data(), counts, r.dtype, r.options);
    OFS_RETURN_IF_ERROR(s);
    return out;
  }
  const int64_t bands = BandCount(r.rs.chunks, ByteSizeOf(r.dtype));
  BandTraffic traffic(r.options);
  for (int64_t band = 0; band < bands; ++band) {
    const std::vector<TensorSlice> pieces = BandPieces(r.rs.chunks, bands, band);
    const std::vector<int64_t> band_counts = Counts(pieces);
    int64_t total = 0;
    for (int64_t c : band_counts) total += c;
    absl::StatusOr<LocalTensor> gathered = LocalTensor::Empty(r.dtype, {total}, r.in.device());
    OFS_RETURN_IF_ERROR(gathered.status());
    const std::vector<TensorSlice> own = {pieces[r.rs.position]};
    OFS_ASSIGN_OR_RETURN(LocalTensor sent, PackAll(r.in, r.rs.in, NonEmpty(own)));
    absl::Status s = r.group.AllGatherV(sent.raw_data(), gathered->raw_data(), band_counts,
                                        r.dtype, traffic.options());
    traffic.Add();
    if (s.ok()) s = UnpackAll(*gathered, NonEmpty(pieces), &*out, r.rs.out, RegionOp::kCopy);
    OFS_RETURN_IF_ERROR(s);
  }
  return out;
}

absl::StatusOr<LocalTensor> ReduceScatter(const StepRun& r) {
  absl::StatusOr<LocalTensor> out = Alloc(r.dtype, r.rs.out, false, r.in.device());
  OFS_RETURN_IF_ERROR(out.status());
  const int64_t bands = BandCount(r.rs.chunks, ByteSizeOf(r.dtype));
  if (bands == 1) {
    const std::vector<int64_t> counts = Counts(r.rs.chunks);
    LocalTensor send = r.in;
    if (!Concatenates(r.rs.in, r.rs.chunks)) {
      std::vector<const TensorSlice*> regions;
      for (const TensorSlice& c : r.rs.chunks) regions.push_back(&c);
      absl::StatusOr<LocalTensor> packed = PackAll(r.in, r.rs.in, regions);
      OFS_RETURN_IF_ERROR(packed.status());
      send = *std::move(packed);
    }
    absl::Status s =
        r.group.ReduceScatterV(send.raw_data(), out->raw_data(), counts, r.dtype, r.options);
    OFS_RETURN_IF_ERROR(s);
    return out;
  }
  BandTraffic traffic(r.options);
  for (int64_t band = 0; band < bands; ++band) {
    const std::vector<TensorSlice> pieces = BandPieces(r.rs.chunks, bands, band);
    absl::StatusOr<LocalTensor> packed = PackAll(r.in, r.rs.in, NonEmpty(pieces));
    OFS_RETURN_IF_ERROR(packed.status());
    const TensorSlice& mine = pieces[r.rs.position];
    absl::StatusOr<LocalTensor> reduced =
        LocalTensor::Empty(r.dtype, {mine.elem_cnt()}, r.in.device());
    OFS_RETURN_IF_ERROR(reduced.status());
    absl::Status s = r.group.ReduceScatterV(packed->raw_data(), reduced->raw_data(),
                                            Counts(pieces), r.dtype, traffic.options());
    traffic.Add();
    if (s.ok() && mine.elem_cnt() > 0) {
      s = UnpackRegion(reduced->raw_data(), mine, &*out, r.rs.out, RegionOp::kCopy);
    }
    OFS_RETURN_IF_ERROR(s);
  }
  return out;
}

// Rows of the logical tensor per exchange band: bands of about kBandBytes,
// 0 when the whole tensor fits in one (then no banding).
int64_t ExchangeBandRows(const Shape& shape, int64_t es) {
  if (shape.rank() == 0 || shape.elem_cnt() * es <= kBandBytes || shape.dims()[0] <= 1) return 0;
  const int64_t row_bytes = shape.elem_cnt() / shape.dims()[0] * es;
  return std::max<int64_t>(1, kBandBytes / std::max<int64_t>(1, row_bytes));
}

// An exchange of a large tensor, band by band: the same global rows on
// every member, so what a sender cuts from a region is what its receiver
// expects. Each element belongs to one band and meets its pieces in the
// same member order as in one exchange, so sums are bit-identical.
absl::StatusOr<LocalTensor> BandedExchange(const StepRun& r, int64_t band_rows) {
  const RankStep& rs = r.rs;
  LocalTensor out;
  if (rs.holds_output) {
    int64_t covered = 0;
    for (const auto& pieces : rs.recv) {
      for (const TensorSlice& t : pieces) covered += t.elem_cnt();
    }
    for (const TensorSlice& region : rs.local) covered += region.elem_cnt();
    absl::StatusOr<LocalTensor> o =
        Alloc(r.dtype, rs.out, rs.sum || covered != rs.out.elem_cnt(), r.in.device());
    OFS_RETURN_IF_ERROR(o.status());
    out = *std::move(o);
  }
  const RegionOp op = rs.sum ? RegionOp::kAdd : RegionOp::kCopy;
  if (rs.holds_output) {
    for (const TensorSlice& region : rs.local) {
      absl::Status s = CopyRegion(r.in, rs.in, region, &out, rs.out, op);
      OFS_RETURN_IF_ERROR(s);
    }
  }
  BandTraffic traffic(r.options);
  const int64_t rows = r.shape.dims()[0];
  for (int64_t begin = 0; begin < rows; begin += band_rows) {
    const IndexRange band{begin, std::min(rows, begin + band_rows)};
    std::vector<TensorSlice> sends, recvs;
    std::vector<int64_t> send_counts, recv_counts;
    for (size_t j = 0; j < rs.group.size(); ++j) {
      int64_t sc = 0, rc = 0;
      for (const TensorSlice& t : rs.send[j]) {
        TensorSlice piece = t;
        piece.set_range(0, IndexRange{std::max(t.range(0).begin, band.begin),
                                      std::min(t.range(0).end, band.end)});
        if (piece.elem_cnt() > 0) sends.push_back(piece), sc += piece.elem_cnt();
      }
      for (const TensorSlice& t : rs.recv[j]) {
        TensorSlice piece = t;
        piece.set_range(0, IndexRange{std::max(t.range(0).begin, band.begin),
                                      std::min(t.range(0).end, band.end)});
        if (piece.elem_cnt() > 0) recvs.push_back(piece), rc += piece.elem_cnt();
      }
      send_counts.push_back(sc);
      recv_counts.push_back(rc);
    }
    std::vector<const TensorSlice*> send_ptrs, recv_ptrs;
    for (const TensorSlice& t : sends) send_ptrs.push_back(&t);
    for (const TensorSlice& t : recvs) recv_ptrs.push_back(&t);
    // As in one exchange, a band whose pieces are consecutive runs of the
    // shard is sent from it (or received into it) in place: no staging, no
    // copy. The bands and counts are the same either way, so members need
    // not agree on it.
    const int64_t es = ByteSizeOf(r.dtype);
    LocalTensor packed;
    const void* send = nullptr;
    std::optional<int64_t> send_at;
    if (rs.holds_input && !send_ptrs.empty()) send_at = ConsecutiveRuns(rs.in, send_ptrs);
    if (send_at) {
      send = static_cast<const char*>(r.in.raw_data()) + *send_at * es;
    } else {
      absl::StatusOr<LocalTensor> p =
          PackAll(r.in, rs.in, rs.holds_input ? send_ptrs : std::vector<const TensorSlice*>{});
      OFS_RETURN_IF_ERROR(p.status());
      packed = *std::move(p);
      send = packed.raw_data();
    }
    int64_t total_recv = 0;
    for (int64_t c : recv_counts) total_recv += c;
    std::optional<int64_t> recv_at;
    if (rs.holds_output && !rs.sum && !recv_ptrs.empty()) {
      recv_at = ConsecutiveRuns(rs.out, recv_ptrs);
    }
    LocalTensor received;
    void* recv = nullptr;
    if (recv_at) {
      recv = static_cast<char*>(out.raw_data()) + *recv_at * es;
    } else {
      OFS_ASSIGN_OR_RETURN(LocalTensor buf, LocalTensor::Empty(r.dtype, {total_recv},
          r.in.device()));
      received = std::move(buf);
      recv = received.raw_data();
    }
    absl::Status s = r.group.AllToAllV(send, send_counts, recv, recv_counts, r.dtype,
                                       traffic.options());
    traffic.Add();
    if (s.ok() && rs.holds_output && !recv_at) s = UnpackAll(received, recv_ptrs, &out, rs.out, op);
    OFS_RETURN_IF_ERROR(s);
  }
  if (!rs.holds_output) return LocalTensor();
  return out;
}

// All-to-all and p2p: pack what goes to each member, exchange, unpack.
// Where the regions sent (or received) are consecutive runs of the shard,
// the exchange reads (or writes) the shard in place instead.
absl::StatusOr<LocalTensor> Exchange(const StepRun& r) {
  if (const int64_t band_rows = ExchangeBandRows(r.shape, ByteSizeOf(r.dtype)); band_rows > 0) {
    return BandedExchange(r, band_rows);
  }
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
  OFS_ASSIGN_OR_RETURN(LocalTensor empty, LocalTensor::Empty(r.dtype, {0}, r.in.device()));
  LocalTensor packed = std::move(empty);
  const void* send = packed.raw_data();
  if (rs.holds_input && !sends.empty()) {
    if (std::optional<int64_t> at = ConsecutiveRuns(rs.in, sends)) {
      send = static_cast<const char*>(r.in.raw_data()) + *at * es;
    } else {
      absl::StatusOr<LocalTensor> p = PackAll(r.in, rs.in, sends);
      OFS_RETURN_IF_ERROR(p.status());
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
    OFS_RETURN_IF_ERROR(o.status());
    out = *std::move(o);
    if (!rs.sum) direct = ConsecutiveRuns(rs.out, recvs);
  }
  LocalTensor received;
  void* recv;
  if (direct) {
    recv = static_cast<char*>(out.raw_data()) + *direct * es;
  } else {
    absl::StatusOr<LocalTensor> buf = LocalTensor::Empty(r.dtype, {total_recv}, r.in.device());
    OFS_RETURN_IF_ERROR(buf.status());
    received = *std::move(buf);
    recv = received.raw_data();
  }
  absl::Status s =
      r.group.AllToAllV(send, send_counts, recv, recv_counts, r.dtype, r.options);
  OFS_RETURN_IF_ERROR(s);
  if (!rs.holds_output) return LocalTensor();
  const RegionOp op = rs.sum ? RegionOp::kAdd : RegionOp::kCopy;
  for (const TensorSlice& region : rs.local) {
    s = CopyRegion(r.in, rs.in, region, &out, rs.out, op);
    OFS_RETURN_IF_ERROR(s);
  }
  if (!direct) {
    s = UnpackAll(received, recvs, &out, rs.out, op);
    OFS_RETURN_IF_ERROR(s);
  }
  return out;
}

absl::StatusOr<LocalTensor> LocalStep(const StepRun& r) {
  const RankStep& rs = r.rs;
  switch (rs.kind) {
    case boxing::StepKind::kLocalSlice: {
      absl::StatusOr<LocalTensor> out = Alloc(r.dtype, rs.out, false, r.in.device());
      OFS_RETURN_IF_ERROR(out.status());
      absl::Status s = CopyRegion(r.in, rs.in, rs.out, &*out, rs.out, RegionOp::kCopy);
      OFS_RETURN_IF_ERROR(s);
      return out;
    }
    case boxing::StepKind::kLocalPartial:
      if (rs.keeps_value) return r.in;
      return Alloc(r.dtype, rs.out, true, r.in.device());
    default: {  // kLocalScatter: the shard placed into zeros
      absl::StatusOr<LocalTensor> out = Alloc(r.dtype, rs.out, true, r.in.device());
      OFS_RETURN_IF_ERROR(out.status());
      absl::Status s = CopyRegion(r.in, rs.in, rs.in, &*out, rs.out, RegionOp::kCopy);
      OFS_RETURN_IF_ERROR(s);
      return out;
    }
  }
}

absl::StatusOr<LocalTensor> RunStep(const StepRun& r) {
  switch (r.rs.kind) {
    case boxing::StepKind::kAllGather: return AllGather(r);
    case boxing::StepKind::kReduceScatter: return ReduceScatter(r);
    case boxing::StepKind::kAllReduce: {
      absl::StatusOr<LocalTensor> out = Alloc(r.dtype, r.rs.out, false, r.in.device());
      OFS_RETURN_IF_ERROR(out.status());
      absl::Status s = r.group.AllReduce(r.in.raw_data(), out->raw_data(), r.in.elem_cnt(),
                                         r.dtype, r.options);
      OFS_RETURN_IF_ERROR(s);
      return out;
    }
    case boxing::StepKind::kAllToAll:
    case boxing::StepKind::kPointToPoint:
      return Exchange(r);
    default:
      return LocalStep(r);
  }
}

absl::Status CheckShard(const boxing::BoxingPlan& plan, const LocalTensor& local, int64_t device_rank) {
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

comm::Traffic PlannedTraffic(const boxing::BoxingPlan& plan, int step, int64_t device_rank) {
  const auto it = std::find(plan.ranks.begin(), plan.ranks.end(), device_rank);
  const boxing::BoxingStep& s = plan.steps[step];
  if (it == plan.ranks.end() || s.bytes_sent.empty()) return {};
  const size_t p = static_cast<size_t>(it - plan.ranks.begin());
  return comm::Traffic{s.bytes_sent[p], s.bytes_received[p]};
}

absl::StatusOr<LocalTensor> ExecutePlan(const boxing::BoxingPlan& plan, LocalTensor local,
                                        comm::Communicator& world, ExecutionReport* report,
                                        const comm::CallOptions& options) {
  const int64_t me = world.rank();
  if (std::find(plan.ranks.begin(), plan.ranks.end(), me) == plan.ranks.end()) {
    return LocalTensor();
  }
  absl::Status s = CheckShard(plan, local, me);
  OFS_RETURN_IF_ERROR(s);
  const absl::Time start = absl::Now();
  // The only reference when the caller moved its shard in: each step's
  // input is freed as soon as the next step's output replaces it.
  LocalTensor cur = std::move(local);
  for (int k = 0; k < static_cast<int>(plan.steps.size()); ++k) {
    const absl::Time step_start = absl::Now();
    OFS_ASSIGN_OR_RETURN(RankStep rs, LowerStep(plan, k, me));
    StepReport step_report;
    step_report.kind = rs.kind;
    if (rs.active) {
      std::vector<int> members(rs.group.begin(), rs.group.end());
      OFS_ASSIGN_OR_RETURN(std::shared_ptr<comm::Communicator> group, world.SubGroup(members));
      comm::CallOptions call = options;
      call.traffic = &step_report.traffic;
      // Reductions combine partials by their kind: P sums, P(max) maxes.
      const boxing::BoxingStep& step = plan.steps[k];
      if (step.from.is_partial()) call.reduce_op = ReduceOpOf(step.from.partial_kind());
      OFS_ASSIGN_OR_RETURN(LocalTensor next, RunStep(StepRun{rs, cur, *group, plan.dtype, call,
          plan.shape}));
      cur = std::move(next);
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

}  // namespace oneflow_sbp::runtime