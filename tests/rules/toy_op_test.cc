// Adding an op is one record plus its kernel body: tests/rules/toy_ops.toml
// defines toy_scale (rule from the einsum generator, CPU kernel, backward)
// and toy_clamp_min (its own shape function and rule, CPU kernel, no
// backward), tests/rules/toy_*.cc hold their bodies, and op_family() in
// tests/BUILD makes the registration from the records. Linking the family
// registers the ops; this test infers, runs and differentiates them on
// real in-process ranks, and checks the registration's failure paths
// (toy_rules_test infers them with the rules layer alone).
#include <string>
#include <vector>

#include "eager/apply.h"
#include "eager/autograd.h"
#include "engine/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/kernel_registry.h"
#include "comm/inprocess_world.h"
#include "eager/tensor_layout.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"
#include "tests/rules/toy_family.h"
#include "tests/support/value_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using eager::EagerContext;
using eager::GlobalTensor;
using ::oneflow_sbp::matchers::IsOk;
using ::oneflow_sbp::matchers::StatusIs;
using ::testing::HasSubstr;

TEST(ToyOp, TheRecordsRegisterRulesKernelsAndBackward) {
  ASSERT_NE(Registry().Find("toy_scale"), nullptr);
  ASSERT_NE(Registry().Find("toy_clamp_min"), nullptr);
  EXPECT_EQ(Registry().Find("toy_scale")->doc(), "y = factor * x");
  EXPECT_THAT(kernels::KernelRegistry::Global().Find("toy_scale", DeviceType::kCpu).status(), IsOk());
  EXPECT_THAT(kernels::KernelRegistry::Global().Find("toy_clamp_min", DeviceType::kCpu).status(),
              IsOk());
  EXPECT_NE(eager::FindBackward("toy_scale"), nullptr);
  // "not written yet": no rule, and none was registered.
  EXPECT_EQ(eager::FindBackward("toy_clamp_min"), nullptr);
}

// The engine the inference tests use, whose registry has the toy ops.
engine::Engine& TheEngine() { return **EngineFor(); }

LocalTensor Values(const std::vector<int64_t>& dims, double offset) {
  LocalTensor t = *LocalTensor::Empty(DataType::kFloat32, dims);
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, offset + static_cast<double>(i % 7));
  return t;
}

absl::Status Expect(bool ok, const std::string& what) {
  return ok ? absl::OkStatus() : absl::InternalError(what);
}

// Forward on 4 ranks in a [2,2] layout, then backward: d(sum(3x))/dx = 3.
TEST(ToyOp, RunsShardedAndDifferentiates) {
  const Placement p = P("cpu:0-3 [2,2]");
  const LocalTensor xs = Values({4, 6}, -3);
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(4, [&](comm::Communicator& w) -> absl::Status {
    EagerContext ctx(TheEngine(), w);
    OFS_ASSIGN_OR_RETURN(GlobalTensor x, eager::FromFull(ctx, xs, p, Nd("(S(0),S(1))")));
    x.set_requires_grad(true);
    OFS_ASSIGN_OR_RETURN(GlobalTensor y, eager::Apply1(ctx, "toy_scale", {x},
                                                       eager::Attrs({{"factor", AttrValue(3.0)}})));
    OFS_ASSIGN_OR_RETURN(GlobalTensor c, eager::Apply1(ctx, "toy_clamp_min", {x}));
    OFS_ASSIGN_OR_RETURN(LocalTensor y_full, eager::ToFull(ctx, y));
    OFS_ASSIGN_OR_RETURN(LocalTensor c_full, eager::ToFull(ctx, c));
    for (int64_t i = 0; i < xs.elem_cnt(); ++i) {
      OFS_RETURN_IF_ERROR(Expect(y_full.GetDouble(i) == 3 * xs.GetDouble(i), "toy_scale"));
      OFS_RETURN_IF_ERROR(
          Expect(c_full.GetDouble(i) == std::max(0.0, xs.GetDouble(i)), "toy_clamp_min"));
    }
    OFS_ASSIGN_OR_RETURN(GlobalTensor loss,
                         eager::Apply1(ctx, "reduce_sum", {y},
                                       eager::Attrs({{"axis", AttrValue(std::vector<int64_t>{0, 1})}})));
    OFS_ASSIGN_OR_RETURN(GlobalTensor seed,
                         eager::FromFull(ctx, *LocalTensor::Full(DataType::kFloat32, {}, 1.0), p,
                                         Nd("(B,B)")));
    OFS_RETURN_IF_ERROR(eager::Backward(ctx, loss, seed));
    OFS_ASSIGN_OR_RETURN(LocalTensor g, eager::ToFull(ctx, x.grad()));
    for (int64_t i = 0; i < g.elem_cnt(); ++i) {
      OFS_RETURN_IF_ERROR(Expect(g.GetDouble(i) == 3, "the gradient of toy_scale"));
    }
    return absl::OkStatus();
  });
  ASSERT_THAT(ran.status(), IsOk());
  for (size_t r = 0; r < ran->size(); ++r) EXPECT_THAT((*ran)[r], IsOk()) << "rank " << r;
}

// A wrong dtype is a Status naming the op and the blob, never an abort.
TEST(ToyOp, TheKernelRefusesAnIntegerInput) {
  const Placement p = P("cpu:0-1");
  LocalTensor ints = *LocalTensor::Empty(DataType::kInt32, {4, 6});
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(2, [&](comm::Communicator& w) -> absl::Status {
    EagerContext ctx(TheEngine(), w);
    OFS_ASSIGN_OR_RETURN(GlobalTensor x, eager::FromFull(ctx, ints, p, Nd("S(0)")));
    return eager::Apply1(ctx, "toy_scale", {x}).status();
  });
  ASSERT_THAT(ran.status(), IsOk());
  for (const absl::Status& s : *ran) {
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("toy_scale")));
  }
}

// The generated functions register into any registry; twice is a duplicate.
TEST(ToyOp, RegisteringTheFamilyTwiceNamesTheOp) {
  OpRegistry fresh;
  EXPECT_THAT(toy::RegisterToyRules(&fresh), IsOk());
  EXPECT_THAT(toy::RegisterToyRules(&fresh),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("toy_clamp_min")));
  kernels::KernelRegistry kernels;
  EXPECT_THAT(toy::RegisterToyKernels(kernels), IsOk());
  EXPECT_THAT(toy::RegisterToyKernels(kernels), StatusIs(absl::StatusCode::kAlreadyExists));
  // The process-wide table has the rules already.
  EXPECT_THAT(toy::RegisterToyBackward(), StatusIs(absl::StatusCode::kAlreadyExists));
}

}  // namespace
}  // namespace oneflow_sbp::testing
