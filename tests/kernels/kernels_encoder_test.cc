// CPU kernels of the sentence-encoder head (masked_mean_pool, l2_normalize
// and their grads): against plain loops in double for every dtype and
// mask dtype, the all-padded row and the clamp branch, the gradients
// against central differences, layouts the kernels cannot compute
// refused, and every candidate signature of the rules (on [2], [3],
// [2,2], [2,3], with uneven extents) against the single-rank run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/builtin_ops.h"
#include "kernels/verify/input_recipes.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

LocalTensor First(const absl::StatusOr<std::vector<LocalTensor>>& r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0] : LocalTensor();
}

// ------------------------------------------------------ masked_mean_pool

// Row r of a [b, s] mask keeps positions j < s - r % s; the last row keeps
// none when `last_empty` (a batch entry that is all padding). Values are
// `on` for kept positions (any nonzero keeps).
LocalTensor PoolMask(DataType dt, int64_t b, int64_t s, bool last_empty, double on = 1) {
  std::vector<double> m(b * s);
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < s; ++j) {
      m[r * s + j] = (last_empty && r == b - 1) || j >= s - r % s ? 0 : on;
    }
  }
  return Tensor(dt, {b, s}, m);
}

LocalTensor PoolRef(const LocalTensor& x, const LocalTensor& mask) {
  const int64_t b = x.dim(0), s = x.dim(1), h = x.dim(2);
  std::vector<double> y(b * h, 0.0);
  for (int64_t r = 0; r < b; ++r) {
    double count = 0;
    for (int64_t j = 0; j < s; ++j) {
      if (mask.GetDouble(r * s + j) == 0) continue;
      count += 1;
      for (int64_t c = 0; c < h; ++c) y[r * h + c] += x.GetDouble((r * s + j) * h + c);
    }
    for (int64_t c = 0; c < h; ++c) y[r * h + c] /= std::max(count, 1e-9);
  }
  return Tensor(x.dtype(), {b, h}, y);
}

TEST(MaskedMeanPoolKernels, MatchesPlainLoops) {
  for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                      DataType::kBFloat16}) {
    for (DataType mt : {DataType::kBool, DataType::kInt32, DataType::kInt64, DataType::kFloat32,
                        DataType::kBFloat16}) {
      const LocalTensor x = GridTensor(dt, {4, 5, 3}, 1);
      // Float masks keep on any nonzero (0.5 too), as the flags read it.
      const LocalTensor mask = PoolMask(mt, 4, 5, true, mt == DataType::kFloat32 ? 0.5 : 1);
      const LocalTensor got = First(RunOnce("masked_mean_pool", {x, mask}));
      EXPECT_EQ(kernels::CompareTensors(got, PoolRef(x, PoolMask(mt, 4, 5, true)),
                                        kernels::DefaultTolerance(dt)),
                "")
          << DataTypeName(dt) << " mask " << DataTypeName(mt);
    }
  }
}

