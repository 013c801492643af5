// CPU kernels of the broadcasting family: broadcast_<op>, where, add_n.
// Each against a plain f64 reference written here (NumPy broadcasting by
// index arithmetic), then every candidate signature of its rule on 2 and 3
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

// NumPy broadcasting of a and b into a tensor of `out` dims, by f(a, b).
std::vector<double> BroadcastRef(const LocalTensor& a, const LocalTensor& b,
                                 const std::vector<int64_t>& out,
                                 const std::function<double(double, double)>& f) {
  const int rank = static_cast<int>(out.size());
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  auto offset = [&](const LocalTensor& t, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    const int lead = rank - t.rank();
    for (int d = 0; d < t.rank(); ++d) off = off * t.dim(d) + (t.dim(d) == 1 ? 0 : idx[d + lead]);
    return off;
  };
  std::vector<double> r;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    r.push_back(f(a.GetDouble(offset(a, idx)), b.GetDouble(offset(b, idx))));
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

struct BinaryCase {
  std::string op;
  std::function<double(double, double)> ref;
  bool boolean = false;
};

const std::vector<BinaryCase>& BinaryCases() {
  static const auto* cases = new std::vector<BinaryCase>{
      {"broadcast_add", [](double a, double b) { return a + b; }},
      {"broadcast_sub", [](double a, double b) { return a - b; }},
      {"broadcast_mul", [](double a, double b) { return a * b; }},
      {"broadcast_div", [](double a, double b) { return a / b; }},
      {"broadcast_maximum", [](double a, double b) { return std::max(a, b); }},
      {"broadcast_minimum", [](double a, double b) { return std::min(a, b); }},
      {"broadcast_pow", [](double a, double b) { return std::pow(a, b); }},
      {"broadcast_fmod", [](double a, double b) { return std::fmod(a, b); }},
      {"broadcast_equal", [](double a, double b) { return double(a == b); }, true},
      {"broadcast_not_equal", [](double a, double b) { return double(a != b); }, true},
      {"broadcast_greater", [](double a, double b) { return double(a > b); }, true},
      {"broadcast_greater_equal", [](double a, double b) { return double(a >= b); }, true},
      {"broadcast_less", [](double a, double b) { return double(a < b); }, true},
      {"broadcast_less_equal", [](double a, double b) { return double(a <= b); }, true},
  };
  return *cases;
}

// x and y shapes exercising equal ranks, size-1 dims on either side,
// missing leading dims and scalars.
const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>& ShapePairs() {
  static const auto* pairs = new std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
      {{5, 7}, {5, 7}}, {{5, 1}, {5, 7}}, {{5, 7}, {7}},     {{3, 1}, {2, 3, 4}},
      {{2, 3, 4}, {4}}, {{1, 7}, {5, 1}}, {{}, {3, 5}},       {{3, 5}, {}},
  };
  return *pairs;
}

std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = std::max(da, db);
  }
  return out;
}

TEST(BinaryKernels, MatchPlainReferences) {
  for (const BinaryCase& c : BinaryCases()) {
    for (const auto& [xs, ys] : ShapePairs()) {
      for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16}) {
        const LocalTensor x = GridTensor(dt, xs, 1, 0.25, 3);
        const LocalTensor y = GridTensor(dt, ys, 2, 0.25, 3);
        absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(c.op, {x, y});
        ASSERT_TRUE(got.ok()) << c.op << ": " << got.status();
        const std::vector<int64_t> out = BroadcastDims(xs, ys);
        const LocalTensor want =
            Tensor(c.boolean ? DataType::kBool : dt, out, BroadcastRef(x, y, out, c.ref));
        EXPECT_EQ(kernels::CompareTensors((*got)[0], want, kernels::DefaultTolerance(dt)), "")
            << c.op << " " << x.ToString() << " " << y.ToString();
      }
    }
  }
}

TEST(BinaryKernels, IntegersAndBools) {
  const LocalTensor a = Tensor(DataType::kInt64, {4}, {-7, -1, 3, 8});
  const LocalTensor b = Tensor(DataType::kInt64, {4}, {3, 2, 2, -3});
  EXPECT_EQ((*RunOnce("broadcast_fmod", {a, b}))[0].ToDoubles(), (std::vector<double>{-1, -1, 1, 2}));
  EXPECT_EQ((*RunOnce("broadcast_pow", {a, Tensor(DataType::kInt64, {4}, {3, 2, 2, 0})}))[0]
                .ToDoubles(),
            (std::vector<double>{-343, 1, 9, 1}));
  EXPECT_EQ((*RunOnce("broadcast_maximum", {a, b}))[0].ToDoubles(), (std::vector<double>{3, 2, 3, 8}));
  const LocalTensor p = Tensor(DataType::kBool, {3}, {1, 0, 1});
  const LocalTensor q = Tensor(DataType::kBool, {3}, {1, 1, 0});
  EXPECT_EQ((*RunOnce("broadcast_equal", {p, q}))[0].ToString(), "bool[3] {true, false, false}");
  // NaN propagates through maximum.
  const LocalTensor n = Tensor(DataType::kFloat32, {2}, {std::nan(""), 1});
  const LocalTensor m = Tensor(DataType::kFloat32, {2}, {0, std::nan("")});
  std::vector<double> mx = (*RunOnce("broadcast_maximum", {n, m}))[0].ToDoubles();
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
}

