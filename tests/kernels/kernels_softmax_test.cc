// CPU kernels of softmax, log_softmax, softmax_grad, log_softmax_grad and
// the activation gradients relu_grad, gelu_grad, silu_grad: against plain
// formulas in double (and central differences for the gradients), split
// rows refused, and every candidate signature of the rules on 2 and 3
// ranks and on [2,2] / [2,3] meshes against the single-rank run.
#include <cmath>
#include <functional>
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

std::vector<int64_t> DimsOf(const LocalTensor& t) {
  return std::vector<int64_t>(t.dims().begin(), t.dims().end());
}

int64_t RowLen(const LocalTensor& t) { return t.rank() ? t.dim(t.rank() - 1) : 1; }

// Row-wise softmax (log = false) or log_softmax of x, in double.
LocalTensor SoftmaxRef(const LocalTensor& x, bool log) {
  const int64_t n = RowLen(x);
  std::vector<double> out(x.elem_cnt());
  for (int64_t r = 0; r * n < x.elem_cnt(); ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x.GetDouble(r * n + i));
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x.GetDouble(r * n + i) - mx);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x.GetDouble(r * n + i) - mx;
      out[r * n + i] = log ? v - std::log(sum) : std::exp(v) / sum;
    }
  }
  return Tensor(x.dtype(), DimsOf(x), out);
}

// dx of sum(dy * f(x)) by central differences, f row-wise (softmax or
// log_softmax), in f64.
LocalTensor NumericGrad(const LocalTensor& x, const LocalTensor& dy, bool log) {
  const double h = 1e-6;
  std::vector<double> dx(x.elem_cnt());
  auto loss = [&](const LocalTensor& t) {
    const LocalTensor y = SoftmaxRef(t, log);
    double s = 0;
    for (int64_t i = 0; i < y.elem_cnt(); ++i) s += y.GetDouble(i) * dy.GetDouble(i);
    return s;
  };
  for (int64_t i = 0; i < x.elem_cnt(); ++i) {
    LocalTensor p = x.Clone(), m = x.Clone();
    p.SetDouble(i, x.GetDouble(i) + h);
    m.SetDouble(i, x.GetDouble(i) - h);
    dx[i] = (loss(p) - loss(m)) / (2 * h);
  }
  return Tensor(x.dtype(), DimsOf(x), dx);
}

const std::vector<std::vector<int64_t>>& Shapes() {
  static const auto* shapes =
      new std::vector<std::vector<int64_t>>{{5, 7}, {3, 4, 6}, {7}, {6, 1}, {}};
  return *shapes;
}

TEST(SoftmaxKernels, MatchPlainFormulas) {
  for (const auto& dims : Shapes()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      const LocalTensor x = GridTensor(dt, dims, 1, -3, 3);
      for (const auto& [op, log] : {std::pair{"softmax", false}, std::pair{"log_softmax", true}}) {
        absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(op, {x});
        ASSERT_TRUE(got.ok()) << op << ": " << got.status();
        EXPECT_EQ(kernels::CompareTensors((*got)[0], SoftmaxRef(x, log),
                                          kernels::DefaultTolerance(dt)),
                  "")
            << op << " " << DataTypeName(dt);
      }
    }
  }
  // Large logits do not overflow.
  const LocalTensor big = Tensor(DataType::kFloat32, {2}, {1000, 1001});
  const std::vector<double> p = (*RunOnce("softmax", {big}))[0].ToDoubles();
  EXPECT_NEAR(p[0], 1 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(p[1], 1 / (1 + std::exp(-1.0)), 1e-6);
  const std::vector<double> lp = (*RunOnce("log_softmax", {big}))[0].ToDoubles();
  EXPECT_NEAR(lp[1], -std::log1p(std::exp(-1.0)), 1e-5);
}

TEST(SoftmaxKernels, GradientsMatchCentralDifferences) {
  for (const auto& dims : Shapes()) {
    const LocalTensor x = GridTensor(DataType::kFloat64, dims, 2, -2, 2);
    const LocalTensor dy = GridTensor(DataType::kFloat64, dims, 3);
    for (const auto& [op, log] :
         {std::pair{"softmax_grad", false}, std::pair{"log_softmax_grad", true}}) {
      absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(op, {SoftmaxRef(x, log), dy});
      ASSERT_TRUE(got.ok()) << op << ": " << got.status();
      EXPECT_EQ(kernels::CompareTensors((*got)[0], NumericGrad(x, dy, log), {1e-6, 1e-6}), "")
          << op;
    }
  }
}

