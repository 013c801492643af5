// Placement: parsing and printing, equality and hashing, rank <-> parallel_id,
// mesh coordinates, sub-groups, and input errors.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/hash/hash_testing.h"
#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/placement.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using testing::P;

std::vector<int64_t> Vec(absl::Span<const int64_t> s) { return {s.begin(), s.end()}; }

// All coordinates of `h` in row-major order (last axis fastest), built
// independently of Placement.
std::vector<std::vector<int64_t>> RowMajorCoords(const std::vector<int64_t>& h) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> c(h.size(), 0);
  while (true) {
    out.push_back(c);
    int i = static_cast<int>(h.size()) - 1;
    while (i >= 0 && ++c[i] == h[i]) c[i--] = 0;
    if (i < 0) return out;
  }
}

// ------------------------------------------------------------ parse and print

TEST(PlacementTest, ParsePrintRoundTrip) {
  struct Case {
    const char* text;
    const char* printed;
    std::vector<int64_t> ranks;
    std::vector<int64_t> hierarchy;
  };
  const Case kCases[] = {
      {"cpu:0-3", "cpu:0-3", {0, 1, 2, 3}, {4}},
      {"cuda:0-7 [2,4]", "cuda:0-7 [2,4]", {0, 1, 2, 3, 4, 5, 6, 7}, {2, 4}},
      {"cpu:0,2,4,6 [2,2]", "cpu:0,2,4,6 [2,2]", {0, 2, 4, 6}, {2, 2}},
      {"cpu:3,1", "cpu:1,3", {1, 3}, {2}},
      {"cpu:0-3 [4]", "cpu:0-3", {0, 1, 2, 3}, {4}},
      {"cpu:1,0,2,3 [2,2]", "cpu:0-3 [2,2]", {0, 1, 2, 3}, {2, 2}},
      {"cpu:0-3,8,10", "cpu:0-3,8,10", {0, 1, 2, 3, 8, 10}, {6}},
      {"cpu:5", "cpu:5", {5}, {1}},
      {"gpu:0-1", "cuda:0-1", {0, 1}, {2}},
      {" cuda: 0-7 [2, 4] ", "cuda:0-7 [2,4]", {0, 1, 2, 3, 4, 5, 6, 7}, {2, 4}},
      {"cpu:0-5 [2,3,1]", "cpu:0-5 [2,3,1]", {0, 1, 2, 3, 4, 5}, {2, 3, 1}},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<Placement> p = Placement::Parse(c.text);
    ASSERT_TRUE(p.ok()) << c.text << ": " << p.status();
    EXPECT_EQ(p->ToString(), c.printed) << c.text;
    EXPECT_EQ(Vec(p->ranks()), c.ranks) << c.text;
    EXPECT_EQ(Vec(p->hierarchy()), c.hierarchy) << c.text;
    EXPECT_EQ(p->parallel_num(), static_cast<int64_t>(c.ranks.size())) << c.text;
    EXPECT_EQ(p->num_axes(), static_cast<int>(c.hierarchy.size())) << c.text;
    EXPECT_EQ(P(p->ToString()), *p) << c.text;
  }
  EXPECT_EQ(P("cuda:0-7 [2,4]").device_type(), DeviceType::kCuda);
  EXPECT_EQ(P("cpu:0").device_type(), DeviceType::kCpu);
  EXPECT_EQ(P("cpu:10,8,0-3").RanksToString(), "0-3,8,10");
}

TEST(PlacementTest, DefaultAndMake) {
  const Placement d;
  EXPECT_EQ(d.ToString(), "cpu:0");
  EXPECT_EQ(d.parallel_num(), 1);
  EXPECT_THAT(d.hierarchy(), ElementsAre(1));

  absl::StatusOr<Placement> m = Placement::Make(DeviceType::kCuda, {6, 4, 2, 0}, {2, 2});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, P("cuda:0,2,4,6 [2,2]"));
  EXPECT_THAT(m->ranks(), ElementsAre(0, 2, 4, 6));
}

TEST(PlacementTest, DeviceTypeNames) {
  EXPECT_EQ(DeviceTypeName(DeviceType::kCpu), "cpu");
  EXPECT_EQ(DeviceTypeName(DeviceType::kCuda), "cuda");
  EXPECT_EQ(*ParseDeviceType("gpu"), DeviceType::kCuda);
  EXPECT_EQ(*ParseDeviceType("CUDA"), DeviceType::kCuda);
  EXPECT_EQ(*ParseDeviceType("cpu"), DeviceType::kCpu);
  absl::StatusOr<DeviceType> bad = ParseDeviceType("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'tpu'"));
}

