#include "tests/runtime/boxing_round_trip.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/inprocess_world.h"
#include "runtime/executor.h"
#include "boxing/planner.h"
#include "gtest/gtest.h"
#include "kernels/shard_harness.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::boxing::testing {
namespace {

int WorldSize(const Placement& a, const Placement& b) {
  int64_t n = 0;
  for (int64_t r : a.ranks()) n = std::max(n, r + 1);
  for (int64_t r : b.ranks()) n = std::max(n, r + 1);
  return static_cast<int>(n);
}

// `t` on `device` (itself when it is there already).
absl::StatusOr<LocalTensor> On(const LocalTensor& t, DeviceType device) {
  if (!t.defined() || t.device() == device) return t;
  return t.CopyTo(device);
}

}  // namespace

LocalTensor Full(DataType dtype, const Shape& shape) {
  LocalTensor t = *LocalTensor::Empty(dtype, shape.dims());
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, static_cast<double>(i % 97 + 1));
  return t;
}

std::string RunCase(const Shape& shape, DataType dtype, const Placement& src_p, const NdSbp& src,
                    const Placement& dst_p, const NdSbp& dst, const RoundTripWorld& world) {
  const std::string name = absl::StrCat(DataTypeName(dtype), shape.ToString(), " ", src.ToString(),
                                        " on ", src_p.ToString(), " -> ", dst.ToString(), " on ",
                                        dst_p.ToString());
  absl::StatusOr<BoxingPlan> plan =
      PlanBoxing({shape, dtype, src_p, src, dst_p, dst}, Calibration::Defaults(NdSbp::kMaxAxes));
  if (!plan.ok()) return absl::StrCat(name, ": plan: ", plan.status().message());
  const LocalTensor full = Full(dtype, shape);
  absl::StatusOr<std::vector<LocalTensor>> shards = kernels::DistributeTensor(full, src, src_p);
  if (!shards.ok()) return absl::StrCat(name, ": distribute: ", shards.status().message());
  const int n = WorldSize(src_p, dst_p);
  std::vector<LocalTensor> outs(n);
  std::vector<runtime::ExecutionReport> reports(n);
  // Shards move to and from the device on their rank's thread (its stream).
  auto rank_fn = [&](comm::Communicator& comm) -> absl::Status {
    const int r = comm.rank();
    absl::StatusOr<int64_t> id = src_p.ParallelIdOf(r);
    absl::StatusOr<LocalTensor> in = On(id.ok() ? (*shards)[*id] : LocalTensor(), world.device);
    if (!in.ok()) return in.status();
    absl::StatusOr<LocalTensor> out = runtime::ExecutePlan(*plan, *in, comm, &reports[r]);
    if (!out.ok()) return out.status();
    absl::StatusOr<LocalTensor> host = On(*out, DeviceType::kCpu);
    if (!host.ok()) return host.status();
    outs[r] = *std::move(host);
    return absl::OkStatus();
  };
  absl::StatusOr<std::vector<absl::Status>> ran =
      world.run ? world.run(n, rank_fn) : comm::RunRanks(n, rank_fn);
  if (!ran.ok()) return absl::StrCat(name, ": ", ran.status().message());
  for (int r = 0; r < n; ++r) {
    if (!(*ran)[r].ok()) return absl::StrCat(name, ": rank ", r, ": ", (*ran)[r].message());
  }
  std::vector<LocalTensor> dst_shards;
  for (int64_t id = 0; id < dst_p.parallel_num(); ++id) dst_shards.push_back(outs[dst_p.RankOf(id)]);
  absl::StatusOr<LocalTensor> got =
      kernels::AssembleTensor(dst_shards, TensorDesc{shape, dtype}, dst, dst_p);
  if (!got.ok()) return absl::StrCat(name, ": assemble: ", got.status().message());
  const std::string diff = DescribeMismatch(*got, full);
  if (!diff.empty()) return absl::StrCat(name, ": ", diff, "; plan ", plan->Summary());
  for (int r = 0; r < n; ++r) {
    if (reports[r].steps.size() != plan->steps.size() && !reports[r].steps.empty()) {
      return absl::StrCat(name, ": rank ", r, " reported ", reports[r].steps.size(), " steps");
    }
    for (size_t k = 0; k < reports[r].steps.size(); ++k) {
      const comm::Traffic want = runtime::PlannedTraffic(*plan, static_cast<int>(k), r);
      if (reports[r].steps[k].traffic != want) {
        return absl::StrCat(name, ": rank ", r, " step ", k, " (",
                            StepKindName(plan->steps[k].kind), ") moved ",
                            reports[r].steps[k].traffic.ToString(), ", planned ", want.ToString(),
                            "; plan ", plan->Summary());
      }
    }
  }
  return "";
}

std::vector<NdSbp> Layouts(int axes) {
  const std::vector<SbpParallel> values = {SbpParallel::Split(0), SbpParallel::Split(1),
                                           SbpParallel::Broadcast(), SbpParallel::PartialSum()};
  std::vector<NdSbp> out = {NdSbp()};
  for (int i = 0; i < axes; ++i) {
    std::vector<NdSbp> next;
    for (const NdSbp& prefix : out) {
      for (SbpParallel v : values) {
        NdSbp l = prefix;
        l.push_back(v);
        next.push_back(l);
      }
    }
    out = std::move(next);
  }
  return out;
}

void EveryPair(const std::string& placement, const std::vector<Shape>& shapes, int stride,
               const RoundTripWorld& world) {
  const Placement p = oneflow_sbp::testing::P(placement);
  const std::vector<NdSbp> layouts = Layouts(p.num_axes());
  int checked = 0;
  int index = 0;
  for (const Shape& shape : shapes) {
    for (const NdSbp& a : layouts) {
      for (const NdSbp& b : layouts) {
        if (index++ % stride != 0) continue;
        const DataType dtype = checked % 3 == 2 ? DataType::kInt32 : DataType::kFloat32;
        EXPECT_EQ(RunCase(shape, dtype, p, a, p, b, world), "");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace oneflow_sbp::boxing::testing
