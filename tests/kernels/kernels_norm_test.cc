// CPU kernels of layer_norm, rms_norm and their input and parameter
// gradients: the forwards against plain formulas in double (optional
// parameters, begin_norm_axis != begin_params_axis, every floating dtype
// with f32 statistics for halves), the gradients against central
// differences of those formulas, split normalised dims refused, and every
// candidate signature of the rules against the single-rank run.
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

std::vector<int64_t> Sub(const std::vector<int64_t>& d, int begin, int end) {
  return std::vector<int64_t>(d.begin() + begin, d.begin() + end);
}

int64_t Count(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

DataType StatsDtype(DataType dt) {
  return dt == DataType::kFloat16 || dt == DataType::kBFloat16 ? DataType::kFloat32 : dt;
}

// layer_norm (center) or rms_norm in double: {y, [mean,] inv}.
std::vector<LocalTensor> NormRef(const LocalTensor& x, const LocalTensor* scale,
                                 const LocalTensor* shift, int k, int p, bool center,
                                 double eps = 1e-5) {
  const std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  const int64_t n = Count(Sub(dims, k, dims.size()));
  const int64_t params = Count(Sub(dims, p, dims.size()));
  const int64_t rows = x.elem_cnt() / n;
  std::vector<double> y(x.elem_cnt()), mean(rows), inv(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, sq = 0;
    for (int64_t j = 0; j < n && center; ++j) m += x.GetDouble(r * n + j) / n;
    for (int64_t j = 0; j < n; ++j) sq += std::pow(x.GetDouble(r * n + j) - m, 2) / n;
    mean[r] = m;
    inv[r] = 1 / std::sqrt(sq + eps);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = r * n + j;
      y[i] = (x.GetDouble(i) - m) * inv[r] * (scale ? scale->GetDouble(i % params) : 1) +
             (shift ? shift->GetDouble(i % params) : 0);
    }
  }
  const DataType st = StatsDtype(x.dtype());
  std::vector<LocalTensor> out = {Tensor(x.dtype(), dims, y)};
  if (center) out.push_back(Tensor(st, Sub(dims, 0, k), mean));
  out.push_back(Tensor(st, Sub(dims, 0, k), inv));
  return out;
}

struct LnCase {
  std::vector<int64_t> x;
  int k, p;  // begin_norm_axis, begin_params_axis (normalised)
};

const std::vector<LnCase>& LnCases() {
  static const auto* cases = new std::vector<LnCase>{
      {{4, 6, 8}, 2, 2}, {{4, 6, 8}, 1, 1}, {{4, 6, 8}, 1, 2},
      {{5, 6, 7}, 2, 1}, {{5, 7}, 1, 1},    {{7}, 0, 0},
  };
  return *cases;
}

std::vector<std::string> LnAttrs(const LnCase& c) {
  return {"begin_norm_axis=" + std::to_string(c.k), "begin_params_axis=" + std::to_string(c.p)};
}

// (beta, gamma) present: 0 none, 1 beta, 2 gamma, 3 both.
std::vector<int> LnCounts(int params) { return {1, params & 1, (params >> 1) & 1}; }

TEST(LayerNormKernels, ForwardMatchesPlainFormulas) {
  for (const LnCase& c : LnCases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      for (int params = 0; params < 4; ++params) {
        const LocalTensor x = GridTensor(dt, c.x, 1, -3, 3);
        const LocalTensor beta = GridTensor(dt, Sub(c.x, c.p, c.x.size()), 2);
        const LocalTensor gamma = GridTensor(dt, Sub(c.x, c.p, c.x.size()), 3);
        std::vector<LocalTensor> in = {x};
        if (params & 1) in.push_back(beta);
        if (params & 2) in.push_back(gamma);
        auto call = CallWithCounts("layer_norm", LnCounts(params), LnAttrs(c));
        absl::StatusOr<std::vector<LocalTensor>> got = kernels::RunReference(call, in);
        ASSERT_TRUE(got.ok()) << got.status();
        const std::vector<LocalTensor> want = NormRef(x, params & 2 ? &gamma : nullptr,
                                                      params & 1 ? &beta : nullptr, c.k, c.p, true);
        for (int i = 0; i < 3; ++i) {
          EXPECT_EQ(kernels::CompareTensors((*got)[i], want[i],
                                            kernels::DefaultTolerance((*got)[i].dtype())),
                    "")
              << call->ToString() << " " << DataTypeName(dt) << " output " << i;
        }
      }
    }
  }
}

