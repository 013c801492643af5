// Copy costs (SPEC.md §2 and §4): the 1-D selection cost table and the
// `cat` example, the partial penalty, the per-axis cost c1, and OneFlow's
// eager N-D cost: the §4.5 table, the §3 relu example, the second penalty,
// the same-dim surcharge, other hierarchies and devices, requires_same_sbp
// and errors.
#include <cfloat>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/copy_cost.h"
#include "oneflow_sbp/values/hierarchy_reduction.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/sbp_parallel.h"
#include "oneflow_sbp/values/shape.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using testing::Nd;

const SbpParallel kB = SbpParallel::Broadcast();
const SbpParallel kP = SbpParallel::PartialSum();
const SbpParallel kS0 = SbpParallel::Split(0);
const SbpParallel kS1 = SbpParallel::Split(1);

constexpr double kFltMax = 3.4028234663852886e38;
constexpr double k2Pow63 = 9223372036854775808.0;

// OneFlow's policy numbers (1, 2; anything else forbids P) as the enum.
PartialPenalty Penalty(int policy) {
  return policy == 1 ? PartialPenalty::kConstant
         : policy == 2 ? PartialPenalty::kProportional
                       : PartialPenalty::kForbidden;
}

// The cost functions with unsupported shown as OneFlow's FLT_MAX, so the
// numbers below read as in SPEC.md.
double AxisCost(SbpParallel a, SbpParallel b, double bytes, bool same_devices, int64_t np,
                int64_t nc, int policy) {
  return OneFlowAxisCost(a, b, bytes, same_devices, np, nc, Penalty(policy)).ValueOrFltMax();
}

absl::StatusOr<double> EagerNdCost(const NdSbp& in, const NdSbp& out,
                                   std::vector<int64_t> hin, std::vector<int64_t> hout,
                                   bool same_devices, const Shape& shape, double bytes,
                                   bool requires_same, int policy) {
  absl::StatusOr<CopyCost> c = OneFlowEagerNdCost(in, out, hin, hout, same_devices, shape,
                                                  bytes, requires_same, Penalty(policy));
  if (!c.ok()) return c.status();
  return c->ValueOrFltMax();
}

// Same devices, same hierarchy, penalty policy 2, boxing allowed.
double Cost(const std::string& in, const std::string& out, std::vector<int64_t> h,
            const Shape& shape, double bytes, int policy = 2) {
  absl::StatusOr<double> c =
      EagerNdCost(Nd(in), Nd(out), h, h, true, shape, bytes, false, policy);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : -1;
}

double CostAcross(const std::string& in, const std::string& out, std::vector<int64_t> hin,
                  std::vector<int64_t> hout, bool same_devices, const Shape& shape,
                  double bytes) {
  absl::StatusOr<double> c = EagerNdCost(Nd(in), Nd(out), hin, hout, same_devices,
                                                shape, bytes, false, 2);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : -1;
}

// ------------------------------------------------------------ 1-D (SPEC §2)

TEST(OneFlow1DCopyCostTest, TableRows) {
  const double t = 96;
  // equal
  EXPECT_EQ(OneFlow1DCopyCost(kS0, kS0, t), 0);
  EXPECT_EQ(OneFlow1DCopyCost(kB, kB, t), 0);
  EXPECT_EQ(OneFlow1DCopyCost(kP, kP, t), 0);
  // anything -> P
  EXPECT_EQ(OneFlow1DCopyCost(kB, kP, t), k2Pow63);
  EXPECT_EQ(OneFlow1DCopyCost(kS1, kP, t), k2Pow63);
  EXPECT_EQ(OneFlow1DCopyCost(kS0, kP, 1e30), 9223372036854775808.0);
  // B -> S(k)
  EXPECT_EQ(OneFlow1DCopyCost(kB, kS0, t), 2147483647.0);
  EXPECT_EQ(OneFlow1DCopyCost(kB, kS1, 1e12), 2147483647.0);
  // other changes: T
  EXPECT_EQ(OneFlow1DCopyCost(kS0, kS1, t), t);
  EXPECT_EQ(OneFlow1DCopyCost(kS1, kS0, t), t);
  EXPECT_EQ(OneFlow1DCopyCost(kS0, kB, t), t);
  EXPECT_EQ(OneFlow1DCopyCost(kP, kS1, t), t);
  EXPECT_EQ(OneFlow1DCopyCost(kP, kB, t), t);
  EXPECT_EQ(OneFlow1DCopyCost(kP, kB, 3e9), 3e9);  // more than B -> S above 2 GiB
}