// ---------------------------------------------------------- equality and hash

TEST(PlacementTest, Equality) {
  EXPECT_EQ(P("cpu:3,1"), P("cpu:1,3"));
  EXPECT_EQ(P("cpu:0-3 [4]"), P("cpu:0-3"));
  EXPECT_NE(P("cpu:0-3 [2,2]"), P("cpu:0-3"));
  EXPECT_NE(P("cpu:0-3 [4,1]"), P("cpu:0-3"));
  EXPECT_NE(P("cuda:0-3"), P("cpu:0-3"));
  EXPECT_NE(P("cpu:1-4"), P("cpu:0-3"));
  const Placement a = P("cuda:0-7 [2,4]");
  const Placement copy = a;  // NOLINT: tests copy semantics
  EXPECT_EQ(copy, a);
  EXPECT_EQ(copy.ToString(), "cuda:0-7 [2,4]");
}

TEST(PlacementTest, EqualsIgnoringHierarchy) {
  EXPECT_TRUE(P("cpu:0-3 [2,2]").EqualsIgnoringHierarchy(P("cpu:0-3")));
  EXPECT_TRUE(P("cpu:0-3").EqualsIgnoringHierarchy(P("cpu:3,2,1,0 [4,1]")));
  EXPECT_TRUE(P("cpu:0-3").EqualsIgnoringHierarchy(P("cpu:0-3")));
  EXPECT_FALSE(P("cpu:0-3 [2,2]").EqualsIgnoringHierarchy(P("cuda:0-3 [2,2]")));
  EXPECT_FALSE(P("cpu:0-3").EqualsIgnoringHierarchy(P("cpu:0-2")));
  EXPECT_FALSE(P("cpu:0-3").EqualsIgnoringHierarchy(P("cpu:0,1,2,4")));
}

TEST(PlacementTest, Hashing) {
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(
      {P("cpu:0-3"), P("cpu:0-3 [2,2]"), P("cpu:0-3 [4,1]"), P("cuda:0-3"),
       P("cpu:1,3"), P("cpu:0")}));
  const absl::Hash<Placement> hash;
  EXPECT_EQ(hash(P("cpu:3,1")), hash(P("cpu:1,3")));
  EXPECT_EQ(hash(P("cpu:0-3 [4]")), hash(P("cpu:0,1,2,3")));
  absl::flat_hash_set<Placement> set;
  for (const char* t : {"cpu:0-3", "cpu:3,2,1,0", "cpu:0-3 [4]", "cpu:0-3 [2,2]",
                        "cpu:1,0,3,2 [2,2]", "cpu:0-3 [4,1]", "cuda:0-3", "gpu:0-3"}) {
    set.insert(P(t));
  }
  EXPECT_EQ(set.size(), 4u);
}

// ------------------------------------------------------- coordinates and ids

TEST(PlacementTest, SpecCoordinateExamples) {
  const Placement p = P("cpu:0-5 [2,3]");
  EXPECT_THAT(p.CoordinateOf(4), ElementsAre(1, 1));
  EXPECT_THAT(p.CoordinateOf(2), ElementsAre(0, 2));
  EXPECT_EQ(p.ParallelIdAt({1, 1}), 4);
  EXPECT_EQ(p.ParallelIdAt({0, 2}), 2);
  const Placement q = P("cuda:0-7 [2,4]");
  EXPECT_THAT(q.CoordinateOf(6), ElementsAre(1, 2));
  EXPECT_EQ(q.ParallelIdAt({1, 2}), 6);
  EXPECT_THAT(P("cpu:0-3").CoordinateOf(3), ElementsAre(3));
}

TEST(PlacementTest, CoordinateRoundTripIsRowMajor) {
  const std::vector<std::vector<int64_t>> kHierarchies = {
      {2, 3}, {2, 2, 2}, {6}, {3, 1, 2}, {1, 4}, {2, 3, 2, 2}};
  for (const std::vector<int64_t>& h : kHierarchies) {
    const std::vector<std::vector<int64_t>> expected = RowMajorCoords(h);
    std::vector<int64_t> ranks;
    for (size_t i = 0; i < expected.size(); ++i) ranks.push_back(10 + 2 * i);
    absl::StatusOr<Placement> p = Placement::Make(DeviceType::kCpu, ranks, h);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->parallel_num(), static_cast<int64_t>(expected.size()));
    for (int64_t id = 0; id < p->parallel_num(); ++id) {
      const MeshCoord coord = p->CoordinateOf(id);
      EXPECT_EQ(std::vector<int64_t>(coord.begin(), coord.end()), expected[id])
          << p->ToString() << " id " << id;
      EXPECT_EQ(p->ParallelIdAt(coord), id) << p->ToString();
    }
  }
}

