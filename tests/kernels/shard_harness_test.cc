// The sharded-execution harness: distribution (S slices, B copies, exact
// integer P addends), assembly (placing, B agreement, P sums), round trips
// on 1-D and N-D meshes, running kernels per rank, and that it catches a
// kernel which ignores where its shard sits.
#include "kernels/shard_harness.h"

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/kernel_registry.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using kernels::AssembleTensor;
using kernels::CompareTensors;
using kernels::DistributeTensor;
using kernels::HarnessOptions;
using kernels::KernelContext;
using kernels::KernelRegistry;
using kernels::RunReference;
using kernels::RunSharded;
using ::testing::HasSubstr;

Placement P(const std::string& text) { return *Placement::Parse(text); }
NdSbp Nd(const std::string& text) { return *NdSbp::Parse(text); }

TEST(ShardHarness, SplitGivesBalancedSlices) {
  // 7 rows over 3 ranks: 3, 2, 2 (SPEC.md §1.5).
  LocalTensor full = IntTensor(DataType::kFloat32, {7, 2}, 1);
  absl::StatusOr<std::vector<LocalTensor>> l = DistributeTensor(full, Nd("S(0)"), P("cpu:0-2"));
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].dims(), (LocalDims{3, 2}));
  EXPECT_EQ((*l)[1].dims(), (LocalDims{2, 2}));
  EXPECT_EQ((*l)[2].dims(), (LocalDims{2, 2}));
  EXPECT_EQ((*l)[1].GetDouble(0), full.GetDouble(6));
  EXPECT_EQ((*l)[2].GetDouble(3), full.GetDouble(13));
}

TEST(ShardHarness, EmptyShardsWhenTheExtentIsSmallerThanTheMesh) {
  LocalTensor full = IntTensor(DataType::kInt64, {2, 3}, 2);
  absl::StatusOr<std::vector<LocalTensor>> l = DistributeTensor(full, Nd("S(0)"), P("cpu:0-2"));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ((*l)[2].dims(), (LocalDims{0, 3}));
  absl::StatusOr<LocalTensor> back =
      AssembleTensor(*l, TensorDesc{Shape{2, 3}, DataType::kInt64}, Nd("S(0)"), P("cpu:0-2"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(ExactlyEqual(*back, full)) << DescribeMismatch(*back, full);
}

// One rank's local tensor alone (sbp boxing --execute makes only its own).
TEST(ShardHarness, DistributeTensorToIsOneRanksLocal) {
  LocalTensor full = GridTensor(DataType::kFloat32, {4, 6}, 3);
  const Placement p = P("cpu:0-5 [2,3]");
  HarnessOptions o;
  o.seed = 7;
  for (const char* nd : {"(S(0),S(1))", "(P,S(1))", "(S(1),P)", "(B,P)", "(P(max),S(0))"}) {
    absl::StatusOr<std::vector<LocalTensor>> all = DistributeTensor(full, Nd(nd), p, o);
    ASSERT_TRUE(all.ok()) << nd << all.status();
    for (int64_t pid = 0; pid < p.parallel_num(); ++pid) {
      absl::StatusOr<LocalTensor> one = kernels::DistributeTensorTo(full, Nd(nd), p, pid, o);
      ASSERT_TRUE(one.ok()) << one.status();
      EXPECT_EQ(DescribeMismatch(*one, (*all)[pid]), "") << nd << " rank " << pid;
    }
  }
  EXPECT_FALSE(kernels::DistributeTensorTo(full, Nd("(S(0),B)"), p, 6, o).ok());
}

TEST(ShardHarness, PartialAddendsAreSmallIntegersThatSumExactly) {
  LocalTensor full = GridTensor(DataType::kFloat32, {4, 5}, 3);
  absl::StatusOr<std::vector<LocalTensor>> l = DistributeTensor(full, Nd("P"), P("cpu:0-2"));
  ASSERT_TRUE(l.ok()) << l.status();
  for (int64_t i = 0; i < full.elem_cnt(); ++i) {
    const double a1 = (*l)[1].GetDouble(i);
    const double a2 = (*l)[2].GetDouble(i);
    EXPECT_EQ(a1, static_cast<int>(a1));
    EXPECT_LE(std::abs(a1), 3);
    EXPECT_EQ((*l)[0].GetDouble(i) + a1 + a2, full.GetDouble(i));
  }
  // Not all addends are zero: the split exercises kernels.
  EXPECT_NE(DescribeMismatch((*l)[0], full), "");
}

TEST(ShardHarness, RoundTripsEveryLayoutOnMeshes) {
  const LocalTensor full = IntTensor(DataType::kFloat64, {5, 7}, 4);
  const TensorDesc desc{Shape{5, 7}, DataType::kFloat64};
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"cpu:0-2", {"S(0)", "S(1)", "B", "P"}},
      {"cpu:0-3 [2,2]", {"(S(0),S(1))", "(S(1),S(1))", "(P,S(0))", "(S(1),P)", "(P,P)",
                         "(B,P)", "(P,B)", "(B,S(0))", "(B,B)"}},
      {"cpu:0-5 [2,3]", {"(S(0),S(0))", "(P,S(1))", "(S(1),P)", "(P,P)", "(B,S(1))"}},
      {"cpu:0-7 [2,2,2]", {"(S(0),P,S(1))", "(P,B,P)", "(S(1),S(1),S(1))"}},
  };
  for (const auto& [placement, layouts] : cases) {
    for (const std::string& layout : layouts) {
      absl::StatusOr<std::vector<LocalTensor>> l =
          DistributeTensor(full, Nd(layout), P(placement));
      ASSERT_TRUE(l.ok()) << layout << ": " << l.status();
      absl::StatusOr<LocalTensor> back = AssembleTensor(*l, desc, Nd(layout), P(placement));
      ASSERT_TRUE(back.ok()) << layout << " on " << placement << ": " << back.status();
      EXPECT_TRUE(ExactlyEqual(*back, full))
          << layout << " on " << placement << ": " << DescribeMismatch(*back, full);
    }
  }
}