// A row with no kept position gives 0 (not NaN); values at padded
// positions, inf and NaN included, never reach the mean.
TEST(MaskedMeanPoolKernels, PaddingStaysOutAndAnEmptyRowGivesZero) {
  const double inf = std::numeric_limits<double>::infinity();
  const LocalTensor x = Tensor(DataType::kFloat32, {2, 3, 2},
                               {1, 2, 3, 4, inf, std::nan(""), 5, 6, 7, 8, 9, 10});
  const LocalTensor mask = Tensor(DataType::kInt64, {2, 3}, {1, 1, 0, 0, 0, 0});
  const LocalTensor y = First(RunOnce("masked_mean_pool", {x, mask}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{2, 3, 0, 0}));
  const LocalTensor dy = Tensor(DataType::kFloat32, {2, 2}, {4, 6, 8, 10});
  const LocalTensor dx = First(RunOnce("masked_mean_pool_grad", {dy, mask}));
  EXPECT_EQ(dx.ToDoubles(), (std::vector<double>{2, 3, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(MaskedMeanPoolKernels, GradMatchesCentralDifferences) {
  const DataType dt = DataType::kFloat64;
  const LocalTensor x = GridTensor(dt, {3, 4, 5}, 2);
  const LocalTensor dy = GridTensor(dt, {3, 5}, 3);
  for (DataType mt : {DataType::kBool, DataType::kInt64}) {
    const LocalTensor mask = PoolMask(mt, 3, 4, true);
    const LocalTensor got = First(RunOnce("masked_mean_pool_grad", {dy, mask}));
    const LocalTensor want =
        CentralDifference(x, dy, [&](const LocalTensor& t) { return PoolRef(t, mask); });
    EXPECT_EQ(kernels::CompareTensors(got, want, {1e-7, 1e-7}), "") << DataTypeName(mt);
  }
}

TEST(MaskedMeanPoolKernels, SplitSequenceAndUncoveredRowsAreRefused) {
  const LocalTensor x = GridTensor(DataType::kFloat32, {2, 4, 3}, 1);
  const LocalTensor mask = PoolMask(DataType::kInt64, 2, 4, false);
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("masked_mean_pool", {x, mask}, {}, "cpu:0-1", {"S(1)", "S(1)", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("a mean over part of the sequence is not a part of the mean"));
  got = RunOnRank("masked_mean_pool", {x, mask}, {}, "cpu:0-1", {"B", "S(0)", "B"}, 1);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("does not cover the batch rows"));
  const LocalTensor dy = GridTensor(DataType::kFloat32, {2, 3}, 2);
  got = RunOnRank("masked_mean_pool_grad", {dy, mask}, {}, "cpu:0-1", {"B", "S(1)", "B"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("needs all"));
}

TEST(MaskedMeanPoolKernels, EveryCandidateAgreesWithOneRank) {
  // Uneven batch and hidden over 2 and 3 parts; an all-padded row.
  for (DataType mt : {DataType::kBool, DataType::kInt64, DataType::kFloat32}) {
    const LocalTensor x = GridTensor(DataType::kFloat32, {5, 4, 7}, 4);
    const LocalTensor dy = GridTensor(DataType::kFloat32, {5, 7}, 5);
    const LocalTensor mask = PoolMask(mt, 5, 4, true);
    SweepResult r = SweepSignatures("masked_mean_pool", {x, mask});
    EXPECT_GE(r.checked, 10);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures("masked_mean_pool_grad", {dy, mask});
    EXPECT_GE(r.checked, 10);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

// ---------------------------------------------------------- l2_normalize

// x / max(||x|| along axis, eps), in double.
LocalTensor L2Ref(const LocalTensor& x, int axis, double eps) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.dim(i);
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  const int64_t n = x.dim(axis);
  std::vector<double> y(x.elem_cnt());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double ss = 0;
      for (int64_t k = 0; k < n; ++k) ss += std::pow(x.GetDouble((o * n + k) * inner + i), 2);
      const double div = std::max(std::sqrt(ss), eps);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = (o * n + k) * inner + i;
        y[at] = x.GetDouble(at) / div;
      }
    }
  }
  return Tensor(x.dtype(), std::vector<int64_t>(x.dims().begin(), x.dims().end()), y);
}

TEST(L2NormalizeKernels, MatchesPlainLoops) {
  for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                      DataType::kBFloat16}) {
    const LocalTensor x = GridTensor(dt, {3, 4, 5}, 6);
    for (int axis : {0, 1, 2}) {
      for (double eps : {1e-12, 1.5}) {
        const std::vector<std::string> attrs = {"axis=" + std::to_string(axis),
                                                "epsilon=" + std::to_string(eps)};
        const LocalTensor got = First(RunOnce("l2_normalize", {x}, attrs));
        EXPECT_EQ(kernels::CompareTensors(got, L2Ref(x, axis, eps), kernels::DefaultTolerance(dt)),
                  "")
            << DataTypeName(dt) << " axis " << axis << " eps " << eps;
      }
    }
  }
  // axis -1 is the last dim.
  const LocalTensor x = GridTensor(DataType::kFloat64, {3, 4}, 7);
  EXPECT_EQ(kernels::CompareTensors(First(RunOnce("l2_normalize", {x})), L2Ref(x, 1, 1e-12),
                                    {1e-15, 1e-15}),
            "");
}

// A zero vector gives 0 (not NaN) and a short one x / epsilon; their
// gradients are dy / epsilon (the clamp passes nothing to the norm).
TEST(L2NormalizeKernels, VectorsShorterThanEpsilonAreDividedByIt) {
  const LocalTensor x = Tensor(DataType::kFloat64, {3, 2}, {0, 0, 0.3, 0.4, 3, 4});
  const std::vector<std::string> attrs = {"epsilon=1"};
  EXPECT_EQ(First(RunOnce("l2_normalize", {x}, attrs)).ToDoubles(),
            (std::vector<double>{0, 0, 0.3, 0.4, 0.6, 0.8}));
  const LocalTensor dy = Tensor(DataType::kFloat64, {3, 2}, {1, 2, 3, 4, 5, 0});
  const std::vector<double> dx = First(RunOnce("l2_normalize_grad", {dy, x}, attrs)).ToDoubles();
  EXPECT_EQ(dx[0], 1);
  EXPECT_EQ(dx[1], 2);
  EXPECT_EQ(dx[2], 3);
  EXPECT_EQ(dx[3], 4);
  // |x| = 5 > 1: (dy - y (dy . y)) / 5 with y = (0.6, 0.8), dy . y = 3.
  EXPECT_NEAR(dx[4], (5 - 0.6 * 3) / 5, 1e-15);
  EXPECT_NEAR(dx[5], (0 - 0.8 * 3) / 5, 1e-15);
}

TEST(L2NormalizeKernels, GradMatchesCentralDifferences) {
  const DataType dt = DataType::kFloat64;
  // Pairs of values in [-1, 1]: with epsilon 0.8 some norms fall below it.
  const LocalTensor x = GridTensor(dt, {4, 2, 3}, 8, -1, 1);
  const LocalTensor dy = GridTensor(dt, {4, 2, 3}, 9);
  int below = 0;
  for (int64_t o = 0; o < 4; ++o) {
    for (int64_t i = 0; i < 3; ++i) {
      const double a = x.GetDouble(o * 6 + i), b = x.GetDouble(o * 6 + 3 + i);
      const double n = std::sqrt(a * a + b * b);
      ASSERT_GT(std::abs(n - 0.8), 1e-3) << "a norm at the kink";
      below += n < 0.8;
    }
  }
  EXPECT_GT(below, 0);
  EXPECT_LT(below, 12);
  const std::vector<std::string> attrs = {"axis=1", "epsilon=0.8"};
  const LocalTensor got = First(RunOnce("l2_normalize_grad", {dy, x}, attrs));
  const LocalTensor want =
      CentralDifference(x, dy, [&](const LocalTensor& t) { return L2Ref(t, 1, 0.8); });
  EXPECT_EQ(kernels::CompareTensors(got, want, {1e-7, 1e-7}), "");
}

TEST(L2NormalizeKernels, SplitAxisIsRefused) {
  const LocalTensor x = GridTensor(DataType::kFloat32, {3, 4}, 1);
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("l2_normalize", {x}, {}, "cpu:0-1", {"S(1)", "S(1)"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("the norm needs the whole vector"));
}

TEST(L2NormalizeKernels, EveryCandidateAgreesWithOneRank) {
  const LocalTensor x = GridTensor(DataType::kFloat32, {5, 3, 7}, 10, -1, 1);
  const LocalTensor dy = GridTensor(DataType::kFloat32, {5, 3, 7}, 11);
  for (const char* axis : {"axis=1", "axis=-1"}) {
    const std::vector<std::string> attrs = {axis, "epsilon=0.9"};
    SweepResult r = SweepSignatures("l2_normalize", {x}, attrs);
    EXPECT_GE(r.checked, 8);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures("l2_normalize_grad", {dy, x}, attrs);
    EXPECT_GE(r.checked, 8);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

// The verifier's recipes reach both branches of l2_normalize_grad, and
// give every mask row a kept and (where there is room) a padded position.
TEST(EncoderRecipes, CoverTheClampBranchAndPaddedPositions) {
  const OpRegistry& registry = ops::BuiltinOpRegistry();
  absl::StatusOr<kernels::OpInputs> l2 = kernels::MakeOpInputs(
      registry.Find("l2_normalize_grad"), *kernels::FindInputRecipe("l2_normalize_grad"), 1);
  ASSERT_TRUE(l2.ok()) << l2.status();
  const LocalTensor& x = l2->inputs[1];  // [5, 2, 3], axis 1, epsilon 1
  int below = 0;
  for (int64_t o = 0; o < 5; ++o) {
    for (int64_t i = 0; i < 3; ++i) {
      below += std::hypot(x.GetDouble(o * 6 + i), x.GetDouble(o * 6 + 3 + i)) < 1;
    }
  }
  EXPECT_GT(below, 0);
  EXPECT_LT(below, 15);
  for (const char* op : {"masked_mean_pool", "scaled_dot_product_attention"}) {
    absl::StatusOr<kernels::OpInputs> in =
        kernels::MakeOpInputs(registry.Find(op), *kernels::FindInputRecipe(op), 1);
    ASSERT_TRUE(in.ok()) << in.status();
    const LocalTensor& mask = in->inputs.back();
    const int64_t n = mask.dim(mask.rank() - 1);
    for (int64_t row = 0; row < mask.elem_cnt() / n; ++row) {
      int64_t kept = 0;
      for (int64_t j = 0; j < n; ++j) kept += mask.GetDouble(row * n + j) != 0;
      EXPECT_GT(kept, 0) << op << " row " << row;
      EXPECT_LT(kept, n) << op << " row " << row;
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