TEST(OneFlow1DCopyCostTest, CatWorkedExample) {
  // in_0 f32[6,4]:S(0) T=96, in_1 f32[6,2]:S(1) T=48, in_2 f32[6,5]:B T=120.
  const SbpParallel prod[3] = {kS0, kS1, kB};
  const double bytes[3] = {96, 48, 120};
  auto sum = [&](SbpParallel cand) {
    double s = 0;
    for (int i = 0; i < 3; ++i) s += OneFlow1DCopyCost(prod[i], cand, bytes[i]);
    return s;
  };
  EXPECT_EQ(sum(kS0), 2147483695.0);
  EXPECT_EQ(sum(kP), 3 * k2Pow63);
  EXPECT_EQ(sum(kB), 144.0);
}

// ----------------------------------------------------------------- Penalty

TEST(PartialPenaltyTest, Policies) {
  EXPECT_EQ(PartialConsumerPenalty(480, 6, 6, PartialPenalty::kConstant), CopyCost(1.0));
  EXPECT_EQ(PartialConsumerPenalty(480, 6, 6, PartialPenalty::kProportional),
            CopyCost(4.0 * 480 * 12));  // 8·T·N = 23040
  EXPECT_EQ(PartialConsumerPenalty(480, 2, 3, PartialPenalty::kProportional), CopyCost(9600.0));
  // OneFlow's "any other policy": FLT_MAX there, explicitly unsupported here.
  EXPECT_FALSE(PartialConsumerPenalty(480, 6, 6, PartialPenalty::kForbidden).supported());
  EXPECT_EQ(PartialConsumerPenalty(480, 6, 6, PartialPenalty::kForbidden).ValueOrFltMax(),
            kFltMax);
  EXPECT_EQ(kMaxValidCost, 2.7222587731082309e38);
}

