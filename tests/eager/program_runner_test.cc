// Running a solved program plan through the eager interpreter: the plan's
// signatures are the ones that run, the executor moves exactly the bytes the
// cost model priced, and the planned and greedy choices compute the same
// outputs. Failure paths: an assignment that does not fit the program, and a
// required signature that inference cannot honour.
#include "eager/program_runner.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <vector>

#include "eager/apply.h"
#include "gmock/gmock.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/tensor_difference.h"
#include "ops/builtin_ops.h"
#include "comm/inprocess_world.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::eager {
namespace {

using ::testing::HasSubstr;

engine::Engine& Eng() { return **testing::EngineFor(); }

Placement P(const char* text) { return *Placement::Parse(text); }

struct AllRanks {
  ProgramRunResult rank0;
  int64_t bytes_received = 0;
  std::vector<absl::Status> statuses;
};

// Runs the program on every rank; rank 0's result and the sum of every
// rank's received bytes.
AllRanks RunEverywhere(const graph::Program& program, const graph::Assignment& a,
                       ProgramRunMode mode, uint64_t seed = 7) {
  AllRanks all;
  std::mutex mu;
  const int world = static_cast<int>(program.placement().parallel_num());
  absl::StatusOr<std::vector<absl::Status>> ran =
      comm::RunRanks(world, [&](comm::Communicator& comm) -> absl::Status {
        EagerContext ctx(Eng(), comm);
        ProgramRunOptions options;
        options.seed = seed;
        absl::StatusOr<ProgramRunResult> r = RunProgram(ctx, program, a, mode, options);
        if (!r.ok()) return r.status();
        std::lock_guard<std::mutex> lock(mu);
        all.bytes_received += r->traffic.bytes_received;
        if (comm.rank() == 0) all.rank0 = *std::move(r);
        return absl::OkStatus();
      });
  EXPECT_TRUE(ran.ok()) << ran.status();
  if (ran.ok()) all.statuses = *ran;
  return all;
}

// Max |a - b| relative to max(1, max |b|) over every output.
double MaxRelativeDiff(const std::vector<LocalTensor>& a, const std::vector<LocalTensor>& b) {
  return MaxRelativeDifference(a, b, /*scale_floor=*/1);
}

void ExpectAllOk(const AllRanks& r) {
  ASSERT_FALSE(r.statuses.empty());
  for (size_t i = 0; i < r.statuses.size(); ++i) {
    EXPECT_TRUE(r.statuses[i].ok()) << "rank " << i << ": " << r.statuses[i];
  }
}

// The plan and the greedy baseline both run as predicted and agree.
void ExpectPlanRunsAsPriced(const graph::Program& program) {
  absl::StatusOr<graph::ProgramPlan> plan = graph::PlanProgram(program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();

  const AllRanks planned = RunEverywhere(program, plan->chosen, ProgramRunMode::kFollowPlan);
  ExpectAllOk(planned);
  EXPECT_EQ(planned.rank0.signatures, plan->chosen.op_signatures);
  EXPECT_EQ(planned.bytes_received, plan->costs.comm_bytes);

  const AllRanks greedy = RunEverywhere(program, plan->greedy, ProgramRunMode::kEagerInference);
  ExpectAllOk(greedy);
  EXPECT_EQ(greedy.rank0.signatures, plan->greedy.op_signatures);
  EXPECT_EQ(greedy.bytes_received, plan->greedy_costs.comm_bytes);

  ASSERT_EQ(planned.rank0.outputs.size(), program.outputs().size());
  ASSERT_EQ(greedy.rank0.outputs.size(), program.outputs().size());
  EXPECT_LE(MaxRelativeDiff(planned.rank0.outputs, greedy.rank0.outputs), 1e-4);
}

TEST(RunProgram, MegatronMlpPlanRunsAsPriced) {
  graph::MlpConfig c;
  c.batch = 2;
  ExpectPlanRunsAsPriced(*graph::MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), c));
}

TEST(RunProgram, MlpOnOneAxisRunsAsPriced) {
  graph::MlpConfig c;
  c.batch = 4;
  c.hidden = 64;
  c.ffn = 256;
  c.x_nd_sbp = "S(0)";
  c.y_nd_sbp = "S(0)";
  ExpectPlanRunsAsPriced(*graph::MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-1 [2]"), c));
}

TEST(RunProgram, SameSeedSameOutputsAnyLayout) {
  graph::MlpConfig c;
  c.batch = 2;
  const graph::Program program =
      *graph::MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), c);
  absl::StatusOr<graph::ProgramPlan> plan = graph::PlanProgram(program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const AllRanks a = RunEverywhere(program, plan->chosen, ProgramRunMode::kFollowPlan, 11);
  const AllRanks b = RunEverywhere(program, plan->chosen, ProgramRunMode::kFollowPlan, 11);
  const AllRanks other_seed = RunEverywhere(program, plan->chosen, ProgramRunMode::kFollowPlan, 12);
  ExpectAllOk(a);
  EXPECT_EQ(MaxRelativeDiff(a.rank0.outputs, b.rank0.outputs), 0);
  EXPECT_GT(MaxRelativeDiff(a.rank0.outputs, other_seed.rank0.outputs), 0);
}

TEST(RunProgram, AssignmentThatDoesNotFitIsInvalidArgument) {
  graph::MlpConfig c;
  c.batch = 2;
  const graph::Program program =
      *graph::MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), c);
  absl::StatusOr<graph::ProgramPlan> plan = graph::PlanProgram(program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();

  graph::Assignment short_ops = plan->chosen;
  short_ops.op_signatures.pop_back();
  const AllRanks r = RunEverywhere(program, short_ops, ProgramRunMode::kFollowPlan);
  for (const absl::Status& s : r.statuses) {
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
  }

  graph::Assignment no_free = plan->chosen;
  no_free.free_layouts.clear();
  if (!plan->chosen.free_layouts.empty()) {
    const AllRanks f = RunEverywhere(program, no_free, ProgramRunMode::kFollowPlan);
    for (const absl::Status& s : f.statuses) {
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
    }
  }
}

// A required signature that is not among the op's candidates cannot be
// honoured: every rank fails (kInvalidArgument when no candidate survives the
// constraints, kFailedPrecondition when inference picks another one; peers
// of a failed rank may see kAborted) naming the op; no rank hangs.
TEST(RunProgram, SignatureInferenceCannotHonourIsFailedPrecondition) {
  graph::MlpConfig c;
  c.batch = 2;
  const graph::Program program =
      *graph::MlpProgram(ops::BuiltinOpRegistry(), P("cpu:0-3 [2,2]"), c);
  absl::StatusOr<graph::ProgramPlan> plan = graph::PlanProgram(program, Eng(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  graph::Assignment bad = plan->chosen;
  // Every blob of the first op as (P, P): a matmul never produces P from P
  // on both inputs.
  NdSbp pp = *NdSbp::Parse("(P,P)");
  for (NdSbp& nd : bad.op_signatures[0]) nd = pp;
  const AllRanks r = RunEverywhere(program, bad, ProgramRunMode::kFollowPlan);
  ASSERT_FALSE(r.statuses.empty());
  bool named = false;
  for (const absl::Status& s : r.statuses) {
    EXPECT_FALSE(s.ok());
    if (s.code() != absl::StatusCode::kAborted) {
      EXPECT_TRUE(s.code() == absl::StatusCode::kFailedPrecondition ||
                  s.code() == absl::StatusCode::kInvalidArgument)
          << s;
      named = true;
      EXPECT_THAT(std::string(s.message()), HasSubstr(program.ops()[0].label));
    }
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace oneflow_sbp::eager
