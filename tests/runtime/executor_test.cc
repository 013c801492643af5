// The boxing executor on real ranks (in-process threads): every ordered
// pair of layouts over {S(0), S(1), B, P} on [2], [3], [2,2] and [2,3] (a
// sample on [2,2,2]), even, uneven and smaller-than-the-mesh shapes, and
// changes of placement. Each case (tests/runtime/boxing_round_trip.h) distributes a
// full integer-valued tensor, runs the plan on every rank, assembles the
// result and requires it bit-exact, and requires every rank's measured
// bytes per step to equal the plan's prediction.
#include "runtime/executor.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/shard_harness.h"
#include "comm/inprocess_world.h"
#include "tests/runtime/boxing_round_trip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::boxing {
namespace {

using ::oneflow_sbp::testing::Nd;
using ::oneflow_sbp::testing::P;
using ::testing::HasSubstr;
using testing::EveryPair;
using testing::Full;
using testing::Layouts;
using testing::RunCase;

TEST(Executor, EveryPairOnTwoRanks) { EveryPair("cpu:0-1", {Shape{4, 6}, Shape{5, 3}, Shape{1, 3}}); }

TEST(Executor, EveryPairOnThreeRanks) {
  EveryPair("cpu:0-2", {Shape{6, 9}, Shape{7, 5}, Shape{2, 2}});
}

TEST(Executor, EveryPairOn2x2) { EveryPair("cpu:0-3 [2,2]", {Shape{8, 6}, Shape{5, 7}, Shape{3, 1}}); }

TEST(Executor, EveryPairOn2x3) { EveryPair("cpu:0-5 [2,3]", {Shape{12, 6}, Shape{7, 5}, Shape{2, 2}}); }

TEST(Executor, SampleOn2x2x2) { EveryPair("cpu:0-7 [2,2,2]", {Shape{8, 4}, Shape{5, 3}}, 7); }

// P(max) and P(min) (the planned policy's extended partials): every
// ordered pair over {S(0), S(1), B, P, P(max)} (and P(min)) that does not
// mix partial kinds in one layout, on [2,2] and [2,3]; all-reduce and
// reduce-scatter by max/min, B -> P(max) keeping every copy, P(max) -> P
// through B; and changes of placement, where a P(max) source is reduced
// before the p2p exchange. The harness lays P(max) out as one rank holding
// the value and the others candidates below it.
TEST(Executor, PartialMaxAndMinEveryPair) {
  int checked = 0;
  for (SbpParallel extra : {SbpParallel::PartialMax(), SbpParallel::PartialMin()}) {
    for (const std::string placement : {"cpu:0-3 [2,2]", "cpu:0-5 [2,3]"}) {
      const Placement p = P(placement);
      std::vector<NdSbp> layouts;
      const std::vector<SbpParallel> values = {SbpParallel::Split(0), SbpParallel::Split(1),
                                               SbpParallel::Broadcast(),
                                               SbpParallel::PartialSum(), extra};
      for (SbpParallel a : values) {
        for (SbpParallel b : values) {
          NdSbp l;
          l.push_back(a);
          l.push_back(b);
          if (!l.mixes_partial_kinds()) layouts.push_back(l);
        }
      }
      for (const NdSbp& a : layouts) {
        for (const NdSbp& b : layouts) {
          if (a.partial_kind() != extra.partial_kind() && b.partial_kind() != extra.partial_kind()) {
            continue;  // covered by EveryPairOn2x2 / EveryPairOn2x3
          }
          EXPECT_EQ(RunCase(Shape{6, 5}, DataType::kFloat32, p, a, p, b), "");
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
  EXPECT_EQ(RunCase(Shape{6, 5}, DataType::kInt32, P("cpu:0-3 [2,2]"), Nd("(P(max),S(0))"),
                    P("cpu:4-5"), Nd("(P(max))")),
            "");
  EXPECT_EQ(RunCase(Shape{6, 5}, DataType::kFloat32, P("cpu:0-1"), Nd("(P(min))"),
                    P("cpu:2-5 [2,2]"), Nd("(S(1),P(min))")),
            "");
  // Never a p2p exchange out of a max partial, and never a conversion
  // between kinds in one step: reduced by max first (here scattered, the
  // cheaper half of an all-reduce), then made a sum locally.
  absl::StatusOr<BoxingPlan> plan =
      PlanBoxing({Shape{6, 5}, DataType::kFloat32, P("cpu:0-3 [2,2]"), Nd("(P(max),B)"),
                  P("cpu:0-3 [2,2]"), Nd("(P,B)")},
                 Calibration::Defaults(NdSbp::kMaxAxes));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->Summary(), "reduce_scatter[0] P(max)->S(0) ; local_s_to_p[0] S(0)->P");
}

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
    return runtime::ExecutePlan(*plan, wrong, world).status();
  });
  ASSERT_TRUE(ran.ok());
  for (const absl::Status& s : *ran) {
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
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
        absl::StatusOr<LocalTensor> out = runtime::ExecutePlan(*plan, (*shards)[world.rank()], world);
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
