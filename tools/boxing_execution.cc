#include "tools/boxing_execution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "runtime/executor.h"
#include "oneflow_sbp/device_ops.h"
#include "oneflow_sbp/status_macros.h"
#include "ops/kernels/shard_harness.h"

namespace oneflow_sbp::cli {
namespace {

// Seeded integer values in [-120, 120]: sums of addends stay exact in
// every dtype the executor moves. Element i's value depends on (seed, i)
// only, so a rank makes its own slice without the full tensor.
double SeededValue(uint64_t seed, uint64_t i, DataType dtype) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (i + 1) * 0xD1B54A32D192ED03ull;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return dtype == DataType::kBool ? static_cast<double>(x % 2) : static_cast<double>(x % 241) - 120;
}

// The seeded values of `slice` of the plan's tensor.
absl::StatusOr<LocalTensor> SeededSlice(const boxing::BoxingPlan& plan, uint64_t seed,
                                        const TensorSlice& slice) {
  LocalDims dims;
  for (const IndexRange& r : slice.ranges()) dims.push_back(r.size());
  OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Empty(plan.dtype, dims));
  const LocalDims strides = RowMajorStrides(plan.shape.dims());
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> at(rank, 0);
  for (int64_t n = 0; n < t.elem_cnt(); ++n) {
    int64_t flat = 0;
    for (int d = 0; d < rank; ++d) flat += (slice.ranges()[d].begin + at[d]) * strides[d];
    t.SetDouble(n, SeededValue(seed, static_cast<uint64_t>(flat), plan.dtype));
    for (int d = rank - 1; d >= 0 && ++at[d] == dims[d]; --d) at[d] = 0;
  }
  return t;
}

absl::StatusOr<LocalTensor> SeededFull(const boxing::BoxingPlan& plan, uint64_t seed) {
  return SeededSlice(plan, seed, TensorSlice(plan.shape));
}

int ParticipantOf(const boxing::BoxingPlan& plan, int64_t rank) {
  const auto it = std::find(plan.ranks.begin(), plan.ranks.end(), rank);
  return it == plan.ranks.end() ? -1 : static_cast<int>(it - plan.ranks.begin());
}

// AllGatherV of host buffers on a world whose buffers live on `device`:
// staged through device memory there (the device world takes device
// pointers only).
absl::Status HostAllGatherV(comm::Communicator& world, DeviceType device, const void* send,
                            void* recv, const std::vector<int64_t>& counts, DataType dtype) {
  if (device == DeviceType::kCpu) return world.AllGatherV(send, recv, counts, dtype);
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const int64_t es = ByteSizeOf(dtype);
  absl::StatusOr<LocalTensor> dsend = LocalTensor::Empty(dtype, {counts[world.rank()]}, device);
  if (!dsend.ok()) return dsend.status();
  absl::StatusOr<LocalTensor> drecv = LocalTensor::Empty(dtype, {total}, device);
  if (!drecv.ok()) return drecv.status();
  absl::StatusOr<DeviceOps*> ops = GetDeviceOps(device);
  if (!ops.ok()) return ops.status();
  absl::Status s = (*ops)->Copy(dsend->raw_data(), send, counts[world.rank()] * es,
                                CopyDirection::kHostToDevice);
  if (s.ok()) s = world.AllGatherV(dsend->raw_data(), drecv->raw_data(), counts, dtype);
  if (s.ok()) s = (*ops)->Copy(recv, drecv->raw_data(), total * es, CopyDirection::kDeviceToHost);
  return s;
}

// `t` on `device` (itself when it is there, or undefined).
absl::StatusOr<LocalTensor> On(const LocalTensor& t, DeviceType device) {
  if (!t.defined() || t.device() == device) return t;
  return t.CopyTo(device);
}

// This rank's shard of the seeded tensor laid out as the plan's source, on
// `device` (undefined where the rank holds none). Without partial sums it
// is made from the rank's own slice; with partial sums the rank's addends
// (DistributeTensorTo) are made from the full tensor.
absl::StatusOr<LocalTensor> SourceShard(const boxing::BoxingPlan& plan, int rank, uint64_t seed,
                                        DeviceType device) {
  absl::StatusOr<int64_t> src_id = plan.src_placement.ParallelIdOf(rank);
  if (!src_id.ok()) return LocalTensor();
  if (!plan.src.any_partial()) {
    OFS_ASSIGN_OR_RETURN(
        const LocalTensor mine,
        SeededSlice(plan, seed,
                    SliceAt(plan.shape, plan.src, plan.src_placement.hierarchy(),
                            plan.src_placement.CoordinateOf(*src_id))));
    return On(mine, device);
  }
  kernels::HarnessOptions ho;
  ho.seed = seed;
  OFS_ASSIGN_OR_RETURN(const LocalTensor full, SeededFull(plan, seed));
  absl::StatusOr<LocalTensor> src =
      kernels::DistributeTensorTo(full, plan.src, plan.src_placement, *src_id, ho);
  if (!src.ok()) return src.status();
  return On(*src, device);
}