TEST(ShardHarness, BroadcastCopiesMustAgree) {
  LocalTensor full = IntTensor(DataType::kInt32, {3}, 5);
  std::vector<LocalTensor> l = *DistributeTensor(full, Nd("(S(0),B)"), P("cpu:0-3 [2,2]"));
  l[3] = l[3].Clone();
  l[3].data<int32_t>()[0] += 1;
  absl::StatusOr<LocalTensor> back = AssembleTensor(
      l, TensorDesc{Shape{3}, DataType::kInt32}, Nd("(S(0),B)"), P("cpu:0-3 [2,2]"), "out_0");
  EXPECT_THAT(back, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(back.status().message()),
              HasSubstr("out_0 (S(0), B): ranks 3 and 2 hold broadcast copies that differ"));
}

TEST(ShardHarness, BadInputsAreErrors) {
  const LocalTensor b = BoolTensor({4}, 1);
  EXPECT_THAT(DistributeTensor(b, Nd("P"), P("cpu:0-1")),
            StatusIs(absl::StatusCode::kInvalidArgument));
  // 1 + 2^-7 has a full bf16 mantissa: most integer shifts round.
  const LocalTensor fine = *LocalTensor::Full(DataType::kBFloat16, {16}, 1.0078125);
  absl::Status s = DistributeTensor(fine, Nd("P"), P("cpu:0-2")).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(s.message()), HasSubstr("exactly"));
  EXPECT_THAT(DistributeTensor(b, Nd("S(1)"), P("cpu:0-1")),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(DistributeTensor(b, Nd("(S(0),B)"), P("cpu:0-1")),
            StatusIs(absl::StatusCode::kInvalidArgument));
  const LocalTensor empty = *LocalTensor::Zeros(DataType::kFloat32, {0});
  EXPECT_THAT(RunReference(CallOrDie("relu", 1), {empty}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RunReference(CallOrDie("relu", 1), {}),
            StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ShardHarness, RunsAKernelOnEveryRankAndAssembles) {
  // reduce_sum over dim 1 with dim 1 split on mesh axis 0 and dim 0 on
  // axis 1: each rank sums its block; the output is P on axis 0.
  const LocalTensor x = IntTensor(DataType::kFloat32, {5, 7}, 6);
  auto call = CallOrDie("reduce_sum", 1, {"axis=1"});
  const NdSbpSignature sig = {Nd("(S(1),S(0))"), Nd("(P,S(0))")};
  absl::StatusOr<std::vector<LocalTensor>> got = RunSharded(call, {x}, P("cpu:0-3 [2,2]"), sig);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<LocalTensor>> want = RunReference(call, {x});
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ((*want)[0].dims(), (LocalDims{5}));
  EXPECT_EQ(CompareTensors((*got)[0], (*want)[0], {0, 0}), "");
}

TEST(ShardHarness, KernelErrorsNameTheRank) {
  const LocalTensor x = IntTensor(DataType::kFloat32, {4, 3}, 7);
  auto call = CallOrDie("reduce_max", 1, {"axis=1"});
  // Not a rule candidate: a split reduced dim with a split output.
  const NdSbpSignature sig = {Nd("S(1)"), Nd("S(0)")};
  absl::Status s = RunSharded(call, {x}, P("cpu:0-1"), sig).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(s.message()), HasSubstr("rank 0 of cpu:0-1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("preallocated output_tensor_0 is f32[2]"));
}

// A slice kernel that copies local blocks and ignores the shard's global
// offset: right on one rank, wrong for x:S(1) -> y:P. The harness must see it.
absl::Status NaiveSliceKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  LocalTensor& y = ctx.output(0);
  y.SetZero();
  const std::vector<int64_t> start = ctx.Attr<std::vector<int64_t>>("start");
  for (int64_t r = 0; r < y.dim(0) && r < x.dim(0); ++r) {
    for (int64_t c = 0; c < y.dim(1) && start[1] + c < x.dim(1); ++c) {
      y.data<float>()[r * y.dim(1) + c] = x.data<float>()[r * x.dim(1) + start[1] + c];
    }
  }
  return absl::OkStatus();
}

TEST(ShardHarness, CatchesAKernelThatIgnoresItsOffset) {
  KernelRegistry naive;
  ASSERT_TRUE(naive.Register("slice", DeviceType::kCpu, NaiveSliceKernel).ok());
  HarnessOptions options;
  options.registry = &naive;
  const LocalTensor x = IntTensor(DataType::kFloat32, {4, 6}, 8);
  auto call = CallOrDie("slice", 1, {"start=0,1", "stop=4,5", "step=1,1"});
  absl::StatusOr<std::vector<LocalTensor>> want = RunReference(call, {x}, options);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunSharded(call, {x}, P("cpu:0-1"), {Nd("S(1)"), Nd("P")}, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NE(CompareTensors((*got)[0], (*want)[0], {0, 0}), "");
  // The real kernel agrees.
  absl::StatusOr<std::vector<LocalTensor>> real =
      RunSharded(call, {x}, P("cpu:0-1"), {Nd("S(1)"), Nd("P")});
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(CompareTensors((*real)[0], (*want)[0], {0, 0}), "");
}

absl::Status WritesNothing(KernelContext&) { return absl::OkStatus(); }

TEST(ShardHarness, PoisonShowsUnwrittenElements) {
  KernelRegistry lazy;
  ASSERT_TRUE(lazy.Register("identity", DeviceType::kCpu, WritesNothing).ok());
  HarnessOptions options;
  options.registry = &lazy;
  absl::StatusOr<std::vector<LocalTensor>> got = RunSharded(
      CallOrDie("identity", 1), {IntTensor(DataType::kFloat32, {3}, 1)}, P("cpu:0-1"),
      {Nd("S(0)"), Nd("S(0)")}, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::isnan((*got)[0].GetDouble(0)));
}

// reduce_sum over dim 1 that all-reduces its local row sums over the
// ranks splitting dim 1, so its output is whole (B) on those axes: a
// kernel that needs the harness's threads and world.
absl::Status AllReduceRowSums(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  LocalTensor& y = ctx.output(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, {x.dim(0)}, x.dtype()));
  for (int64_t r = 0; r < x.dim(0); ++r) {
    float sum = 0;
    for (int64_t c = 0; c < x.dim(1); ++c) sum += x.data<float>()[r * x.dim(1) + c];
    y.data<float>()[r] = sum;
  }
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<comm::Communicator> group, ctx.SplitGroup(0, 1));
  return ctx.Annotate(
      group->AllReduce(y.raw_data(), y.raw_data(), y.elem_cnt(), DataType::kFloat32));
}

TEST(ShardHarness, RanksAsThreadsGiveKernelsTheirGroup) {
  KernelRegistry reg;
  ASSERT_TRUE(reg.Register("reduce_sum", DeviceType::kCpu, AllReduceRowSums).ok());
  HarnessOptions options;
  options.registry = &reg;
  options.ranks_as_threads = true;
  const LocalTensor x = IntTensor(DataType::kFloat32, {5, 7}, 9);
  auto call = CallOrDie("reduce_sum", 1, {"axis=1"});
  absl::StatusOr<std::vector<LocalTensor>> want = RunReference(call, {x}, options);
  ASSERT_TRUE(want.ok()) << want.status();
  // 1-D, N-D (the group is one mesh row or the whole mesh), and a
  // placement whose ranks are not 0..n-1 (world ranks 0 and 2 idle).
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"cpu:0-2", "S(1)", "B"},
      {"cpu:0-3 [2,2]", "(S(0),S(1))", "(S(0),B)"},
      {"cpu:0-3 [2,2]", "(S(1),S(1))", "(B,B)"},
      {"cpu:0-5 [2,3]", "(S(1),B)", "(B,B)"},
      {"cpu:1,3", "S(1)", "B"}};
  for (const auto& [placement, in, out] : cases) {
    absl::StatusOr<std::vector<LocalTensor>> got =
        RunSharded(call, {x}, P(placement), {Nd(in), Nd(out)}, options);
    ASSERT_TRUE(got.ok()) << placement << " " << in << ": " << got.status();
    EXPECT_EQ(CompareTensors((*got)[0], (*want)[0], {0, 0}), "") << placement << " " << in;
  }
  // Sequentially there is no world: the kernel says what it needs.
  options.ranks_as_threads = false;
  absl::Status s = RunSharded(call, {x}, P("cpu:0-1"), {Nd("S(1)"), Nd("B")}, options).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(s.message()), HasSubstr("needs a communicator"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("input_tensor_0 f32[5,7] (S(1)) on cpu:0-1 splits dim 1"));
}

