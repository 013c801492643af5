// CPU kernels of sgd_update, adam_update, fill and zeros_like: the updates
// against plain formulas over several steps (in place: the harness returns
// the final mutable inputs), bad attributes and mismatched shards refused,
// and every candidate signature against the single-rank run (a B model
// whose copies diverge would fail the assembly).
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

TEST(SgdKernel, UpdatesTheModelInPlace) {
  for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kBFloat16}) {
    const LocalTensor w = GridTensor(dt, {3, 4}, 1);
    const LocalTensor g = GridTensor(dt, {3, 4}, 2);
    absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(
        "sgd_update", {w, g}, {"learning_rate=0.5", "scale=2", "weight_decay=0.25"});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);  // no outputs; the final model
    std::vector<double> want(w.elem_cnt());
    for (int64_t i = 0; i < w.elem_cnt(); ++i) {
      want[i] = w.GetDouble(i) - 0.5 * (2 * g.GetDouble(i) + 0.25 * w.GetDouble(i));
    }
    EXPECT_EQ(kernels::CompareTensors((*got)[0], Tensor(dt, {3, 4}, want),
                                      kernels::DefaultTolerance(dt)),
              "")
        << DataTypeName(dt);
  }
}

struct AdamState {
  std::vector<double> w, m, v;
};

// Adam with decoupled weight decay, as PyTorch's AdamW and OneFlow's
// adam_update with bias correction: `steps` steps of the same gradient.
AdamState AdamRef(const LocalTensor& w0, const LocalTensor& g, int steps, double lr, double wd) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  AdamState s{w0.ToDoubles(), std::vector<double>(w0.elem_cnt()),
              std::vector<double>(w0.elem_cnt())};
  for (int t = 1; t <= steps; ++t) {
    for (size_t i = 0; i < s.w.size(); ++i) {
      const double gi = g.GetDouble(i);
      s.m[i] = b1 * s.m[i] + (1 - b1) * gi;
      s.v[i] = b2 * s.v[i] + (1 - b2) * gi * gi;
      const double mhat = s.m[i] / (1 - std::pow(b1, t));
      const double vhat = s.v[i] / (1 - std::pow(b2, t));
      s.w[i] = s.w[i] - lr * mhat / (std::sqrt(vhat) + eps) - lr * wd * s.w[i];
    }
  }
  return s;
}

std::vector<std::string> AdamAttrs(int step, double lr, double wd) {
  return {"learning_rate=" + std::to_string(lr), "weight_decay=" + std::to_string(wd),
          "bias_correction1=" + std::to_string(1 - std::pow(0.9, step)),
          "bias_correction2=" + std::to_string(1 - std::pow(0.999, step))};
}

TEST(AdamKernel, ThreeStepsMatchTheFormula) {
  const DataType dt = DataType::kFloat64;
  const LocalTensor w0 = GridTensor(dt, {2, 5}, 3);
  const LocalTensor g = GridTensor(dt, {2, 5}, 4);
  std::vector<LocalTensor> state = {w0, g, *LocalTensor::Zeros(dt, {2, 5}),
                                    *LocalTensor::Zeros(dt, {2, 5})};
  for (int step = 1; step <= 3; ++step) {
    absl::StatusOr<std::vector<LocalTensor>> got =
        RunOnce("adam_update", state, AdamAttrs(step, 0.1, 0.01));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 3u);  // model, m, v
    state = {(*got)[0], g, (*got)[1], (*got)[2]};
  }
  const AdamState want = AdamRef(w0, g, 3, 0.1, 0.01);
  // std::to_string keeps 6 decimals of the bias corrections.
  const kernels::Tolerance tol{1e-5, 1e-6};
  EXPECT_EQ(kernels::CompareTensors(state[0], Tensor(dt, {2, 5}, want.w), tol), "");
  EXPECT_EQ(kernels::CompareTensors(state[2], Tensor(dt, {2, 5}, want.m), tol), "");
  EXPECT_EQ(kernels::CompareTensors(state[3], Tensor(dt, {2, 5}, want.v), tol), "");
  // The first step moves every weight with a nonzero gradient by about lr.
  absl::StatusOr<std::vector<LocalTensor>> first =
      RunOnce("adam_update",
              {w0, g, *LocalTensor::Zeros(dt, {2, 5}), *LocalTensor::Zeros(dt, {2, 5})},
              AdamAttrs(1, 0.1, 0));
  ASSERT_TRUE(first.ok());
  for (int64_t i = 0; i < w0.elem_cnt(); ++i) {
    if (g.GetDouble(i) == 0) continue;
    EXPECT_NEAR(std::abs((*first)[0].GetDouble(i) - w0.GetDouble(i)), 0.1, 1e-6);
  }
}

TEST(AdamKernel, ZeroBiasCorrectionIsRefused) {
  const LocalTensor t = GridTensor(DataType::kFloat32, {4}, 1);
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnce("adam_update", {t, t, t, t}, {"bias_correction1=0"});
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("bias_correction1 0"));
}

TEST(UpdateKernels, MismatchedShardsAreRefused) {
  const LocalTensor t = GridTensor(DataType::kFloat32, {4, 6}, 1);
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("sgd_update", {t, t}, {}, "cpu:0-1", {"S(0)", "S(1)"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("model_diff_0"));
}

TEST(UpdateKernels, EveryCandidateAgreesWithOneRank) {
  // Uneven extents over 2 and 3 parts.
  const std::vector<std::vector<int64_t>> shapes = {{5, 7}, {3}, {2, 3, 5}};
  for (const std::vector<int64_t>& dims : shapes) {
    const DataType dt = DataType::kFloat32;
    const LocalTensor w = GridTensor(dt, dims, 5), g = GridTensor(dt, dims, 6);
    const LocalTensor m = GridTensor(dt, dims, 7), v = GridTensor(dt, dims, 8, 0, 1);
    SweepResult r = SweepSignatures("sgd_update", {w, g}, {"weight_decay=0.1"});
    EXPECT_GE(r.checked, 3);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures("adam_update", {w, g, m, v}, AdamAttrs(2, 0.01, 0.1));
    EXPECT_GE(r.checked, 3);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

TEST(FillKernels, FillAndZerosLike) {
  const LocalTensor like = GridTensor(DataType::kFloat32, {2, 3}, 1);
  absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("fill", {like}, {"value=2.5"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].ToDoubles(), std::vector<double>(6, 2.5));
  got = RunOnce("fill", {like}, {"value=3", "dtype=i64"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].dtype(), DataType::kInt64);
  EXPECT_EQ((*got)[0].ToDoubles(), std::vector<double>(6, 3));
  got = RunOnce("zeros_like", {IntTensor(DataType::kInt32, {4}, 2, 1, 9)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].ToDoubles(), std::vector<double>(4, 0));
}

TEST(FillKernels, EveryCandidateAgreesWithOneRank) {
  const LocalTensor like = GridTensor(DataType::kFloat32, {5, 3}, 9);
  SweepResult r = SweepSignatures("fill", {like}, {"value=-1.5"});
  EXPECT_GE(r.checked, 4);
  EXPECT_TRUE(r.failures.empty()) << r.Report();
  r = SweepSignatures("fill", {like}, {"value=7", "dtype=i32"});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
  r = SweepSignatures("zeros_like", {like});
  EXPECT_GE(r.checked, 4);
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

}  // namespace
}  // namespace oneflow_sbp::testing