// Fills summary->measured and ->seconds with every rank's traffic and times,
// and clears bytes_as_planned where the traffic is not the planned one.
absl::Status GatherStepReports(const boxing::BoxingPlan& plan,
                               const boxing::ExecutionReport& report, comm::Communicator& world,
                               DeviceType device, ExecutionSummary* summary) {
  // Traffic and times of every rank: 3 numbers per step.
  const int steps = static_cast<int>(plan.steps.size());
  std::vector<double> local(3 * steps, 0);
  for (int k = 0; k < steps && k < static_cast<int>(report.steps.size()); ++k) {
    local[3 * k] = static_cast<double>(report.steps[k].traffic.bytes_sent);
    local[3 * k + 1] = static_cast<double>(report.steps[k].traffic.bytes_received);
    local[3 * k + 2] = report.steps[k].seconds;
  }
  std::vector<double> all(local.size() * world.size());
  std::vector<int64_t> counts(world.size(), static_cast<int64_t>(local.size()));
  absl::Status s =
      HostAllGatherV(world, device, local.data(), all.data(), counts, DataType::kFloat64);
  if (!s.ok()) return s;
  summary->measured.assign(steps, std::vector<comm::Traffic>(plan.ranks.size()));
  summary->seconds.assign(steps, std::vector<double>(plan.ranks.size(), 0));
  for (int r = 0; r < world.size(); ++r) {
    const int p = ParticipantOf(plan, r);
    if (p < 0) continue;
    for (int k = 0; k < steps; ++k) {
      const double* v = &all[r * local.size() + 3 * k];
      summary->measured[k][p] =
          comm::Traffic{static_cast<int64_t>(v[0]), static_cast<int64_t>(v[1])};
      summary->seconds[k][p] = v[2];
      if (summary->measured[k][p] != boxing::PlannedTraffic(plan, k, r)) {
        summary->bytes_as_planned = false;
      }
    }
  }
  return absl::OkStatus();
}

// Elements of the destination shard each rank of the world holds.
std::vector<int64_t> DestinationShardCounts(const boxing::BoxingPlan& plan, int world_size) {
  std::vector<int64_t> shard_counts(world_size, 0);
  for (int64_t id = 0; id < plan.dst_placement.parallel_num(); ++id) {
    const TensorSlice sl = SliceAt(plan.shape, plan.dst, plan.dst_placement.hierarchy(),
                                   plan.dst_placement.CoordinateOf(id));
    shard_counts[plan.dst_placement.RankOf(id)] = sl.elem_cnt();
  }
  return shard_counts;
}

// Cuts the gathered destination shards (in rank order) into one tensor per
// parallel id.
absl::StatusOr<std::vector<LocalTensor>> SplitDestinationShards(
    const boxing::BoxingPlan& plan, const LocalTensor& gathered,
    const std::vector<int64_t>& shard_counts) {
  std::vector<LocalTensor> shards;
  const char* at = static_cast<const char*>(gathered.raw_data());
  for (int64_t id = 0; id < plan.dst_placement.parallel_num(); ++id) {
    const TensorSlice sl = SliceAt(plan.shape, plan.dst, plan.dst_placement.hierarchy(),
                                   plan.dst_placement.CoordinateOf(id));
    LocalDims dims;
    for (const IndexRange& r : sl.ranges()) dims.push_back(r.size());
    OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Empty(plan.dtype, dims));
    int64_t offset = 0;
    for (int64_t rank = 0; rank < plan.dst_placement.RankOf(id); ++rank) {
      offset += shard_counts[rank];
    }
    std::copy(at + offset * ByteSizeOf(plan.dtype),
              at + (offset + t.elem_cnt()) * ByteSizeOf(plan.dtype),
              static_cast<char*>(t.raw_data()));
    shards.push_back(std::move(t));
  }
  return shards;
}