TEST(ShardHarness, ARankThatFailsIsReportedAndNobodyWaits) {
  // Rank 1 fails before the collective that ranks 0 and 2 wait in: they
  // see the world aborted at once (not after the 60 s timeout), and the
  // harness reports rank 1's own error, not their kAborted.
  KernelRegistry reg;
  ASSERT_TRUE(reg.Register("reduce_sum", DeviceType::kCpu, [](KernelContext& ctx) {
                   if (ctx.parallel_id() == 1) return ctx.InvalidArgument("rank 1 gives up");
                   return AllReduceRowSums(ctx);
                 }).ok());
  HarnessOptions options;
  options.registry = &reg;
  options.ranks_as_threads = true;
  options.collective_timeout = absl::Seconds(60);
  const absl::Time start = absl::Now();
  absl::Status s = RunSharded(CallOrDie("reduce_sum", 1, {"axis=1"}),
                              {IntTensor(DataType::kFloat32, {4, 6}, 1)}, P("cpu:0-2"),
                              {Nd("S(1)"), Nd("B")}, options)
                       .status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("rank 1 of cpu:0-2"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("rank 1 gives up"));
}

TEST(ShardHarness, SetWorldChecksThePosition) {
  absl::StatusOr<std::vector<absl::Status>> ranks =
      comm::RunRanks(2, [](comm::Communicator& world) -> absl::Status {
        const LocalTensor x = IntTensor(DataType::kFloat32, {2, 2}, 1);
        auto call = CallOrDie("relu", 1);
        const TensorDesc d{Shape{2, 2}, DataType::kFloat32};
        // This world rank as the OTHER parallel_id of cpu:0-1.
        OFS_ASSIGN_OR_RETURN(
            KernelContext ctx,
            KernelContext::Make(call, P("cpu:0-1"), 1 - world.rank(), {d, d},
                                {Nd("B"), Nd("B")}, {x}, {x.Clone()}));
        absl::Status s = ctx.SetWorld(&world);
        if (s.code() != absl::StatusCode::kInvalidArgument) {
          return absl::InternalError(absl::StrCat("SetWorld said: ", s.ToString()));
        }
        // A world too small for cpu:0-3 is refused too.
        OFS_ASSIGN_OR_RETURN(
            KernelContext ctx4,
            KernelContext::Make(call, P("cpu:0-3"), world.rank(), {d, d},
                                {Nd("B"), Nd("B")}, {x}, {x.Clone()}));
        s = ctx4.SetWorld(&world);
        if (s.code() != absl::StatusCode::kInvalidArgument) {
          return absl::InternalError(absl::StrCat("SetWorld (small world) said: ", s.ToString()));
        }
        return ctx4.SetWorld(nullptr);
      });
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  for (const absl::Status& s : *ranks) EXPECT_TRUE(s.ok()) << s;
}

TEST(ShardHarness, CompareTensorsUsesTolerances) {
  const LocalTensor a = Tensor(DataType::kFloat32, {2, 2}, {1, 2, 3, 4});
  const LocalTensor b = Tensor(DataType::kFloat32, {2, 2}, {1, 2, 3.5, 4.00001});
  EXPECT_EQ(CompareTensors(a, a, {0, 0}), "");
  EXPECT_EQ(CompareTensors(b, a, kernels::DefaultTolerance(DataType::kFloat32)),
            "1 of 4 elements differ; first at [1,0]: 3.5 vs 3");
  EXPECT_EQ(CompareTensors(a, Tensor(DataType::kFloat64, {2, 2}, {1, 2, 3, 4}), {1, 1}),
            "dtype f32 vs f64");
  EXPECT_EQ(kernels::DefaultTolerance(DataType::kInt64).atol, 0);
}

}  // namespace
}  // namespace oneflow_sbp::testing