TEST(SoftmaxKernels, SplitRowsAreRefused) {
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("softmax", {GridTensor(DataType::kFloat32, {4, 6}, 1)}, {}, "cpu:0-1",
                {"S(1)", "S(1)"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("rank holds 3 of the 6 entries"));
}

TEST(SoftmaxKernels, EveryCandidateAgreesWithOneRank) {
  for (const auto& dims : Shapes()) {
    const LocalTensor x = GridTensor(DataType::kFloat32, dims, 4, -3, 3);
    const LocalTensor dy = GridTensor(DataType::kFloat32, dims, 5);
    for (bool threads : {false, true}) {
      SweepOptions options;
      options.harness.ranks_as_threads = threads;  // same bits either way
      for (const std::string op : {"softmax", "log_softmax"}) {
        SweepResult r = SweepSignatures(op, {x}, {}, options);
        EXPECT_GE(r.checked, 4);
        EXPECT_TRUE(r.failures.empty()) << r.Report();
      }
      SweepResult r = SweepSignatures("softmax_grad", {SoftmaxRef(x, false), dy}, {}, options);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
      r = SweepSignatures("log_softmax_grad", {SoftmaxRef(x, true), dy}, {}, options);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
}

// ------------------------------------------------------ activation grads

struct ActCase {
  std::string op;
  std::function<double(double)> derivative;  // d/dx of the activation
};

double Phi(double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))); }
double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

const std::vector<ActCase>& ActCases() {
  static const auto* cases = new std::vector<ActCase>{
      // relu_grad gets y = relu(x); its derivative is 1 where y > 0.
      {"relu_grad", [](double y) { return y > 0 ? 1.0 : 0.0; }},
      {"gelu_grad",
       [](double x) { return Phi(x) + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI); }},
      {"silu_grad", [](double x) { return Sigmoid(x) * (1 + x * (1 - Sigmoid(x))); }},
  };
  return *cases;
}

TEST(ActivationGradKernels, MatchDerivatives) {
  // gelu and silu by central differences of the activations themselves.
  const double h = 1e-5;
  auto gelu = [](double x) { return x * Phi(x); };
  auto silu = [](double x) { return x * Sigmoid(x); };
  for (double x : {-2.5, -0.3, 0.0, 0.7, 3.0}) {
    EXPECT_NEAR(ActCases()[1].derivative(x), (gelu(x + h) - gelu(x - h)) / (2 * h), 1e-8);
    EXPECT_NEAR(ActCases()[2].derivative(x), (silu(x + h) - silu(x - h)) / (2 * h), 1e-8);
  }
  for (const ActCase& c : ActCases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      const LocalTensor x = GridTensor(dt, {4, 5}, 1, -3, 3);
      const LocalTensor dy = GridTensor(dt, {4, 5}, 2);
      std::vector<double> want(x.elem_cnt());
      for (int64_t i = 0; i < x.elem_cnt(); ++i) {
        want[i] = dy.GetDouble(i) * c.derivative(x.GetDouble(i));
      }
      absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(c.op, {x, dy});
      ASSERT_TRUE(got.ok()) << c.op << ": " << got.status();
      EXPECT_EQ(kernels::CompareTensors((*got)[0], Tensor(dt, {4, 5}, want),
                                        kernels::DefaultTolerance(dt)),
                "")
          << c.op << " " << DataTypeName(dt);
    }
  }
  // relu_grad on integers.
  EXPECT_EQ((*RunOnce("relu_grad", {Tensor(DataType::kInt32, {3}, {-1, 0, 2}),
                                    Tensor(DataType::kInt32, {3}, {5, 6, 7})}))[0]
                .ToDoubles(),
            (std::vector<double>{0, 0, 7}));
  // Mismatched dtypes are a contract violation.
  EXPECT_THAT(RunOnce("gelu_grad", {GridTensor(DataType::kFloat32, {2}, 1),
                                  GridTensor(DataType::kFloat64, {2}, 1)})
                .status()
                ,
            StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ActivationGradKernels, EveryCandidateAgreesWithOneRank) {
  for (const ActCase& c : ActCases()) {
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{5, 7}, {3, 1, 4}, {7}, {}}) {
      SweepResult r = SweepSignatures(c.op, {GridTensor(DataType::kFloat32, dims, 6, -3, 3),
                                             GridTensor(DataType::kFloat32, dims, 7)});
      EXPECT_GE(r.checked, 4);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
