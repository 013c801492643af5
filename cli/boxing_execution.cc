#include "cli/boxing_execution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "runtime/executor.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/shard_harness.h"

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

// Fills `t` (already allocated, `count` elements) with elements
// [begin, begin + count) of `slice` of the plan's seeded tensor, in the
// slice's row-major order. Nothing of the full tensor is made.
void FillSeeded(const boxing::BoxingPlan& plan, uint64_t seed, const TensorSlice& slice,
                int64_t begin, int64_t count, LocalTensor* t) {
  const LocalDims strides = RowMajorStrides(plan.shape.dims());
  const int rank = static_cast<int>(slice.ranges().size());
  std::vector<int64_t> at(rank, 0);
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t extent = slice.ranges()[d].size();
    at[d] = extent == 0 ? 0 : begin % extent;
    begin = extent == 0 ? 0 : begin / extent;
  }
  for (int64_t n = 0; n < count; ++n) {
    int64_t flat = 0;
    for (int d = 0; d < rank; ++d) flat += (slice.ranges()[d].begin + at[d]) * strides[d];
    t->SetDouble(n, SeededValue(seed, static_cast<uint64_t>(flat), plan.dtype));
    for (int d = rank - 1; d >= 0 && ++at[d] == slice.ranges()[d].size(); --d) at[d] = 0;
  }
}

// The seeded values of `slice` of the plan's tensor.
absl::StatusOr<LocalTensor> SeededSlice(const boxing::BoxingPlan& plan, uint64_t seed,
                                        const TensorSlice& slice) {
  LocalDims dims;
  for (const IndexRange& r : slice.ranges()) dims.push_back(r.size());
  OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Empty(plan.dtype, dims));
  FillSeeded(plan, seed, slice, 0, t.elem_cnt(), &t);
  return t;
}

absl::StatusOr<LocalTensor> SeededFull(const boxing::BoxingPlan& plan, uint64_t seed) {
  return SeededSlice(plan, seed, TensorSlice(plan.shape));
}

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Turns `t`, the seeded values of the rank at `coord`'s slice, into what
// that rank holds under the partial axes of `nd_sbp`, element by element
// (so a rank never makes more than its own shard). On a P (sum) axis of
// extent h the rank at coordinate c != 0 holds an addend in [-3, 3] drawn
// from (seed, axis, c, element), and coordinate 0 the value minus the
// others' addends; on P(max) (P(min)) coordinate 0 holds the value and the
// others a candidate 1..3 below (above) it. Addends depend on the element's
// place in the slice, which every rank of a partial group shares.
absl::Status SplitIntoPartials(const boxing::BoxingPlan& plan, const NdSbp& nd_sbp,
                               const MeshCoord& coord, int64_t rank, uint64_t seed,
                               LocalTensor* t) {
  constexpr int kMaxAddend = 3;
  const Placement& placement = plan.src_placement;
  auto draw = [&](int axis, int64_t c, int64_t i) {
    return Mix(seed ^ Mix((static_cast<uint64_t>(axis) << 56) ^
                          (static_cast<uint64_t>(c) << 40) ^ static_cast<uint64_t>(i)));
  };
  for (int64_t i = 0; i < t->elem_cnt(); ++i) {
    double v = t->GetDouble(i);
    for (int a = 0; a < nd_sbp.size(); ++a) {
      const SbpParallel sbp = nd_sbp[a];
      if (sbp.is_partial_sum()) {
        auto addend = [&](int64_t c) {
          return static_cast<double>(static_cast<int64_t>(draw(a, c, i) % (2 * kMaxAddend + 1)) -
                                     kMaxAddend);
        };
        if (coord[a] != 0) {
          v = addend(coord[a]);
        } else {
          for (int64_t c = 1; c < placement.hierarchy()[a]; ++c) v -= addend(c);
        }
      } else if (sbp.is_partial() && coord[a] != 0) {
        const double sign = sbp.is_partial_max() ? -1 : 1;
        v += sign * static_cast<double>(1 + draw(a, coord[a], i) % kMaxAddend);
      }
    }
    t->SetDouble(i, v);
    const double got = t->GetDouble(i);
    if (!(got == v || (std::isnan(got) && std::isnan(v)))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot lay out a ", DataTypeName(plan.dtype), " tensor as ", nd_sbp.ToString(),
          " exactly: rank ", rank, "'s addend ", v, " rounds to ", got,
          " (use a wider dtype)"));
    }
  }
  return absl::OkStatus();
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
  OFS_ASSIGN_OR_RETURN(LocalTensor dsend, LocalTensor::Empty(dtype, {counts[world.rank()]},
      device));
  OFS_ASSIGN_OR_RETURN(LocalTensor drecv, LocalTensor::Empty(dtype, {total}, device));
  OFS_ASSIGN_OR_RETURN(DeviceOps* ops, GetDeviceOps(device));
  absl::Status s = ops->Copy(dsend.raw_data(), send, counts[world.rank()] * es,
                                CopyDirection::kHostToDevice);
  if (s.ok()) s = world.AllGatherV(dsend.raw_data(), drecv.raw_data(), counts, dtype);
  if (s.ok()) s = ops->Copy(recv, drecv.raw_data(), total * es, CopyDirection::kDeviceToHost);
  return s;
}

