// The boxing executor on real ranks (in-process threads): every ordered
// pair of layouts over {S(0), S(1), B, P} on [2], [3], [2,2] and [2,3] (a
// sample on [2,2,2]), even, uneven and smaller-than-the-mesh shapes, and
// changes of placement. Each case distributes a full integer-valued tensor,
// runs the plan on every rank, assembles the result and requires it
// bit-exact, and requires every rank's measured bytes per step to equal the
// plan's prediction.
#include "boxing/executor.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/comm/inprocess_world.h"
#include "boxing/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/kernels/shard_harness.h"
#include "tests/value_test_util.h"

namespace oneflow_sbp::boxing {
namespace {

using testing::Nd;
using testing::P;
using ::testing::HasSubstr;

// Row-major index mod 97 (+1), so every element differs from its
// neighbours and sums of small integer addends stay exact in f32.
LocalTensor Full(DataType dtype, const Shape& shape) {
  LocalTensor t = *LocalTensor::Empty(dtype, shape.dims());
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, static_cast<double>(i % 97 + 1));
  return t;
}

int WorldSize(const Placement& a, const Placement& b) {
  int64_t n = 0;
  for (int64_t r : a.ranks()) n = std::max(n, r + 1);
  for (int64_t r : b.ranks()) n = std::max(n, r + 1);
  return static_cast<int>(n);
}

// Runs one plan and returns "" or what went wrong.
std::string RunCase(const Shape& shape, DataType dtype, const Placement& src_p,
                    const NdSbp& src, const Placement& dst_p, const NdSbp& dst) {
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
  std::vector<ExecutionReport> reports(n);
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(n, [&](comm::Communicator& world) {
    const int r = world.rank();
    absl::StatusOr<int64_t> id = src_p.ParallelIdOf(r);
    const LocalTensor in = id.ok() ? (*shards)[*id] : LocalTensor();
    absl::StatusOr<LocalTensor> out = ExecutePlan(*plan, in, world, &reports[r]);
    if (!out.ok()) return out.status();
    outs[r] = *std::move(out);
    return absl::OkStatus();
  });
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
      const comm::Traffic want = PlannedTraffic(*plan, static_cast<int>(k), r);
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

void EveryPair(const std::string& placement, const std::vector<Shape>& shapes, int stride = 1) {
  const Placement p = P(placement);
  const std::vector<NdSbp> layouts = Layouts(p.num_axes());
  int checked = 0;
  int index = 0;
  for (const Shape& shape : shapes) {
    for (const NdSbp& a : layouts) {
      for (const NdSbp& b : layouts) {
        if (index++ % stride != 0) continue;
        const DataType dtype = checked % 3 == 2 ? DataType::kInt32 : DataType::kFloat32;
        EXPECT_EQ(RunCase(shape, dtype, p, a, p, b), "");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(Executor, EveryPairOnTwoRanks) { EveryPair("cpu:0-1", {Shape{4, 6}, Shape{5, 3}, Shape{1, 3}}); }

TEST(Executor, EveryPairOnThreeRanks) {
  EveryPair("cpu:0-2", {Shape{6, 9}, Shape{7, 5}, Shape{2, 2}});
}

TEST(Executor, EveryPairOn2x2) { EveryPair("cpu:0-3 [2,2]", {Shape{8, 6}, Shape{5, 7}, Shape{3, 1}}); }

TEST(Executor, EveryPairOn2x3) { EveryPair("cpu:0-5 [2,3]", {Shape{12, 6}, Shape{7, 5}, Shape{2, 2}}); }

TEST(Executor, SampleOn2x2x2) { EveryPair("cpu:0-7 [2,2,2]", {Shape{8, 4}, Shape{5, 3}}, 7); }

TEST(Executor, ChangesOfPlacement) {
  struct Case {
    std::string from, to;
  };
  const std::vector<Case> cases = {
      {"cpu:0-1", "cpu:2-3"},              // disjoint
      {"cpu:0-3", "cpu:2-5"},              // overlapping
      {"cpu:0-3 [2,2]", "cpu:0-3"},        // other hierarchy, same ranks
      {"cpu:0-3 [2,2]", "cpu:1-6 [2,3]"},  // both
      {"cpu:0-5 [2,3]", "cpu:0-1"},
  };
  int checked = 0;
  for (const Case& c : cases) {
    const Placement a = P(c.from);
    const Placement b = P(c.to);
    const std::vector<NdSbp> from = Layouts(a.num_axes());
    const std::vector<NdSbp> to = Layouts(b.num_axes());
    int index = 0;
    for (const Shape& shape : {Shape{6, 4}, Shape{5, 7}}) {
      for (const NdSbp& x : from) {
        for (const NdSbp& y : to) {
          if (index++ % 3 != 0) continue;
          EXPECT_EQ(RunCase(shape, DataType::kFloat32, a, x, b, y), "");
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(Executor, WrongShardIsInvalidArgumentOnEveryRank) {
  const Placement p = P("cpu:0-1");
  absl::StatusOr<BoxingPlan> plan = PlanBoxing(
      {Shape{4, 6}, DataType::kFloat32, p, Nd("S(0)"), p, Nd("B")}, Calibration::Defaults(8));
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(2, [&](comm::Communicator& world) {
    const LocalTensor wrong = *LocalTensor::Zeros(DataType::kFloat32, {3, 6});
    return ExecutePlan(*plan, wrong, world).status();
  });
  ASSERT_TRUE(ran.ok());
  for (const absl::Status& s : *ran) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("shard must be f32[2,6]"));
  }
}

// One rank fails before its collective: the others get an error within
// the timeout, and no shard is handed back.
TEST(Executor, AFailingRankFailsTheOthersQuickly) {
  const Placement p = P("cpu:0-3 [2,2]");
  absl::StatusOr<BoxingPlan> plan = PlanBoxing(
      {Shape{8, 6}, DataType::kFloat32, p, Nd("(S(0),S(1))"), p, Nd("(B,B)")},
      Calibration::Defaults(8));
  ASSERT_TRUE(plan.ok());
  const LocalTensor full = Full(DataType::kFloat32, Shape{8, 6});
  absl::StatusOr<std::vector<LocalTensor>> shards =
      kernels::DistributeTensor(full, Nd("(S(0),S(1))"), p);
  ASSERT_TRUE(shards.ok());
  comm::InProcessOptions options;
  options.default_timeout = absl::Seconds(1);
  // One byte per rank: std::vector<bool> packs ranks into one word, and
  // rank threads writing their own bits would race.
  std::vector<char> handed_back(4, 0);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(
      4,
      [&](comm::Communicator& world) -> absl::Status {
        if (world.rank() == 2) return absl::InternalError("rank 2 gives up");
        absl::StatusOr<LocalTensor> out = ExecutePlan(*plan, (*shards)[world.rank()], world);
        handed_back[world.rank()] = out.ok();
        return out.status();
      },
      options);
  ASSERT_TRUE(ran.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (int r = 0; r < 4; ++r) {
    EXPECT_FALSE((*ran)[r].ok()) << r;
    EXPECT_FALSE(handed_back[r]) << r;
  }
}

}  // namespace
}  // namespace oneflow_sbp::boxing
