// CPU kernels of the reductions (reduce_sum/mean/max/min/prod/nansum,
// reduce_sum_like): against a plain f64 reference written here, the
// global divisor of reduce_mean under S(reduced) -> P, empty shards, and
// every candidate signature of the rules on 2 and 3 ranks and on [2,2] /
// [2,3] meshes against the single-rank run.
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

NdSbp Nd(const std::string& text) { return *NdSbp::Parse(text); }

struct ReduceCase {
  std::string op;
  double init;
  std::function<double(double, double)> combine;
  bool mean = false;
};

const std::vector<ReduceCase>& ReduceCases() {
  static const auto* cases = new std::vector<ReduceCase>{
      {"reduce_sum", 0, [](double a, double v) { return a + v; }},
      {"reduce_mean", 0, [](double a, double v) { return a + v; }, true},
      {"reduce_max", -INFINITY, [](double a, double v) { return std::max(a, v); }},
      {"reduce_min", INFINITY, [](double a, double v) { return std::min(a, v); }},
      {"reduce_prod", 1, [](double a, double v) { return a * v; }},
      {"reduce_nansum", 0, [](double a, double v) { return std::isnan(v) ? a : a + v; }},
  };
  return *cases;
}

// Reference: reduce `x` over the axes flagged in `reduced`.
LocalTensor ReduceRef(const ReduceCase& c, const LocalTensor& x, const std::vector<bool>& reduced,
                      bool keepdims) {
  std::vector<int64_t> out_dims;
  for (int d = 0; d < x.rank(); ++d) {
    if (!reduced[d]) out_dims.push_back(x.dim(d));
    else if (keepdims) out_dims.push_back(1);
  }
  int64_t out_n = 1;
  for (int64_t d : out_dims) out_n *= d;
  std::vector<double> acc(out_n, c.init);
  double count = 1;
  for (int d = 0; d < x.rank(); ++d) count *= reduced[d] ? x.dim(d) : 1;
  std::vector<int64_t> idx(x.rank(), 0);
  for (int64_t i = 0; i < x.elem_cnt(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < x.rank(); ++d) {
      if (!reduced[d]) o = o * x.dim(d) + idx[d];
    }
    acc[o] = c.combine(acc[o], x.GetDouble(i));
    for (int d = x.rank() - 1; d >= 0; --d) {
      if (++idx[d] < x.dim(d)) break;
      idx[d] = 0;
    }
  }
  if (c.mean) {
    for (double& v : acc) v /= count;
  }
  return Tensor(x.dtype(), out_dims, acc);
}

struct AxesCase {
  std::vector<int64_t> dims;
  std::string axis;  // attribute text
  std::vector<bool> reduced;
};

const std::vector<AxesCase>& AxesCases() {
  static const auto* cases = new std::vector<AxesCase>{
      {{5, 6, 7}, "1", {false, true, false}},
      {{5, 6, 7}, "0,2", {true, false, true}},
      {{5, 6, 7}, "-1", {false, false, true}},
      {{5, 6, 7}, "0,1,2", {true, true, true}},
      {{5, 6}, "", {false, false}},
      {{3, 1, 4}, "1", {false, true, false}},
      {{7}, "0", {true}},
  };
  return *cases;
}

std::string AxisAttr(const std::string& axis) { return "axis=" + axis; }

TEST(ReduceKernels, MatchPlainReferences) {
  for (const ReduceCase& c : ReduceCases()) {
    for (const AxesCase& a : AxesCases()) {
      for (bool keepdims : {false, true}) {
        for (DataType dt : {DataType::kFloat64, DataType::kFloat32}) {
          const LocalTensor x = GridTensor(dt, a.dims, 1, -1, 1.5);
          absl::StatusOr<std::vector<LocalTensor>> got =
              RunOnce(c.op, {x}, {AxisAttr(a.axis), keepdims ? "keepdims=true" : "keepdims=false"});
          ASSERT_TRUE(got.ok()) << c.op << ": " << got.status();
          EXPECT_EQ(kernels::CompareTensors((*got)[0], ReduceRef(c, x, a.reduced, keepdims),
                                            kernels::DefaultTolerance(dt)),
                    "")
              << c.op << " axis=" << a.axis << " keepdims=" << keepdims;
        }
      }
    }
  }
}

