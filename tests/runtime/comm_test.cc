// The in-process communicator: every collective on groups of 1 to 6 ranks
// with uneven counts (zeros included), byte counters against the ring
// formulas and against the boxing planner's predicted steps, and mesh
// sub-groups run one after another and concurrently.
// Faults and argument checks are in comm_fault_test.cc.
#include <functional>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/collective_moves.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/comm_scenarios.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::comm {
namespace {

using ::testing::ElementsAre;

InProcessOptions Fast() {
  InProcessOptions o;
  o.default_timeout = absl::Seconds(20);
  return o;
}

// Runs fn on n ranks and expects every rank OK.
void ExpectAllOk(int n, const std::function<absl::Status(Communicator&)>& fn) {
  absl::StatusOr<std::vector<absl::Status>> results = RunRanks(n, fn, Fast());
  ASSERT_TRUE(results.ok()) << results.status();
  for (int r = 0; r < n; ++r) EXPECT_TRUE((*results)[r].ok()) << "rank " << r << ": " << (*results)[r];
}

class EveryCollective : public ::testing::TestWithParam<int> {};

TEST_P(EveryCollective, ResultsAndBytesMatchTheFormulas) {
  ExpectAllOk(GetParam(), [](Communicator& comm) { return testing::CheckEveryCollective(comm); });
}

TEST(MultiSegmentCollectives, ResultsAndBytesMatchTheFormulas) {
  ExpectAllOk(3, [](Communicator& comm) { return testing::CheckMultiSegmentCollectives(comm); });
}

INSTANTIATE_TEST_SUITE_P(GroupSizes, EveryCollective, ::testing::Range(1, 7),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("n", info.param);
                         });