TEST(PlacementTest, RankOfAndParallelIdOf) {
  const Placement p = P("cpu:0,2,4,6 [2,2]");
  for (int64_t id = 0; id < 4; ++id) {
    EXPECT_EQ(p.RankOf(id), 2 * id);
    absl::StatusOr<int64_t> back = p.ParallelIdOf(2 * id);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, id);
  }
  EXPECT_THAT(p.CoordinateOf(*p.ParallelIdOf(6)), ElementsAre(1, 1));
  EXPECT_THAT(p.CoordinateOf(*p.ParallelIdOf(2)), ElementsAre(0, 1));
  for (int64_t rank : {-1, 1, 3, 7, 8}) {
    absl::StatusOr<int64_t> id = p.ParallelIdOf(rank);
    ASSERT_FALSE(id.ok()) << rank;
    EXPECT_THAT(id, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(id.status().message()),
                HasSubstr("rank " + std::to_string(rank)));
  }
  // Ranks given out of order still number parallel_ids ascending.
  const Placement q = P("cpu:7,3,5");
  EXPECT_EQ(q.RankOf(0), 3);
  EXPECT_EQ(q.RankOf(2), 7);
  EXPECT_EQ(*q.ParallelIdOf(5), 1);
}

// ----------------------------------------------------------------- sub-groups