// Every destination shard to every rank (device worlds, whose collectives
// take device buffers), cut into one tensor per parallel id on rank 0.
absl::Status AllGatherShards(const boxing::BoxingPlan& plan, const LocalTensor& out,
                             comm::Communicator& world, DeviceType device,
                             const std::vector<int64_t>& shard_counts,
                             std::vector<LocalTensor>* shards) {
  int64_t total = 0;
  for (int64_t c : shard_counts) total += c;
  absl::StatusOr<LocalTensor> gathered = LocalTensor::Empty(plan.dtype, {total});
  if (!gathered.ok()) return gathered.status();
  const void* send = out.defined() ? out.raw_data() : gathered->raw_data();
  absl::Status s =
      HostAllGatherV(world, device, send, gathered->raw_data(), shard_counts, plan.dtype);
  if (!s.ok()) return s;
  if (world.rank() == 0) {
    OFS_ASSIGN_OR_RETURN(*shards, SplitDestinationShards(plan, *gathered, shard_counts));
  }
  return absl::OkStatus();
}

// Rank 0 receives every destination shard into one tensor per parallel id
// (its own is `out`); the other ranks send theirs.
absl::Status GatherShardsToRankZero(const boxing::BoxingPlan& plan, const LocalTensor& out,
                                    comm::Communicator& world,
                                    const std::vector<int64_t>& shard_counts,
                                    std::vector<LocalTensor>* shards) {
  const int me = world.rank();
  if (me != 0) {
    if (shard_counts[me] == 0) return absl::OkStatus();
    return world.Send(out.raw_data(), shard_counts[me], plan.dtype, 0);
  }
  for (int64_t id = 0; id < plan.dst_placement.parallel_num(); ++id) {
    const int64_t rank = plan.dst_placement.RankOf(id);
    if (rank == 0) {
      shards->push_back(out);
      continue;
    }
    const TensorSlice sl = SliceAt(plan.shape, plan.dst, plan.dst_placement.hierarchy(),
                                   plan.dst_placement.CoordinateOf(id));
    LocalDims dims;
    for (const IndexRange& r : sl.ranges()) dims.push_back(r.size());
    absl::StatusOr<LocalTensor> t = LocalTensor::Empty(plan.dtype, dims);
    if (!t.ok()) return t.status();
    if (t->elem_cnt() > 0) {
      absl::Status s = world.Recv(t->raw_data(), t->elem_cnt(), plan.dtype, static_cast<int>(rank));
      if (!s.ok()) return s;
    }
    shards->push_back(*std::move(t));
  }
  return absl::OkStatus();
}

// Runs the plan `repeat` times from `mine`, each run timed on every rank
// from leaving a barrier to holding its output; per run, the slowest
// rank's seconds (the time the collective took for the whole world).
absl::StatusOr<std::vector<double>> TimedRepeats(const boxing::BoxingPlan& plan,
                                                 const LocalTensor& mine,
                                                 comm::Communicator& world, DeviceType device,
                                                 int repeat) {
  std::vector<double> local(repeat, 0);
  for (int i = 0; i < repeat; ++i) {
    OFS_RETURN_IF_ERROR(world.Barrier());
    const absl::Time start = absl::Now();
    OFS_ASSIGN_OR_RETURN(LocalTensor out, boxing::ExecutePlan(plan, mine, world));
    local[i] = absl::ToDoubleSeconds(absl::Now() - start);
  }
  std::vector<double> all(local.size() * world.size());
  std::vector<int64_t> counts(world.size(), repeat);
  OFS_RETURN_IF_ERROR(
      HostAllGatherV(world, device, local.data(), all.data(), counts, DataType::kFloat64));
  std::vector<double> slowest(repeat, 0);
  for (int r = 0; r < world.size(); ++r) {
    for (int i = 0; i < repeat; ++i) slowest[i] = std::max(slowest[i], all[r * repeat + i]);
  }
  return slowest;
}

}  // namespace