TEST(LayerNormKernels, GradientsMatchCentralDifferences) {
  for (const LnCase& c : LnCases()) {
    const LocalTensor x = GridTensor(DataType::kFloat64, c.x, 4, -3, 3);
    const LocalTensor dy = GridTensor(DataType::kFloat64, c.x, 5);
    const LocalTensor beta = GridTensor(DataType::kFloat64, Sub(c.x, c.p, c.x.size()), 6);
    const LocalTensor gamma = GridTensor(DataType::kFloat64, Sub(c.x, c.p, c.x.size()), 7, 0.5, 2);
    const std::vector<LocalTensor> fwd = NormRef(x, &gamma, &beta, c.k, c.p, true);
    const std::string bna = "begin_norm_axis=" + std::to_string(c.k);
    // dx, with and without gamma.
    for (bool with_gamma : {false, true}) {
      std::vector<LocalTensor> in = {dy, x, fwd[1], fwd[2]};
      if (with_gamma) in.push_back(gamma);
      absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("layer_norm_grad", in, {bna});
      ASSERT_TRUE(got.ok()) << got.status();
      const LocalTensor want = CentralDifference(x, dy, [&](const LocalTensor& v) {
        return NormRef(v, with_gamma ? &gamma : nullptr, &beta, c.k, c.p, true)[0];
      });
      EXPECT_EQ(kernels::CompareTensors((*got)[0], want, {1e-6, 1e-6}), "")
          << "layer_norm_grad k=" << c.k << " gamma=" << with_gamma;
    }
    // gamma_diff and beta_diff.
    absl::StatusOr<std::vector<LocalTensor>> got =
        RunOnce("layer_norm_param_grad", {dy, x, fwd[1], fwd[2]},
                {"begin_params_axis=" + std::to_string(c.p)});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(kernels::CompareTensors((*got)[0], CentralDifference(gamma, dy, [&](const LocalTensor& g) {
                                        return NormRef(x, &g, &beta, c.k, c.p, true)[0];
                                      }),
                                      {1e-6, 1e-6}),
              "");
    EXPECT_EQ(kernels::CompareTensors((*got)[1], CentralDifference(beta, dy, [&](const LocalTensor& b) {
                                        return NormRef(x, &gamma, &b, c.k, c.p, true)[0];
                                      }),
                                      {1e-6, 1e-6}),
              "");
  }
}