TEST(PartialPenaltyTest, NumbersAreOneFlows) {
  EXPECT_EQ(*PartialPenaltyFromNumber(1), PartialPenalty::kConstant);
  EXPECT_EQ(*PartialPenaltyFromNumber(2), PartialPenalty::kProportional);
  EXPECT_EQ(*PartialPenaltyFromNumber(3), PartialPenalty::kForbidden);
  for (int bad : {0, 4, 99, -1}) {
    EXPECT_THAT(PartialPenaltyFromNumber(bad), StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

TEST(CopyCostTest, UnsupportedAbsorbsSums) {
  const CopyCost u = CopyCost::Unsupported();
  EXPECT_FALSE((CopyCost(5) + u).supported());
  EXPECT_FALSE((u + CopyCost(5)).supported());
  EXPECT_EQ((CopyCost(5) + CopyCost(7)).value(), 12);
  EXPECT_NE(u, CopyCost(0));
  EXPECT_EQ(u.ValueOrFltMax(), kFltMax);
}

// ------------------------------------------------------------ c1 (SPEC §4.2)

TEST(OneFlowAxisCostTest, SameDevicesEqualCounts) {
  const double t = 480;
  auto c1 = [&](SbpParallel a, SbpParallel b, int policy = 2) {
    return AxisCost(a, b, t, true, 6, 6, policy);
  };
  EXPECT_EQ(c1(kS0, kS0), 0);
  EXPECT_EQ(c1(kB, kB), 0);
  EXPECT_EQ(c1(kP, kP), 0);  // a == b wins over b == P
  EXPECT_EQ(c1(kB, kP), 23040);
  EXPECT_EQ(c1(kS1, kP), 23040);
  EXPECT_EQ(c1(kS1, kP, 1), 1);
  EXPECT_EQ(c1(kS1, kP, 7), kFltMax);
  EXPECT_EQ(c1(kB, kS0), 1.0);
  EXPECT_EQ(c1(kB, kS1), 1.0);
  EXPECT_EQ(c1(kS0, kS1), 400);  // T·5/6
  EXPECT_EQ(c1(kS1, kS0), 400);
  EXPECT_EQ(c1(kP, kS0), 2400);  // T·5
  EXPECT_EQ(c1(kS0, kB), 2400);
  EXPECT_EQ(c1(kP, kB), 4800);  // 2·T·5
  EXPECT_EQ(AxisCost(kS0, kS1, 480, true, 4, 4, 2), 360);
}

TEST(OneFlowAxisCostTest, OtherwiseFormula) {
  // T + [b==B](nc-1)T + [a==P](np-1)T + [b==P]·Penalty; no a == b shortcut.
  const double t = 480;
  for (bool same : {true, false}) {
    const int64_t np = 2, nc = 3;
    EXPECT_EQ(AxisCost(kS0, kS1, t, same, np, nc, 2), t);
    EXPECT_EQ(AxisCost(kB, kS0, t, same, np, nc, 2), t);
    EXPECT_EQ(AxisCost(kS0, kS0, t, same, np, nc, 2), t);
    EXPECT_EQ(AxisCost(kB, kB, t, same, np, nc, 2), 3 * t);
    EXPECT_EQ(AxisCost(kS0, kB, t, same, np, nc, 2), 3 * t);
    EXPECT_EQ(AxisCost(kP, kS0, t, same, np, nc, 2), 2 * t);
    EXPECT_EQ(AxisCost(kP, kB, t, same, np, nc, 2), 4 * t);
    EXPECT_EQ(AxisCost(kP, kP, t, same, np, nc, 2), 2 * t + 4 * t * 5);
    EXPECT_EQ(AxisCost(kB, kP, t, same, np, nc, 1), t + 1);
  }
  // Different devices with equal counts: still the otherwise formula.
  EXPECT_EQ(AxisCost(kS0, kS0, t, false, 6, 6, 2), t);
  EXPECT_EQ(AxisCost(kB, kS0, t, false, 6, 6, 2), t);
  EXPECT_EQ(AxisCost(kP, kB, t, false, 6, 6, 2), 11 * t);
  EXPECT_EQ(AxisCost(kS1, kP, t, false, 6, 6, 2), t + 4 * t * 12);
}

// ------------------------------------------------- Eager N-D (SPEC §4.4-4.5)

TEST(OneFlowEagerNdCostTest, WorkedExampleTable) {
  const Shape s{12, 10};
  const double t = 480;
  EXPECT_EQ(Cost("(S(0),B)", "(S(0),S(1))", {2, 3}, s, t), 2);
  EXPECT_EQ(Cost("(P,S(1))", "(S(0),S(1))", {2, 3}, s, t), 2401);
  EXPECT_EQ(Cost("(P,S(1))", "(S(1),S(1))", {2, 3}, s, t), 2881);
  EXPECT_EQ(Cost("(B,S(0))", "(S(0),S(0))", {2, 3}, s, t), 482);
  EXPECT_EQ(Cost("(P,B)", "(B,B)", {2, 3}, s, t), 4801);
  EXPECT_EQ(Cost("(P,P)", "(B,B)", {2, 3}, s, t), 4800);
  EXPECT_EQ(Cost("(S(0),S(0))", "(B,B)", {2, 3}, s, t), 2400);
  EXPECT_EQ(Cost("(S(0),S(0))", "(B,B)", {2, 3}, Shape{13, 10}, 520), 2600);
  EXPECT_EQ(Cost("(S(0),S(0))", "(B,B)", {2, 3}, Shape{14, 10}, 560), 5601);
}

TEST(OneFlowEagerNdCostTest, ReluWorkedExampleFromPartialPartial) {
  // SPEC §3: h=(2,3), x f32[2,12], T=96, producer (P,P), final order.
  const Shape s{2, 12};
  const std::vector<std::pair<std::string, double>> rows = {
      {"(B,B)", 960},         // [6]: P->B, 10T
      {"(S(0),S(1))", 961},   // 2-D: 1 + 5T + 5T
      {"(S(0),B)", 1441},     // 1 + 5T + 10T
      {"(B,S(1))", 1441},     // 1 + 10T + 5T
      {"(S(1),S(1))", 480},   // 12 % 6 = 0 -> [6]: P->S1, 5T
      {"(S(1),B)", 1441}};
  for (const auto& [cand, want] : rows) {
    EXPECT_EQ(Cost("(P,P)", cand, {2, 3}, s, 96), want) << cand;
  }
}

TEST(OneFlowEagerNdCostTest, ToPartialPaysPenaltyTwiceOnlyWhenTwoDimensional) {
  const Shape s{12, 10};
  // 2-D: c1(B->P) = Penalty, plus the second penalty on the same axis.
  EXPECT_EQ(Cost("(S(0),B)", "(S(0),P)", {2, 3}, s, 480), 1 + 23040 + 23040);
  EXPECT_EQ(Cost("(S(0),B)", "(S(0),P)", {2, 3}, s, 480, 1), 3);
  EXPECT_GE(Cost("(S(0),B)", "(S(0),P)", {2, 3}, s, 480, 0), kFltMax);
  // Reduced to [6]: B->P, penalty once.
  EXPECT_EQ(Cost("(B,B)", "(P,P)", {2, 3}, s, 480), 23040);
  // P kept on an axis: no penalty.
  EXPECT_EQ(Cost("(P,B)", "(P,S(0))", {2, 3}, s, 480), 2);
  EXPECT_EQ(Cost("(P,P)", "(P,B)", {2, 3}, s, 480), 4801);
}

TEST(OneFlowEagerNdCostTest, SameDimSplitSurchargeLooksAtEarlierAxesOnly) {
  const Shape s{12, 10};
  // Kept S0 on axis 1; axis 0 changed to S0 (ro[0] == ri[1]).
  EXPECT_EQ(Cost("(S(1),S(0))", "(S(0),S(0))", {2, 3}, s, 480), 1 + 400 + 480);
  // ri[0] == ri[1]: (S0,S0) on 14 rows stays 2-D.
  EXPECT_EQ(Cost("(S(0),S(0))", "(B,S(0))", {2, 3}, Shape{14, 10}, 560), 1 + 2800 + 560);
  EXPECT_EQ(Cost("(S(0),S(1))", "(S(1),S(1))", {2, 3}, s, 480), 1 + 400 + 480);
  // The kept split is on axis 0; no earlier axis: no surcharge.
  EXPECT_EQ(Cost("(S(1),S(0))", "(S(1),S(1))", {2, 3}, s, 480), 1 + 400);
  EXPECT_EQ(Cost("(S(0),B)", "(S(0),S(0))", {2, 3}, s, 480), 2);
  // Kept split differs from the changed axis' SBPs.
  EXPECT_EQ(Cost("(S(0),S(1))", "(B,S(1))", {2, 3}, s, 480), 1 + 2400);
}

TEST(OneFlowEagerNdCostTest, ThreeAxisHierarchyUsesTotalDeviceCount) {
  const Shape s{8, 8};
  // [4,2]:(S0,B)->(S0,S1): 1 + 0 + 1.
  EXPECT_EQ(Cost("(S(0),S(0),B)", "(S(0),S(0),S(1))", {2, 2, 2}, s, 256), 2);
  EXPECT_EQ(Cost("(P,P,P)", "(B,B,B)", {2, 2, 2}, s, 256), 2 * 256 * 7);
  // 3-D, N = 8 per axis: 1 + (S0->S1: 256·7/8) + 0 + (P->B: 2·256·7).
  EXPECT_EQ(Cost("(S(0),B,P)", "(S(1),B,B)", {2, 2, 2}, s, 256), 1 + 224 + 3584);
}

TEST(OneFlowEagerNdCostTest, DifferentHierarchiesOrDevices) {
  const Shape s{12, 10};
  // Lift: (S0) on [6] == (S0,S0) on [2,3]; then 1 + 0 + c1(S0->S1, 6).
  EXPECT_EQ(CostAcross("(S(0))", "(S(0),S(1))", {6}, {2, 3}, true, s, 480), 401);
  EXPECT_EQ(CostAcross("(P)", "(P,S(0))", {6}, {2, 3}, true, s, 480), 2401);
  // No lift on 14 rows: 1 + T·1 (no P) + T·1 (no B).
  EXPECT_EQ(CostAcross("(S(0))", "(S(0),S(1))", {6}, {2, 3}, true, Shape{14, 10}, 560),
            1121);
  // Both reduce to [6]: c1 on 1 axis, or 0 when equal.
  EXPECT_EQ(CostAcross("(B)", "(B,B)", {6}, {2, 3}, true, s, 480), 0);
  EXPECT_EQ(CostAcross("(B,S(0))", "(S(0))", {1, 6}, {6}, true, s, 480), 0);
  EXPECT_EQ(CostAcross("(P)", "(B,B)", {6}, {2, 3}, true, s, 480), 4800);
  // Rank sum 4: 1 + T·Π{P axes of in} + penalties + T·Π{B axes of out}.
  EXPECT_EQ(CostAcross("(P,S(1))", "(B,S(0))", {2, 3}, {3, 2}, true, s, 480), 1 + 960 + 1440);
  EXPECT_EQ(CostAcross("(S(0),S(1))", "(P,B)", {2, 3}, {3, 2}, true, s, 480),
            1 + 480 + 23040 + 960);
  // Alone, each side reduces to [6]: the 1-axis c1, no +1.
  EXPECT_EQ(CostAcross("(P,P)", "(B,B)", {2, 3}, {3, 2}, true, s, 480), 4800);
  // (B) on [6] is lifted to (B,B) on [2,3]: 1 + c1(P->B) + c1(S1->B).
  EXPECT_EQ(CostAcross("(P,S(1))", "(B,B)", {2, 3}, {3, 2}, true, s, 480), 1 + 4800 + 2400);
  // Different devices, same hierarchy.
  EXPECT_EQ(CostAcross("(P,P)", "(B,B)", {2, 3}, {2, 3}, false, s, 480), 11 * 480);
  EXPECT_EQ(CostAcross("(P,S(1))", "(S(0),B)", {2, 3}, {2, 3}, false, s, 480), 1 + 960 + 1440);
  // Equal layouts on different devices are not free.
  EXPECT_EQ(CostAcross("(S(0),S(1))", "(S(0),S(1))", {2, 3}, {2, 3}, false, s, 480), 961);
  EXPECT_EQ(CostAcross("(B,B)", "(B,B)", {2, 3}, {2, 3}, false, s, 480), 6 * 480);
}

TEST(OneFlowEagerNdCostTest, RequiresSameSbp) {
  const Shape s{12, 10};
  auto cost = [&](const std::string& in, const std::string& out, std::vector<int64_t> hin,
                  std::vector<int64_t> hout, bool same) {
    absl::StatusOr<double> c =
        EagerNdCost(Nd(in), Nd(out), hin, hout, same, s, 480, true, 2);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : -1;
  };
  EXPECT_EQ(cost("(S(0),S(0))", "(B,B)", {2, 3}, {2, 3}, true), kFltMax);
  EXPECT_EQ(cost("(S(0),S(0))", "(S(0),S(0))", {2, 3}, {2, 3}, true), 0);
  // Raw-different, reduced-equal: size-1 axis dropped.
  EXPECT_EQ(cost("(B,S(0))", "(P,S(0))", {1, 6}, {1, 6}, true), 0);
  EXPECT_EQ(cost("(B,S(0))", "(S(0))", {1, 6}, {6}, true), 0);
  EXPECT_EQ(cost("(S(0))", "(S(0),S(0))", {6}, {2, 3}, true), 0);  // 12 % 6 = 0
  // Equal, but other devices.
  EXPECT_EQ(cost("(S(0),S(0))", "(S(0),S(0))", {2, 3}, {2, 3}, false), kFltMax);

  // Exhaustive on [2,3]: 0 iff the jointly reduced layouts are equal, else
  // FLT_MAX; without the flag, 0 exactly then and > 0 otherwise.
  const std::vector<std::string> sbps = {"B", "P", "S(0)", "S(1)"};
  for (const Shape& shape : {Shape{12, 10}, Shape{14, 13}}) {
    for (int a = 0; a < 16; ++a) {
      for (int b = 0; b < 16; ++b) {
        const NdSbp in = Nd(sbps[a / 4] + "," + sbps[a % 4]);
        const NdSbp out = Nd(sbps[b / 4] + "," + sbps[b % 4]);
        const InOutReduced r = InOutReduce({2, 3}, {2, 3}, in, out, shape);
        const bool equal = r.in == r.out;
        auto strict = EagerNdCost(in, out, {2, 3}, {2, 3}, true, shape, 480, true, 2);
        auto boxed = EagerNdCost(in, out, {2, 3}, {2, 3}, true, shape, 480, false, 2);
        ASSERT_TRUE(strict.ok() && boxed.ok());
        EXPECT_EQ(*strict, equal ? 0 : kFltMax) << in.ToString() << "->" << out.ToString();
        if (equal) {
          EXPECT_EQ(*boxed, 0) << in.ToString() << "->" << out.ToString();
        } else {
          EXPECT_GT(*boxed, 0) << in.ToString() << "->" << out.ToString();
        }
      }
    }
  }
}

TEST(OneFlowEagerNdCostTest, EmptyOrUnsetNdSbpIsInvalidArgument) {
  const Shape s{12, 10};
  const std::vector<int64_t> h = {2, 3};
  const NdSbp bb = Nd("(B,B)");
  const NdSbp unset{kB, SbpParallel()};
  for (bool requires_same : {false, true}) {
    for (const auto& [in, out] : std::vector<std::pair<NdSbp, NdSbp>>{
             {NdSbp(), bb}, {bb, NdSbp()}, {unset, bb}, {bb, unset}, {unset, unset}}) {
      absl::StatusOr<double> c =
          EagerNdCost(in, out, h, h, true, s, 480, requires_same, 2);
      EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument))
          << in.ToString() << "->" << out.ToString();
    }
  }
  absl::StatusOr<double> one =
      EagerNdCost(NdSbp(), NdSbp(), {6}, {6}, true, s, 480, false, 2);
  EXPECT_THAT(one, StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace oneflow_sbp