TEST(BinaryKernels, ErrorsAreStatuses) {
  const LocalTensor a = Tensor(DataType::kInt32, {2}, {1, 2});
  const LocalTensor z = Tensor(DataType::kInt32, {2}, {1, 0});
  absl::Status s = RunOnce("broadcast_fmod", {a, z}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(s.message()), HasSubstr("broadcast_fmod cpu kernel: integer fmod by 0"));
  s = RunOnce("broadcast_pow", {a, Tensor(DataType::kInt32, {2}, {1, -1})}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  s = RunOnce("broadcast_div", {a, a}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_EQ(s.message(), "no cpu kernel for op 'broadcast_div' with dtype i32 (x_0)");
  s = RunOnce("broadcast_add", {BoolTensor({2}, 1), BoolTensor({2}, 2)}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented));
}

TEST(BinaryKernels, EveryCandidateAgreesWithOneRank) {
  for (const BinaryCase& c : BinaryCases()) {
    for (const auto& [xs, ys] : ShapePairs()) {
      SweepResult r = SweepSignatures(c.op, {GridTensor(DataType::kFloat32, xs, 3, 0.25, 3),
                                             GridTensor(DataType::kFloat32, ys, 4, 0.25, 3)});
      EXPECT_GT(r.checked, 2);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
  for (const std::string op : {"broadcast_add", "broadcast_mul", "broadcast_greater"}) {
    SweepResult r = SweepSignatures(op, {IntTensor(DataType::kInt32, {5, 1}, 5),
                                         IntTensor(DataType::kInt32, {5, 7}, 6)});
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    // bf16 products of P addends (|addend| <= 8) round to 2^-5 each before
    // the harness sums them: an absolute tolerance of that order.
    SweepOptions half;
    half.tolerance = kernels::Tolerance{1.6e-2, 0.125};
    r = SweepSignatures(op, {GridTensor(DataType::kBFloat16, {3, 1}, 5),
                             GridTensor(DataType::kBFloat16, {2, 3, 4}, 6)},
                        {}, half);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

TEST(WhereKernel, SelectsWithThreeWayBroadcasting) {
  const LocalTensor c = Tensor(DataType::kBool, {2, 1}, {1, 0});
  const LocalTensor x = Tensor(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const LocalTensor y = Tensor(DataType::kFloat32, {3}, {-1, -2, -3});
  absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("where", {c, x, y});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].ToDoubles(), (std::vector<double>{1, 2, 3, -1, -2, -3}));
  const LocalTensor bx = Tensor(DataType::kBool, {2}, {1, 1});
  const LocalTensor by = Tensor(DataType::kBool, {2}, {0, 0});
  EXPECT_EQ((*RunOnce("where", {Tensor(DataType::kBool, {2}, {0, 1}), bx, by}))[0].ToString(),
            "bool[2] {false, true}");
}

TEST(WhereKernel, EveryCandidateAgreesWithOneRank) {
  const std::vector<std::vector<std::vector<int64_t>>> shapes = {
      {{5, 1}, {5, 7}, {7}}, {{5, 7}, {5, 7}, {5, 7}}, {{7}, {3, 5, 7}, {5, 1}}, {{}, {4, 3}, {3}}};
  for (const auto& s : shapes) {
    SweepResult r = SweepSignatures("where", {BoolTensor(s[0], 1), GridTensor(DataType::kFloat64, s[1], 2),
                                              GridTensor(DataType::kFloat64, s[2], 3)});
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
  SweepResult r = SweepSignatures("where", {BoolTensor({4, 1}, 1), IntTensor(DataType::kInt64, {4, 6}, 2),
                                            IntTensor(DataType::kInt64, {6}, 3)});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

TEST(AddNKernel, SumsAndAgreesWithEveryCandidate) {
  const LocalTensor a = Tensor(DataType::kFloat32, {3}, {1, 2, 3});
  const LocalTensor b = Tensor(DataType::kFloat32, {3}, {10, 20, 30});
  EXPECT_EQ((*RunOnce("add_n", {a, b, a}))[0].ToDoubles(), (std::vector<double>{12, 24, 36}));
  EXPECT_EQ((*RunOnce("add_n", {a}))[0].ToDoubles(), (std::vector<double>{1, 2, 3}));
  for (DataType dt : {DataType::kFloat32, DataType::kInt32, DataType::kFloat16}) {
    SweepResult r = SweepSignatures(
        "add_n", {IntTensor(dt, {5, 7}, 1), IntTensor(dt, {5, 7}, 2), IntTensor(dt, {5, 7}, 3)});
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
  SweepResult r = SweepSignatures("add_n", {GridTensor(DataType::kFloat64, {2, 1, 3}, 4),
                                            GridTensor(DataType::kFloat64, {2, 1, 3}, 5)});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

}  // namespace
}  // namespace oneflow_sbp::testing