absl::StatusOr<ExecutionSummary> ExecuteAndVerify(const boxing::BoxingPlan& plan,
                                                  comm::Communicator& world, uint64_t seed,
                                                  DeviceType device, int repeat) {
  const int me = world.rank();
  absl::StatusOr<LocalTensor> mine = SourceShard(plan, me, seed, device);
  if (!mine.ok()) return mine.status();
  absl::Status s = world.Barrier();
  if (!s.ok()) return s;
  const absl::Time start = absl::Now();
  boxing::ExecutionReport report;
  absl::StatusOr<LocalTensor> out = boxing::ExecutePlan(plan, *mine, world, &report);
  if (!out.ok()) return out.status();
  const double first_wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<double> repeats;
  if (repeat > 0) {
    OFS_ASSIGN_OR_RETURN(repeats, TimedRepeats(plan, *mine, world, device, repeat));
  }
  *mine = LocalTensor();
  out = On(*out, DeviceType::kCpu);
  if (!out.ok()) return out.status();
  s = world.Barrier();
  if (!s.ok()) return s;
  ExecutionSummary summary;
  summary.wall_s = repeat > 0 ? first_wall_s : absl::ToDoubleSeconds(absl::Now() - start);
  summary.repeat_seconds = std::move(repeats);
  s = GatherStepReports(plan, report, world, device, &summary);
  if (!s.ok()) return s;
  const std::vector<int64_t> shard_counts = DestinationShardCounts(plan, world.size());
  std::vector<LocalTensor> shards;
  if (device == DeviceType::kCpu) {
    // Every destination shard to rank 0 only, straight into its place:
    // rank 0 holds the shards, the assembled tensor and the reference; the
    // other ranks hold nothing more than their shard.
    s = GatherShardsToRankZero(plan, *out, world, shard_counts, &shards);
  } else {
    s = AllGatherShards(plan, *out, world, device, shard_counts, &shards);
  }
  if (!s.ok() || me != 0) return s.ok() ? absl::StatusOr<ExecutionSummary>(summary) : s;
  *out = LocalTensor();
  absl::StatusOr<LocalTensor> assembled = kernels::AssembleTensor(
      shards, TensorDesc{plan.shape, plan.dtype}, plan.dst, plan.dst_placement);
  shards.clear();
  if (!assembled.ok()) {
    summary.mismatch = std::string(assembled.status().message());
  } else {
    OFS_ASSIGN_OR_RETURN(const LocalTensor reference, SeededFull(plan, seed));
    summary.mismatch = DescribeMismatch(*assembled, reference);
  }
  summary.verified = summary.mismatch.empty();
  return summary;
}

std::string ExecutionText(const boxing::BoxingPlan& plan, const ExecutionSummary& summary,
                          absl::string_view backend, int world_size) {
  std::string out = absl::StrCat("executed on ", world_size, world_size == 1 ? " rank (" : " ranks (", backend, "): ",
                                 summary.verified ? "result bit-exact" : "RESULT DIFFERS",
                                 summary.verified ? "" : absl::StrCat(" (", summary.mismatch, ")"),
                                 ", ", absl::StrFormat("%.3f", summary.wall_s * 1e3), " ms\n");
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    std::vector<std::string> ranks;
    double slowest = 0;
    for (size_t p = 0; p < plan.ranks.size(); ++p) {
      const comm::Traffic& m = summary.measured[k][p];
      slowest = std::max(slowest, summary.seconds[k][p]);
      const int64_t pr = plan.steps[k].bytes_received.empty() ? 0 : plan.steps[k].bytes_received[p];
      const int64_t ps = plan.steps[k].bytes_sent.empty() ? 0 : plan.steps[k].bytes_sent[p];
      if (m.bytes_sent == 0 && m.bytes_received == 0 && pr == 0 && ps == 0) continue;
      std::string entry = absl::StrCat("r", plan.ranks[p], " ", m.bytes_received, "/", m.bytes_sent);
      if (m.bytes_received != pr || m.bytes_sent != ps) {
        absl::StrAppend(&entry, " (PLANNED ", pr, "/", ps, ")");
      }
      ranks.push_back(std::move(entry));
    }
    absl::StrAppend(&out, "step ", k + 1, " measured received/sent: ",
                    ranks.empty() ? "nothing moved" : absl::StrJoin(ranks, ", "),
                    absl::StrFormat(", %.3f ms\n", slowest * 1e3));
  }
  absl::StrAppend(&out, summary.bytes_as_planned ? "every rank moved exactly the planned bytes\n"
                                                 : "MEASURED BYTES DIFFER FROM THE PLAN\n");
  if (!summary.repeat_seconds.empty()) {
    std::vector<double> sorted = summary.repeat_seconds;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    absl::StrAppend(&out, absl::StrFormat("repeated %d times (slowest rank per run): min %.3f ms, "
                                          "median %.3f ms\n",
                                          static_cast<int>(n), sorted[0] * 1e3, median * 1e3));
  }
  return out;
}

oneflow::ExecutionProto ExecutionToProto(const ExecutionSummary& summary,
                                         absl::string_view backend) {
  oneflow::ExecutionProto p;
  for (size_t k = 0; k < summary.measured.size(); ++k) {
    oneflow::MeasuredStepProto* step = p.add_steps();
    for (size_t r = 0; r < summary.measured[k].size(); ++r) {
      step->add_bytes_sent(summary.measured[k][r].bytes_sent);
      step->add_bytes_received(summary.measured[k][r].bytes_received);
      step->add_seconds(summary.seconds[k][r]);
    }
  }
  p.set_verified(summary.verified && summary.bytes_as_planned);
  p.set_wall_s(summary.wall_s);
  p.set_backend(std::string(backend));
  for (double s : summary.repeat_seconds) p.add_repeat_s(s);
  return p;
}

}  // namespace oneflow_sbp::cli