TEST(PlacementTest, SubGroupSingleAxes) {
  const Placement q = P("cuda:0-7 [2,4]");
  EXPECT_THAT(q.SubGroup(6, AxisBit(1)), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(q.SubGroup(6, AxisBit(0)), ElementsAre(2, 6));
  const Placement p = P("cpu:0-5 [2,3]");
  EXPECT_THAT(p.SubGroup(4, AxisBit(1)), ElementsAre(3, 4, 5));
  EXPECT_THAT(p.SubGroup(4, AxisBit(0)), ElementsAre(1, 4));
  EXPECT_THAT(p.SubGroup(4, 0), ElementsAre(4));
  EXPECT_THAT(p.SubGroup(4, AxisBit(0) | AxisBit(1)), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(p.SubGroup(4, AxisBit(5)), ElementsAre(4));  // outside: ignored
}

TEST(PlacementTest, SubGroupAxisSets) {
  const Placement p = P("cpu:0-7 [2,2,2]");
  EXPECT_THAT(p.SubGroup(0, AxisBit(0) | AxisBit(2)), ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(p.SubGroup(3, AxisBit(0) | AxisBit(2)), ElementsAre(2, 3, 6, 7));
  EXPECT_THAT(p.SubGroup(5, AxisBit(1) | AxisBit(2)), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(p.SubGroup(5, AxisBit(0) | AxisBit(1)), ElementsAre(1, 3, 5, 7));
  EXPECT_THAT(p.SubGroup(5, AxisBit(1)), ElementsAre(5, 7));
}

TEST(PlacementTest, SubGroups) {
  using Groups = std::vector<std::vector<int64_t>>;
  const Placement p = P("cpu:0-5 [2,3]");
  EXPECT_EQ(p.SubGroups(AxisBit(0)), (Groups{{0, 3}, {1, 4}, {2, 5}}));
  EXPECT_EQ(p.SubGroups(AxisBit(1)), (Groups{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(p.SubGroups(AxisBit(0) | AxisBit(1)), (Groups{{0, 1, 2, 3, 4, 5}}));
  EXPECT_EQ(p.SubGroups(0), (Groups{{0}, {1}, {2}, {3}, {4}, {5}}));
  const Placement c = P("cpu:0-7 [2,2,2]");
  EXPECT_EQ(c.SubGroups(AxisBit(0) | AxisBit(2)), (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(c.SubGroups(AxisBit(1)), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
}

// Every mask on a 3-axis mesh: the groups partition the ids, each group is
// ascending, has the product of the freed extents as size, and its members
// agree on every fixed axis.
TEST(PlacementTest, SubGroupsPartitionProperty) {
  const std::vector<int64_t> h = {2, 3, 2};
  const Placement p = *Placement::Make(DeviceType::kCpu,
                                       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, h);
  for (MeshAxisMask mask = 0; mask < 8; ++mask) {
    int64_t size = 1;
    for (int a = 0; a < 3; ++a) size *= (mask & AxisBit(a)) ? h[a] : 1;
    std::set<int64_t> seen;
    int64_t previous_first = -1;
    for (const std::vector<int64_t>& g : p.SubGroups(mask)) {
      ASSERT_EQ(static_cast<int64_t>(g.size()), size) << "mask " << mask;
      EXPECT_GT(g.front(), previous_first) << "mask " << mask;
      previous_first = g.front();
      EXPECT_TRUE(std::is_sorted(g.begin(), g.end())) << "mask " << mask;
      for (int64_t id : g) {
        EXPECT_TRUE(seen.insert(id).second) << "id " << id << " twice, mask " << mask;
        EXPECT_EQ(p.SubGroup(id, mask), g) << "mask " << mask;
        for (int a = 0; a < 3; ++a) {
          if (!(mask & AxisBit(a))) {
            EXPECT_EQ(p.CoordinateOf(id)[a], p.CoordinateOf(g.front())[a]);
          }
        }
      }
    }
    EXPECT_EQ(seen.size(), 12u) << "mask " << mask;
  }
}

// -------------------------------------------------------------------- errors

TEST(PlacementTest, BadTextIsInvalidArgumentNamingTheValue) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case kCases[] = {
      {"", "empty placement"},
      {"   ", "empty placement"},
      {"cpu:", "'cpu:'"},
      {"cpu: [2]", "'cpu: [2]'"},
      {"tpu:0-3", "tpu"},
      {"cpu:3-1", "3-1"},
      {"cpu0-3", "cpu0-3"},
      {"cpu:0,0", "rank 0"},
      {"cpu:0-3,2", "rank 2"},
      {"cpu:0-3 [3]", "[3]"},
      {"cpu:0-3 [2,3]", "[2,3]"},
      {"cpu:0-3 [0,4]", "extent 0"},
      {"cpu:0-3 [-2,-2]", "'-2'"},
      {"cpu:0-3 [2,2", "cpu:0-3 [2,2"},
      {"cpu:0-3 []", "cpu:0-3 []"},
      {"cpu:a", "'a'"},
      {"cpu:0-1-2", "0-1-2"},
      {"cpu:-1", "cpu:-1"},
      {"cpu:0-70000", "65536"},
      {"cpu:0 [1,1,1,1,1,1,1,1,1]", "[1,1,1,1,1,1,1,1,1]"},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<Placement> p = Placement::Parse(c.text);
    ASSERT_FALSE(p.ok()) << "'" << c.text << "' parsed as " << p->ToString();
    EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument)) << c.text;
    EXPECT_THAT(std::string(p.status().message()), HasSubstr(c.needle)) << c.text;
  }
}

TEST(PlacementTest, MakeErrors) {
  struct Case {
    std::vector<int64_t> ranks;
    std::vector<int64_t> hierarchy;
    const char* needle;
  };
  const Case kCases[] = {
      {{}, {}, "no ranks"},
      {{0, 1, 1}, {}, "rank 1"},
      {{-1, 0}, {}, "-1"},
      {{0, 1, 2, 3}, {2, 0}, "extent 0"},
      {{0, 1, 2, 3}, {-4}, "extent -4"},
      {{0, 1, 2, 3}, {-2, -2}, "extent -2"},
      {{0, 1, 2, 3, 4, 5}, {2, 2}, "[2,2]"},
      {{0, 1, 2, 3}, {8}, "[8]"},
      {{0, 1}, {2, int64_t{1} << 62}, "[2,4611686018427387904]"},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<Placement> p = Placement::Make(DeviceType::kCpu, c.ranks, c.hierarchy);
    ASSERT_FALSE(p.ok()) << c.needle << " accepted as " << p->ToString();
    EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument)) << c.needle;
    EXPECT_THAT(std::string(p.status().message()), HasSubstr(c.needle));
  }
}

// The hierarchy product must not overflow: [4, 2^62+1] wraps to 4 in int64.
TEST(PlacementTest, HierarchyProductOverflowIsRejected) {
  absl::StatusOr<Placement> p = Placement::Make(
      DeviceType::kCpu, {0, 1, 2, 3}, {4, (int64_t{1} << 62) + 1});
  ASSERT_FALSE(p.ok()) << "accepted as " << p->ToString();
  EXPECT_THAT(p, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("4611686018427387905"));
}

}  // namespace
}  // namespace oneflow_sbp