// The formulas written out by hand once, so that a wrong helper in
// comm_scenarios.cc cannot hide a wrong algorithm.
TEST(CommFormulas, HandComputedUnevenCase) {
  // f32 chunks {2, 0, 1} elements = {8, 0, 4} bytes, T = 12.
  const std::vector<int64_t> c = {8, 0, 4};
  EXPECT_EQ(testing::ExpectedAllGather(c, 0), (Traffic{12, 4}));   // T - c1, T - c0
  EXPECT_EQ(testing::ExpectedAllGather(c, 1), (Traffic{8, 12}));   // T - c2, T - c1
  EXPECT_EQ(testing::ExpectedAllGather(c, 2), (Traffic{4, 8}));    // T - c0, T - c2
  EXPECT_EQ(testing::ExpectedReduceScatter(c, 0), (Traffic{4, 8}));  // T - c0, T - c2
  EXPECT_EQ(testing::ExpectedReduceScatter(c, 1), (Traffic{12, 4}));
  // 7 f32 over 3: balanced chunks {3, 2, 2} = {12, 8, 8} bytes of T = 28.
  EXPECT_EQ(testing::ExpectedAllReduce(7, 4, 3, 0), (Traffic{16 + 20, 20 + 16}));
  EXPECT_EQ(testing::ExpectedAllReduce(7, 4, 3, 2), (Traffic{20 + 16, 20 + 20}));

  absl::StatusOr<std::vector<absl::Status>> r = RunRanks(3, [](Communicator& comm) {
    std::vector<float> in = {1, 2};
    std::vector<float> out(3, -1);
    const std::vector<int64_t> counts = {2, 0, 1};
    absl::Status s = comm.AllGatherV(in.data(), out.data(), counts, DataType::kFloat32);
    if (!s.ok()) return s;
    const Traffic want[3] = {{12, 4}, {8, 12}, {4, 8}};
    if (comm.last_call_traffic() != want[comm.rank()]) {
      return absl::InternalError(comm.last_call_traffic().ToString());
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(r.ok());
  for (const absl::Status& s : *r) EXPECT_TRUE(s.ok()) << s;
}

// What the communicator moves equals what the planner predicted for the
// same layout change, rank by rank (the executor's accounting contract).
struct PlannedMove {
  std::string placement;
  Shape shape;
  std::string from;
  MeshAxisMask axes;
  std::string to;
};

TEST(CommFormulas, TrafficEqualsPlannerPrediction) {
  const std::vector<PlannedMove> moves = {
      {"cpu:0-2", {7, 3}, "S(0)", AxisBit(0), "B"},          // all-gather, uneven rows
      {"cpu:0-4", {3, 2}, "S(0)", AxisBit(0), "B"},          // zero-row ranks
      {"cpu:0-3", {10, 3}, "P", AxisBit(0), "S(0)"},         // reduce-scatter
      {"cpu:0-2", {5, 5}, "P", AxisBit(0), "B"},             // all-reduce
      {"cpu:0-3", {9, 7}, "S(0)", AxisBit(0), "S(1)"},       // all-to-all
      {"cpu:0-5 [2,3]", {8, 7}, "(S(0),S(1))", AxisBit(1), "(S(0),B)"},
      {"cpu:0-5 [2,3]", {5, 4}, "(P,P)", AxisBit(0) | AxisBit(1), "(B,B)"},
      {"cpu:0-5 [2,3]", {6, 5}, "(P,S(0))", AxisBit(0), "(S(1),S(0))"},
  };
  const boxing::Calibration cal = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
  for (const PlannedMove& m : moves) {
    SCOPED_TRACE(absl::StrCat(m.placement, " ", m.from, " axes ", m.axes, " -> ", m.to));
    const Placement p = oneflow_sbp::testing::P(m.placement);
    const NdSbp from = oneflow_sbp::testing::Nd(m.from);
    const int n = static_cast<int>(p.parallel_num());
    std::vector<int> identity(n);
    std::iota(identity.begin(), identity.end(), 0);
    boxing::LayoutSpace space(m.shape, DataType::kFloat32, p, identity, n);
    const NdSbp to_nd = oneflow_sbp::testing::Nd(m.to);
    int first_axis = 0;
    while (!(m.axes & AxisBit(first_axis))) ++first_axis;
    std::optional<boxing::BoxingStep> step =
        boxing::CollectiveMove(space, from, m.axes, to_nd[first_axis], cal);
    ASSERT_TRUE(step.has_value());
    const std::vector<TensorSlice> old_slices = space.Slices(from);
    const std::vector<TensorSlice> new_slices = space.Slices(step->result);
    const std::vector<int64_t> hierarchy(p.hierarchy().begin(), p.hierarchy().end());

    std::vector<Traffic> moved(n);
    ExpectAllOk(n, [&](Communicator& world) -> absl::Status {
      absl::StatusOr<std::shared_ptr<Communicator>> g = world.ForMeshAxes(hierarchy, m.axes);
      if (!g.ok()) return g.status();
      Communicator& comm = **g;
      const int k = comm.rank();
      auto member = [&](int j) { return comm.world_ranks()[j]; };
      std::vector<int64_t> old_counts(comm.size());
      std::vector<int64_t> new_counts(comm.size());
      for (int j = 0; j < comm.size(); ++j) {
        old_counts[j] = old_slices[member(j)].elem_cnt();
        new_counts[j] = new_slices[member(j)].elem_cnt();
      }
      // The group's region (P: every member holds all of it).
      const int64_t total = old_slices[member(k)].elem_cnt();
      std::vector<float> a(m.shape.elem_cnt() * comm.size() + 1);
      std::vector<float> b(a.size());
      absl::Status s;
      switch (step->kind) {
        case boxing::StepKind::kAllGather:
          s = comm.AllGatherV(a.data(), b.data(), old_counts, DataType::kFloat32);
          break;
        case boxing::StepKind::kReduceScatter:
          s = comm.ReduceScatterV(a.data(), b.data(), new_counts, DataType::kFloat32);
          break;
        case boxing::StepKind::kAllReduce:
          s = comm.AllReduce(a.data(), b.data(), total, DataType::kFloat32);
          break;
        case boxing::StepKind::kAllToAll: {
          std::vector<int64_t> send(comm.size());
          std::vector<int64_t> recv(comm.size());
          for (int q = 0; q < comm.size(); ++q) {
            send[q] = boxing::OverlapCount(old_slices[member(k)], new_slices[member(q)]);
            recv[q] = boxing::OverlapCount(old_slices[member(q)], new_slices[member(k)]);
          }
          s = comm.AllToAllV(a.data(), send, b.data(), recv, DataType::kFloat32);
          break;
        }
        default:
          return absl::InternalError("unexpected step kind");
      }
      moved[world.rank()] = comm.last_call_traffic();
      return s;
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(moved[r].bytes_sent, step->bytes_sent[r]) << "rank " << r;
      EXPECT_EQ(moved[r].bytes_received, step->bytes_received[r]) << "rank " << r;
    }
  }
}

class MeshSubGroups : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(MeshSubGroups, EveryAxisSubsetOneAfterAnother) {
  const std::vector<int64_t> h = GetParam();
  const int n = static_cast<int>(std::accumulate(h.begin(), h.end(), int64_t{1}, std::multiplies<>()));
  ExpectAllOk(n, [&](Communicator& world) {
    return testing::CheckMeshSubGroups(world, h, /*concurrent=*/false);
  });
}

TEST_P(MeshSubGroups, EveryAxisSubsetConcurrently) {
  const std::vector<int64_t> h = GetParam();
  const int n = static_cast<int>(std::accumulate(h.begin(), h.end(), int64_t{1}, std::multiplies<>()));
  ExpectAllOk(n, [&](Communicator& world) -> absl::Status {
    // Twice: the second run reuses the cached groups, whose sequence
    // numbers continue.
    for (int i = 0; i < 2; ++i) {
      absl::Status s = testing::CheckMeshSubGroups(world, h, /*concurrent=*/true);
      if (!s.ok()) return s;
    }
    return world.Barrier();
  });
}

INSTANTIATE_TEST_SUITE_P(Meshes, MeshSubGroups,
                         ::testing::Values(std::vector<int64_t>{2, 2}, std::vector<int64_t>{2, 3},
                                           std::vector<int64_t>{2, 2, 2}));

TEST(SubGroups, ExplicitRankListsKeepTheirOrderAndNest) {
  ExpectAllOk(4, [](Communicator& world) -> absl::Status {
    // {3, 1} and {0, 2}: group rank 0 is world rank 3 / 0.
    const std::vector<int> ranks = world.rank() % 2 == 1 ? std::vector<int>{3, 1}
                                                          : std::vector<int>{0, 2};
    absl::StatusOr<std::shared_ptr<Communicator>> g = world.SubGroup(ranks);
    if (!g.ok()) return g.status();
    if ((*g)->world_ranks()[(*g)->rank()] != world.rank()) {
      return absl::InternalError("sub-group rank does not map back to this world rank");
    }
    // A group of one inside it (this rank alone) still runs collectives.
    absl::StatusOr<std::shared_ptr<Communicator>> self = (*g)->SubGroup({(*g)->rank()});
    if (!self.ok()) return self.status();
    absl::Status s = testing::CheckEveryCollective(**self);
    if (!s.ok()) return s;
    return testing::CheckEveryCollective(**g);
  });
}

TEST(SubGroups, TrafficRollsUpToTheWorld) {
  ExpectAllOk(4, [](Communicator& world) -> absl::Status {
    absl::StatusOr<std::shared_ptr<Communicator>> row = world.ForMeshAxes({2, 2}, AxisBit(1));
    if (!row.ok()) return row.status();
    std::vector<int64_t> x(10, 1);
    absl::Status s = (*row)->AllReduce(x.data(), x.data(), 10, DataType::kInt64);
    if (!s.ok()) return s;
    // 10 i64 over 2: chunks of 40 bytes; sends (80-40)+(80-40).
    const Traffic want{80, 80};
    if ((*row)->total_traffic() != want || world.total_traffic() != want ||
        world.last_call_traffic() != Traffic{}) {
      return absl::InternalError(absl::StrCat("row ", (*row)->total_traffic().ToString(),
                                              ", world ", world.total_traffic().ToString()));
    }
    for (int64_t v : x) {
      if (v != 2) return absl::InternalError("wrong sum");
    }
    return absl::OkStatus();
  });
}

TEST(ReduceOps, MaxMinPropagateNaNAndWrapIntegers) {
  ExpectAllOk(2, [](Communicator& comm) -> absl::Status {
    const float nan = std::nanf("");
    std::vector<float> f = comm.rank() == 0 ? std::vector<float>{nan, 1, -3}
                                            : std::vector<float>{2, nan, 5};
    CallOptions max;
    max.reduce_op = ReduceOp::kMax;
    absl::Status s = comm.AllReduce(f.data(), f.data(), 3, DataType::kFloat32, max);
    if (!s.ok()) return s;
    if (!std::isnan(f[0]) || !std::isnan(f[1]) || f[2] != 5) return absl::InternalError("max");
    std::vector<int8_t> i8 = {100, -100};
    s = comm.AllReduce(i8.data(), i8.data(), 2, DataType::kInt8);
    if (!s.ok()) return s;
    // 200 and -200 wrap to -56 and 56.
    if (i8[0] != -56 || i8[1] != 56) return absl::InternalError("i8 wrap");
    return absl::OkStatus();
  });
}

}  // namespace
}  // namespace oneflow_sbp::comm