// `t` on `device` (itself when it is there, or undefined).
absl::StatusOr<LocalTensor> On(const LocalTensor& t, DeviceType device) {
  if (!t.defined() || t.device() == device) return t;
  return t.CopyTo(device);
}

// This rank's shard of the seeded tensor laid out as the plan's source, on
// `device` (undefined where the rank holds none), made from the rank's own
// slice only: partial sums are drawn element by element
// (SplitIntoPartials), so no rank makes the full tensor.
absl::StatusOr<LocalTensor> SourceShard(const boxing::BoxingPlan& plan, int rank, uint64_t seed,
                                        DeviceType device) {
  absl::StatusOr<int64_t> src_id = plan.src_placement.ParallelIdOf(rank);
  if (!src_id.ok()) return LocalTensor();
  const MeshCoord coord = plan.src_placement.CoordinateOf(*src_id);
  OFS_ASSIGN_OR_RETURN(
      LocalTensor mine,
      SeededSlice(plan, seed, SliceAt(plan.shape, plan.src, plan.src_placement.hierarchy(), coord)));
  if (plan.src.any_partial()) {
    OFS_RETURN_IF_ERROR(SplitIntoPartials(plan, plan.src, coord, rank, seed, &mine));
  }
  return On(mine, device);
}

// Fills summary->measured and ->seconds with every rank's traffic and times,
// and clears bytes_as_planned where the traffic is not the planned one.
absl::Status GatherStepReports(const boxing::BoxingPlan& plan,
                               const runtime::ExecutionReport& report, comm::Communicator& world,
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
  OFS_RETURN_IF_ERROR(s);
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
      if (summary->measured[k][p] != runtime::PlannedTraffic(plan, k, r)) {
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
  OFS_ASSIGN_OR_RETURN(LocalTensor gathered, LocalTensor::Empty(plan.dtype, {total}));
  const void* send = out.defined() ? out.raw_data() : gathered.raw_data();
  absl::Status s =
      HostAllGatherV(world, device, send, gathered.raw_data(), shard_counts, plan.dtype);
  OFS_RETURN_IF_ERROR(s);
  if (world.rank() == 0) {
    OFS_ASSIGN_OR_RETURN(*shards, SplitDestinationShards(plan, gathered, shard_counts));
  }
  return absl::OkStatus();
}

// Every rank's destination shard against the dims its slice gives it; on
// rank 0, a description of the first rank whose dims differ ("" if none).
absl::StatusOr<std::string> CheckShardDims(const boxing::BoxingPlan& plan, const LocalTensor& out,
                                           comm::Communicator& world) {
  const Placement& placement = plan.dst_placement;
  auto want_dims = [&](int64_t rank) -> std::optional<LocalDims> {
    absl::StatusOr<int64_t> id = placement.ParallelIdOf(rank);
    if (!id.ok()) return std::nullopt;
    const TensorSlice slice =
        SliceAt(plan.shape, plan.dst, placement.hierarchy(), placement.CoordinateOf(*id));
    LocalDims dims;
    for (const IndexRange& r : slice.ranges()) dims.push_back(r.size());
    return dims;
  };
  const std::optional<LocalDims> want = want_dims(world.rank());
  const bool ok = want ? out.defined() && out.dtype() == plan.dtype && out.dims() == *want
                       : !out.defined();
  double local[2] = {ok ? 1.0 : 0.0, out.defined() ? static_cast<double>(out.elem_cnt()) : -1.0};
  std::vector<double> all(2 * world.size());
  OFS_RETURN_IF_ERROR(world.AllGatherV(local, all.data(),
                                       std::vector<int64_t>(world.size(), 2), DataType::kFloat64));
  for (int r = 0; r < world.size(); ++r) {
    if (all[2 * r] != 0) continue;
    const std::optional<LocalDims> w = want_dims(r);
    return absl::StrCat("rank ", r, " holds ",
                        all[2 * r + 1] < 0 ? std::string("nothing")
                                           : absl::StrCat(all[2 * r + 1], " elements"),
                        " but ", plan.dst.ToString(), " on ", placement.ToString(), " gives it ",
                        w ? absl::StrCat(DataTypeName(plan.dtype), DimsToString(*w))
                          : std::string("nothing"));
  }
  return std::string();
}

// Bytes of chunks rank 0 holds at once while checking.
constexpr int64_t kCheckBytes = int64_t{8} << 20;

// For each parallel id, the id with some coordinates set to 0: those of
// every mesh axis that does not split (its slice group's first id), or with
// `broadcast_only` those of the B axes (the copy it must equal).
std::vector<int64_t> ParallelIdsAtZero(const Placement& placement, const NdSbp& nd,
                                       bool broadcast_only) {
  std::vector<int64_t> out(placement.parallel_num());
  for (int64_t id = 0; id < placement.parallel_num(); ++id) {
    MeshCoord c = placement.CoordinateOf(id);
    for (int a = 0; a < nd.size(); ++a) {
      if (broadcast_only ? nd[a].is_broadcast() : !nd[a].is_split()) c[a] = 0;
    }
    out[id] = placement.ParallelIdAt(c);
  }
  return out;
}

// The chunk the representatives' copies make together: the one copy, or
// their sum, max or min for a partial layout (bools as "any").
absl::StatusOr<LocalTensor> CombineCopies(DataType dtype, const std::optional<PartialKind>& kind,
                                          const std::vector<int64_t>& reps,
                                          const absl::flat_hash_map<int64_t, LocalTensor>& held,
                                          int64_t k) {
  if (!kind) return held.at(reps.front());
  const double start = *kind == PartialKind::kSum   ? 0.0
                       : *kind == PartialKind::kMax ? -std::numeric_limits<double>::infinity()
                                                    : std::numeric_limits<double>::infinity();
  std::vector<double> acc(k, start);
  for (int64_t id : reps) {
    const LocalTensor& t = held.at(id);
    for (int64_t i = 0; i < k; ++i) {
      const double v = t.GetDouble(i);
      acc[i] = *kind == PartialKind::kSum   ? acc[i] + v
               : *kind == PartialKind::kMax ? std::max(acc[i], v)
                                            : std::min(acc[i], v);
    }
  }
  if (dtype == DataType::kBool) {
    for (double& v : acc) v = v != 0 ? 1 : 0;
  }
  return LocalTensor::FromDoubles(dtype, {k}, acc);
}

// The destination check on cpu worlds, chunk by chunk at rank 0, so that no
// rank holds more than its shard plus a few chunks (the assembled tensor,
// every shard at rank 0 and a full reference took 3x the tensor there,
// 4x more for a B or P destination). It checks what assembling the shards
// (kernels::AssembleTensor) and comparing with the seeded tensor checked:
// broadcast copies equal the copy at B coordinate 0 of their mesh axes, and
// those copies, reduced over the partial axes, equal the seeded values of
// their slice. The shard dims are checked first (CheckShardDims).
//
// Every rank walks the same loop: parallel ids grouped by slice (equal
// split coordinates), each slice in chunks, each chunk over the group's
// members in parallel-id order; a member sends its chunk to rank 0, which
// receives them in that order (Send and Recv pair in order per pair).
// Returns, on rank 0, the first difference found ("" if none).
absl::StatusOr<std::string> CheckDestinationAtRankZero(const boxing::BoxingPlan& plan,
                                                       const LocalTensor& out,
                                                       comm::Communicator& world, uint64_t seed) {
  OFS_ASSIGN_OR_RETURN(std::string mismatch, CheckShardDims(plan, out, world));
  if (!mismatch.empty()) return mismatch;
  const Placement& placement = plan.dst_placement;
  const NdSbp& nd = plan.dst;
  const int me = world.rank();
  const int64_t es = ByteSizeOf(plan.dtype);
  const std::optional<PartialKind> kind = nd.partial_kind();
  const std::vector<int64_t> group_of = ParallelIdsAtZero(placement, nd, /*broadcast_only=*/false);
  const std::vector<int64_t> copy_of = ParallelIdsAtZero(placement, nd, /*broadcast_only=*/true);
  for (int64_t group = 0; group < placement.parallel_num(); ++group) {
    if (group_of[group] != group) continue;
    std::vector<int64_t> members, reps;
    for (int64_t id = group; id < placement.parallel_num(); ++id) {
      if (group_of[id] != group) continue;
      members.push_back(id);
      if (copy_of[id] == id) reps.push_back(id);
    }
    const TensorSlice slice =
        SliceAt(plan.shape, nd, placement.hierarchy(), placement.CoordinateOf(group));
    const int64_t n = slice.elem_cnt();
    const int64_t chunk = std::max<int64_t>(
        1024, kCheckBytes / (es * static_cast<int64_t>(reps.size() + 2)));
    for (int64_t begin = 0; begin < n; begin += chunk) {
      const int64_t k = std::min(chunk, n - begin);
      absl::flat_hash_map<int64_t, LocalTensor> held;  // rank 0: the reps' chunks
      for (int64_t id : members) {
        const int rank = static_cast<int>(placement.RankOf(id));
        const char* mine = static_cast<const char*>(me == rank ? out.raw_data() : nullptr);
        if (me != 0) {
          if (me == rank) OFS_RETURN_IF_ERROR(world.Send(mine + begin * es, k, plan.dtype, 0));
          continue;
        }
        OFS_ASSIGN_OR_RETURN(LocalTensor got, LocalTensor::Empty(plan.dtype, {k}));
        if (rank == 0) {
          std::copy(mine + begin * es, mine + (begin + k) * es, static_cast<char*>(got.raw_data()));
        } else {
          OFS_RETURN_IF_ERROR(world.Recv(got.raw_data(), k, plan.dtype, rank));
        }
        if (copy_of[id] == id) {
          held.emplace(id, std::move(got));
        } else if (mismatch.empty()) {
          const std::string diff = DescribeMismatch(got, held.at(copy_of[id]));
          if (!diff.empty()) {
            mismatch = absl::StrCat(nd.ToString(), ": ranks ", rank, " and ",
                                    placement.RankOf(copy_of[id]),
                                    " hold broadcast copies that differ: from element ", begin,
                                    " of their shard, ", diff);
          }
        }
      }
      if (me != 0 || !mismatch.empty()) continue;
      OFS_ASSIGN_OR_RETURN(LocalTensor want, LocalTensor::Empty(plan.dtype, {k}));
      FillSeeded(plan, seed, slice, begin, k, &want);
      OFS_ASSIGN_OR_RETURN(const LocalTensor result, CombineCopies(plan.dtype, kind, reps, held, k));
      const std::string diff = DescribeMismatch(result, want);
      if (!diff.empty()) {
        mismatch = absl::StrCat("slice ", slice.ToString(), " of ", nd.ToString(),
                                " differs from the seeded tensor from element ", begin, ": ", diff);
      }
    }
  }
  return mismatch;
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
    OFS_ASSIGN_OR_RETURN(LocalTensor out, runtime::ExecutePlan(plan, mine, world));
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
  OFS_ASSIGN_OR_RETURN(LocalTensor mine, SourceShard(plan, me, seed, device));
  absl::Status s = world.Barrier();
  OFS_RETURN_IF_ERROR(s);
  const absl::Time start = absl::Now();
  runtime::ExecutionReport report;
  // Without repeats the source is moved in, so the executor frees it after
  // its first step (peak memory); repeats re-run from a kept handle.
  LocalTensor source = repeat > 0 ? mine : LocalTensor();
  OFS_ASSIGN_OR_RETURN(LocalTensor out, runtime::ExecutePlan(plan, std::move(mine), world,
      &report));
  const double first_wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<double> repeats;
  if (repeat > 0) {
    OFS_ASSIGN_OR_RETURN(repeats, TimedRepeats(plan, source, world, device, repeat));
  }
  source = LocalTensor();
  OFS_ASSIGN_OR_RETURN(out, On(out, DeviceType::kCpu));
  s = world.Barrier();
  OFS_RETURN_IF_ERROR(s);
  ExecutionSummary summary;
  summary.wall_s = repeat > 0 ? first_wall_s : absl::ToDoubleSeconds(absl::Now() - start);
  summary.repeat_seconds = std::move(repeats);
  s = GatherStepReports(plan, report, world, device, &summary);
  OFS_RETURN_IF_ERROR(s);
  if (device == DeviceType::kCpu) {
    OFS_ASSIGN_OR_RETURN(std::string mismatch, CheckDestinationAtRankZero(plan, out, world, seed));
    summary.mismatch = std::move(mismatch);
    summary.verified = summary.mismatch.empty();
    return summary;
  }
  const std::vector<int64_t> shard_counts = DestinationShardCounts(plan, world.size());
  std::vector<LocalTensor> shards;
  s = AllGatherShards(plan, out, world, device, shard_counts, &shards);
  if (!s.ok() || me != 0) return s.ok() ? absl::StatusOr<ExecutionSummary>(summary) : s;
  out = LocalTensor();
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