TEST(ReduceKernels, IntegersHalvesAndNaN) {
  const LocalTensor i = Tensor(DataType::kInt32, {2, 3}, {1, -2, 3, 4, 5, -6});
  EXPECT_EQ((*RunOnce("reduce_sum", {i}, {"axis=1"}))[0].ToDoubles(), (std::vector<double>{2, 3}));
  EXPECT_EQ((*RunOnce("reduce_prod", {i}, {"axis=1"}))[0].ToDoubles(),
            (std::vector<double>{-6, -120}));
  EXPECT_EQ((*RunOnce("reduce_max", {i}, {"axis=0"}))[0].ToDoubles(),
            (std::vector<double>{4, 5, 3}));
  const LocalTensor h = Tensor(DataType::kBFloat16, {4}, {0.5, 1, 1.5, 2});
  EXPECT_EQ((*RunOnce("reduce_mean", {h}, {"axis=0"}))[0].ToDoubles(), std::vector<double>{1.25});
  const LocalTensor n = Tensor(DataType::kFloat32, {3}, {1, std::nan(""), 2});
  EXPECT_EQ((*RunOnce("reduce_nansum", {n}, {"axis=0"}))[0].ToDoubles(), std::vector<double>{3});
  EXPECT_TRUE(std::isnan((*RunOnce("reduce_sum", {n}, {"axis=0"}))[0].GetDouble(0)));
  // nansum skips NaN inputs but keeps the NaN of inf + -inf, wherever the
  // infinities fall among the kernel's interleaved partial sums (same
  // partial: positions 0 and 4; different ones: 0 and 1).
  const double inf = std::numeric_limits<double>::infinity();
  for (const std::vector<double>& row :
       {std::vector<double>{inf, 1, 2, 3, -inf, 5, 6, 7, std::nan("")},
        std::vector<double>{inf, -inf, 2, 3, 4, 5, 6, 7, std::nan("")}}) {
    const LocalTensor t = Tensor(DataType::kFloat32, {9}, row);
    EXPECT_TRUE(std::isnan((*RunOnce("reduce_nansum", {t}, {"axis=0"}))[0].GetDouble(0)));
  }
  EXPECT_TRUE(std::isnan((*RunOnce("reduce_max", {n}, {"axis=0"}))[0].GetDouble(0)));
  EXPECT_THAT(RunOnce("reduce_mean", {i}, {"axis=0"}),
            StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_THAT(RunOnce("reduce_sum", {BoolTensor({2}, 1)}, {"axis=0"}),
            StatusIs(absl::StatusCode::kUnimplemented));
}

TEST(ReduceKernels, MeanDividesByTheGlobalCount) {
  // 7 columns over 3 ranks hold 3, 2, 2 of them; each rank's addend is its
  // sum over 7, not over its own count.
  const LocalTensor x = IntTensor(DataType::kFloat64, {2, 7}, 3);
  auto call = CallOrDie("reduce_mean", 1, {"axis=1"});
  const Placement p = *Placement::Parse("cpu:0-2");
  absl::StatusOr<std::vector<LocalTensor>> got =
      kernels::RunSharded(call, {x}, p, {Nd("S(1)"), Nd("P")});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(kernels::CompareTensors((*got)[0], (*RunOnce("reduce_mean", {x}, {"axis=1"}))[0],
                                    kernels::DefaultTolerance(DataType::kFloat64)),
            "");
}

TEST(ReduceKernels, EmptyShardsReduceToTheIdentity) {
  // 2 rows over 3 ranks: rank 2 holds none and contributes 0 to the sum.
  const LocalTensor x = IntTensor(DataType::kFloat32, {2, 3}, 4);
  for (const std::string op : {"reduce_sum", "reduce_mean", "reduce_nansum"}) {
    absl::StatusOr<std::vector<LocalTensor>> got = kernels::RunSharded(
        CallOrDie(op, 1, {"axis=0"}), {x}, *Placement::Parse("cpu:0-2"), {Nd("S(0)"), Nd("P")});
    ASSERT_TRUE(got.ok()) << op << ": " << got.status();
    EXPECT_EQ(kernels::CompareTensors((*got)[0], (*RunOnce(op, {x}, {"axis=0"}))[0],
                                      kernels::DefaultTolerance(DataType::kFloat32)),
              "")
        << op;
  }
}

TEST(ReduceKernels, EveryCandidateAgreesWithOneRank) {
  for (const ReduceCase& c : ReduceCases()) {
    for (const AxesCase& a : AxesCases()) {
      for (bool keepdims : {false, true}) {
        // prod of many values in [-1, 1.5] stays well inside f32.
        SweepResult r = SweepSignatures(c.op, {GridTensor(DataType::kFloat32, a.dims, 5, -1, 1.5)},
                                        {AxisAttr(a.axis), keepdims ? "keepdims=true" : "keepdims=false"});
        EXPECT_GT(r.checked, 2);
        EXPECT_TRUE(r.failures.empty()) << r.Report();
      }
    }
  }
  // A scalar input (only P -> P and all-B) and integer inputs.
  SweepResult r = SweepSignatures("reduce_sum", {GridTensor(DataType::kFloat64, {}, 6)}, {"axis="});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
  for (const std::string op : {"reduce_sum", "reduce_max", "reduce_prod"}) {
    r = SweepSignatures(op, {IntTensor(DataType::kInt64, {4, 5}, 7, -3, 3)}, {"axis=1"});
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

TEST(ReduceSumLikeKernel, SumsIntoLikesShape) {
  const LocalTensor x = Tensor(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ((*RunOnce("reduce_sum_like", {x, *LocalTensor::Zeros(DataType::kFloat32, {1, 3})},
                      {"axis=0"}))[0]
                .ToDoubles(),
            (std::vector<double>{5, 7, 9}));
  EXPECT_EQ((*RunOnce("reduce_sum_like", {x, *LocalTensor::Zeros(DataType::kFloat32, {2})},
                      {"axis=1"}))[0]
                .ToDoubles(),
            (std::vector<double>{6, 15}));
}

TEST(ReduceSumLikeKernel, EveryCandidateAgreesWithOneRank) {
  const std::vector<std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::string>> cases = {
      {{5, 6, 7}, {5, 1, 7}, "1"}, {{5, 6, 7}, {5, 7}, "1"}, {{5, 6, 7}, {6}, "0,2"},
      {{4, 3}, {1, 1}, "0,1"}};
  for (const auto& [xs, ls, axis] : cases) {
    SweepResult r = SweepSignatures("reduce_sum_like", {GridTensor(DataType::kFloat64, xs, 8),
                                                        GridTensor(DataType::kFloat64, ls, 9)},
                                    {AxisAttr(axis)});
    EXPECT_GT(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