TEST(LayerNormKernels, SplitNormalisedDimsAreRefused) {
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("layer_norm", {GridTensor(DataType::kFloat32, {4, 6}, 1)}, {"begin_norm_axis=1"},
                "cpu:0-1", {"S(1)", "S(1)", "B", "B"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("normalised over and must be whole"));
}

TEST(LayerNormKernels, GammaOverASplitRowDimIsIndexedGlobally) {
  // begin_params_axis 1 < begin_norm_axis 2: gamma [6,7] also covers row
  // dim 1, which layer_norm_grad's x:S(1) gamma:B splits. Rank 1 holds x
  // rows [3,6) of dim 1 and must read gamma rows [3,6), not [0,3).
  const LocalTensor x = GridTensor(DataType::kFloat64, {2, 6, 7}, 1, -3, 3);
  const LocalTensor dy = GridTensor(DataType::kFloat64, {2, 6, 7}, 2);
  const LocalTensor gamma = GridTensor(DataType::kFloat64, {6, 7}, 3, 0.5, 2);
  const std::vector<LocalTensor> fwd = NormRef(x, &gamma, nullptr, 2, 1, true);
  auto call = CallOrDie("layer_norm_grad", 5, {"begin_norm_axis=2"});
  absl::StatusOr<std::vector<LocalTensor>> got = kernels::RunSharded(
      call, {dy, x, fwd[1], fwd[2], gamma}, *Placement::Parse("cpu:0-1"),
      {*NdSbp::Parse("S(1)"), *NdSbp::Parse("S(1)"), *NdSbp::Parse("S(1)"),
       *NdSbp::Parse("S(1)"), *NdSbp::Parse("B"), *NdSbp::Parse("S(1)")});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(kernels::CompareTensors((*got)[0],
                                    (*kernels::RunReference(call, {dy, x, fwd[1], fwd[2], gamma}))[0],
                                    {1e-12, 1e-12}),
            "");
}

TEST(LayerNormKernels, EveryCandidateAgreesWithOneRank) {
  for (const LnCase& c : LnCases()) {
    const LocalTensor x = GridTensor(DataType::kFloat32, c.x, 8, -3, 3);
    const LocalTensor dy = GridTensor(DataType::kFloat32, c.x, 9);
    const LocalTensor beta = GridTensor(DataType::kFloat32, Sub(c.x, c.p, c.x.size()), 10);
    const LocalTensor gamma = GridTensor(DataType::kFloat32, Sub(c.x, c.p, c.x.size()), 11);
    for (int params = 0; params < 4; ++params) {
      std::vector<LocalTensor> in = {x};
      if (params & 1) in.push_back(beta);
      if (params & 2) in.push_back(gamma);
      SweepResult r =
          SweepSignatures(CallWithCounts("layer_norm", LnCounts(params), LnAttrs(c)), in);
      EXPECT_GE(r.checked, 4);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
    const std::vector<LocalTensor> fwd = NormRef(x, &gamma, &beta, c.k, c.p, true);
    SweepResult r = SweepSignatures("layer_norm_grad", {dy, x, fwd[1], fwd[2], gamma},
                                    {"begin_norm_axis=" + std::to_string(c.k)});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures("layer_norm_param_grad", {dy, x, fwd[1], fwd[2]},
                        {"begin_params_axis=" + std::to_string(c.p)});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

// ------------------------------------------------------------- rms_norm

struct RmsCase {
  std::vector<int64_t> x;
  int k;  // rows dims; normalized_shape = x[k:]
};

const std::vector<RmsCase>& RmsCases() {
  static const auto* cases =
      new std::vector<RmsCase>{{{4, 6, 8}, 2}, {{4, 6, 8}, 1}, {{5, 7}, 1}, {{7}, 0}, {{3, 5}, 2}};
  return *cases;
}

std::string Ns(const RmsCase& c) {
  std::string s = "normalized_shape=";
  for (size_t i = c.k; i < c.x.size(); ++i) s += (i > size_t(c.k) ? "," : "") + std::to_string(c.x[i]);
  return s;
}

TEST(RmsNormKernels, ForwardMatchesPlainFormulas) {
  for (const RmsCase& c : RmsCases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      for (bool with_weight : {false, true}) {
        const LocalTensor x = GridTensor(dt, c.x, 1, -3, 3);
        const LocalTensor w = GridTensor(dt, Sub(c.x, c.k, c.x.size()), 2);
        std::vector<LocalTensor> in = {x};
        if (with_weight) in.push_back(w);
        absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("rms_norm", in, {Ns(c)});
        ASSERT_TRUE(got.ok()) << got.status();
        const std::vector<LocalTensor> want =
            NormRef(x, with_weight ? &w : nullptr, nullptr, c.k, c.k, false);
        for (int i = 0; i < 2; ++i) {
          EXPECT_EQ(kernels::CompareTensors((*got)[i], want[i],
                                            kernels::DefaultTolerance((*got)[i].dtype())),
                    "")
              << Ns(c) << " " << DataTypeName(dt) << " output " << i;
        }
      }
    }
  }
}

TEST(RmsNormKernels, GradientsMatchCentralDifferences) {
  for (const RmsCase& c : RmsCases()) {
    const LocalTensor x = GridTensor(DataType::kFloat64, c.x, 3, -3, 3);
    const LocalTensor dy = GridTensor(DataType::kFloat64, c.x, 4);
    const LocalTensor w = GridTensor(DataType::kFloat64, Sub(c.x, c.k, c.x.size()), 5, 0.5, 2);
    const LocalTensor inv = NormRef(x, &w, nullptr, c.k, c.k, false)[1];
    for (bool with_weight : {false, true}) {
      std::vector<LocalTensor> in = {dy, x, inv};
      if (with_weight) in.push_back(w);
      absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("rms_norm_grad", in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(kernels::CompareTensors((*got)[0], CentralDifference(x, dy, [&](const LocalTensor& v) {
                                          return NormRef(v, with_weight ? &w : nullptr, nullptr,
                                                         c.k, c.k, false)[0];
                                        }),
                                        {1e-6, 1e-6}),
                "")
          << Ns(c) << " weight=" << with_weight;
    }
    absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("rms_norm_param_grad", {dy, x, inv});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(kernels::CompareTensors((*got)[0], CentralDifference(w, dy, [&](const LocalTensor& v) {
                                        return NormRef(x, &v, nullptr, c.k, c.k, false)[0];
                                      }),
                                      {1e-6, 1e-6}),
              "")
        << Ns(c);
  }
}

TEST(RmsNormKernels, EveryCandidateAgreesWithOneRank) {
  for (const RmsCase& c : RmsCases()) {
    const LocalTensor x = GridTensor(DataType::kFloat32, c.x, 6, -3, 3);
    const LocalTensor dy = GridTensor(DataType::kFloat32, c.x, 7);
    const LocalTensor w = GridTensor(DataType::kFloat32, Sub(c.x, c.k, c.x.size()), 8);
    for (bool with_weight : {false, true}) {
      std::vector<LocalTensor> in = {x};
      if (with_weight) in.push_back(w);
      SweepResult r = SweepSignatures("rms_norm", in, {Ns(c)});
      EXPECT_GE(r.checked, 4);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
    const LocalTensor inv = NormRef(x, &w, nullptr, c.k, c.k, false)[1];
    SweepResult r = SweepSignatures("rms_norm_grad", {dy, x, inv, w});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures("rms_norm_grad", {dy, x, inv});
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures("rms_norm_param_grad", {dy, x, inv});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
