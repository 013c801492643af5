// CPU kernels of matmul, batch_matmul and broadcast_matmul: against a plain
// triple loop in double (transposes, alpha, _add_to_output, broadcast batch
// dims, every floating dtype), empty contractions, the errors for layouts
// the kernel cannot compute, and every candidate signature of the rules on
// 2 and 3 ranks and on [2,2] / [2,3] meshes against the single-rank run.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/common/matmul_plan.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

// out = alpha * op(a) @ op(b) (+ add), batch dims broadcast NumPy-style.
LocalTensor MatmulRef(const LocalTensor& a, const LocalTensor& b, bool ta, bool tb, double alpha,
                      const LocalTensor* add) {
  const int ra = a.rank(), rb = b.rank();
  const int batch = std::max(ra, rb) - 2;
  const int64_t m = a.dim(ta ? ra - 1 : ra - 2), k = a.dim(ta ? ra - 2 : ra - 1);
  const int64_t n = b.dim(tb ? rb - 2 : rb - 1);
  auto bdim = [&](const LocalTensor& t, int i) {
    const int j = i - (batch - (t.rank() - 2));
    return j >= 0 ? t.dim(j) : 1;
  };
  std::vector<int64_t> out_dims;
  for (int i = 0; i < batch; ++i) out_dims.push_back(std::max(bdim(a, i), bdim(b, i)));
  int64_t matrices = 1;
  for (int64_t d : out_dims) matrices *= d;
  out_dims.push_back(m);
  out_dims.push_back(n);
  std::vector<double> out(matrices * m * n);
  for (int64_t o = 0; o < matrices; ++o) {
    // Unravel o and re-ravel it in a and b (stride 0 where they broadcast).
    int64_t rest = o, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int i = batch - 1; i >= 0; --i) {
      const int64_t c = rest % out_dims[i];
      rest /= out_dims[i];
      ia += (bdim(a, i) == 1 ? 0 : c) * sa;
      ib += (bdim(b, i) == 1 ? 0 : c) * sb;
      sa *= bdim(a, i);
      sb *= bdim(b, i);
    }
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < k; ++j) {
          const double x = a.GetDouble(ia * m * k + (ta ? j * m + r : r * k + j));
          const double y = b.GetDouble(ib * k * n + (tb ? c * k + j : j * n + c));
          sum += x * y;
        }
        const int64_t at = (o * m + r) * n + c;
        out[at] = alpha * sum + (add != nullptr ? add->GetDouble(at) : 0.0);
      }
    }
  }
  return Tensor(a.dtype(), out_dims, out);
}

struct MatmulCase {
  std::string op;
  std::vector<int64_t> a, b;  // as stored (already transposed where ta/tb)
  bool ta = false, tb = false;
};

const std::vector<MatmulCase>& Cases() {
  static const auto* cases = new std::vector<MatmulCase>{
      {"matmul", {5, 3}, {3, 7}},
      {"matmul", {3, 5}, {3, 7}, true, false},
      {"matmul", {5, 3}, {7, 3}, false, true},
      {"matmul", {3, 5}, {7, 3}, true, true},
      {"matmul", {1, 4}, {4, 1}},
      {"batch_matmul", {3, 5, 4}, {3, 4, 6}},
      {"batch_matmul", {2, 3, 4, 5}, {2, 3, 6, 5}, false, true},
      {"broadcast_matmul", {3, 5, 4}, {4, 6}},
      {"broadcast_matmul", {5, 4}, {3, 4, 6}},
      {"broadcast_matmul", {2, 1, 5, 4}, {3, 6, 4}, false, true},
      {"broadcast_matmul", {3, 1, 4, 5}, {1, 2, 4, 6}, true, false},
  };
  return *cases;
}

std::vector<int64_t> OutDims(const MatmulCase& c) {
  const LocalTensor a = GridTensor(DataType::kFloat64, c.a, 1);
  const LocalTensor b = GridTensor(DataType::kFloat64, c.b, 2);
  const LocalTensor o = MatmulRef(a, b, c.ta, c.tb, 1, nullptr);
  return std::vector<int64_t>(o.dims().begin(), o.dims().end());
}

std::vector<std::string> Attrs(const MatmulCase& c, double alpha) {
  return {c.ta ? "transpose_a=true" : "transpose_a=false",
          c.tb ? "transpose_b=true" : "transpose_b=false", "alpha=" + std::to_string(alpha)};
}

TEST(MatmulKernels, MatchAPlainTripleLoop) {
  for (const MatmulCase& c : Cases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      for (bool with_add : {false, true}) {
        const LocalTensor a = GridTensor(dt, c.a, 3);
        const LocalTensor b = GridTensor(dt, c.b, 4);
        const LocalTensor add = GridTensor(dt, OutDims(c), 5);
        std::vector<LocalTensor> in = {a, b};
        if (with_add) in.push_back(add);
        absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(c.op, in, Attrs(c, 0.5));
        ASSERT_TRUE(got.ok()) << c.op << ": " << got.status();
        // Halves: the float result is rounded once; the double reference
        // rounded to the dtype may differ by an ulp.
        EXPECT_EQ(kernels::CompareTensors(
                      (*got)[0], MatmulRef(a, b, c.ta, c.tb, 0.5, with_add ? &add : nullptr),
                      kernels::DefaultTolerance(dt)),
                  "")
            << c.op << " " << DataTypeName(dt) << " add=" << with_add;
      }
    }
  }
}

TEST(MatmulKernels, EmptyContractionGivesZerosOrTheAddend) {
  // Logical extents are >= 1, so an empty contraction is a rank's share
  // of k = 1 split over 2 ranks: its addend of out is zero.
  const LocalTensor a1 = Tensor(DataType::kFloat32, {2, 1}, {1, 2});
  const LocalTensor b1 = Tensor(DataType::kFloat32, {1, 3}, {1, 2, 3});
  absl::StatusOr<std::vector<LocalTensor>> rank1 =
      RunOnRank("matmul", {a1, b1}, {}, "cpu:0-1", {"S(1)", "S(0)", "P"}, 1);
  ASSERT_TRUE(rank1.ok()) << rank1.status();
  EXPECT_EQ((*rank1)[0].ToDoubles(), std::vector<double>(6, 0.0));
  const LocalTensor add = Tensor(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  rank1 = RunOnRank("matmul", {a1, b1, add}, {}, "cpu:0-1", {"S(1)", "S(0)", "B", "P"}, 1);
  ASSERT_TRUE(rank1.ok()) << rank1.status();
  EXPECT_EQ((*rank1)[0].ToDoubles(), add.ToDoubles());
}

TEST(MatmulKernels, LayoutsItCannotComputeAreInternalErrors) {
  const LocalTensor a = GridTensor(DataType::kFloat32, {4, 6}, 1);
  const LocalTensor b = GridTensor(DataType::kFloat32, {6, 5}, 2);
  // k split in a only: the local contractions differ.
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("matmul", {a, b}, {}, "cpu:0-1", {"S(1)", "B", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("local contraction extents differ: 3 in a_0, 6 in b_0"));
  // Batch split in one operand only.
  got = RunOnRank("batch_matmul",
                  {GridTensor(DataType::kFloat32, {4, 2, 3}, 1),
                   GridTensor(DataType::kFloat32, {4, 3, 2}, 2)},
                  {}, "cpu:0-1", {"S(0)", "B", "S(0)"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("local batch dim 0 of out_0"));
  // Integer matrices are not supported.
  EXPECT_THAT(RunOnce("matmul", {IntTensor(DataType::kInt32, {2, 2}, 1),
                               IntTensor(DataType::kInt32, {2, 2}, 2)})
                .status()
                ,
            StatusIs(absl::StatusCode::kUnimplemented));
}

// The runs of MatmulRuns (the CUDA glue's strided-batched gemms) as
// "first:count a_first+a_step b_first+b_step" strings.
std::vector<std::string> Runs(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  kernels::MatmulPlan plan;
  plan.a_matrix = a;
  plan.b_matrix = b;
  std::vector<std::string> out;
  for (const kernels::MatmulRun& r : kernels::MatmulRuns(plan)) {
    out.push_back(std::to_string(r.first) + ":" + std::to_string(r.count) + " " +
                  std::to_string(r.a_first) + "+" + std::to_string(r.a_step) + " " +
                  std::to_string(r.b_first) + "+" + std::to_string(r.b_step));
  }
  return out;
}

TEST(MatmulKernels, RunsCoverEveryMatrixWithEvenSteps) {
  using ::testing::ElementsAre;
  EXPECT_THAT(Runs({}, {}), ElementsAre());
  EXPECT_THAT(Runs({0}, {0}), ElementsAre("0:1 0+0 0+0"));
  // Equal batch dims; a repeated (a [1,1,m,k] x b [2,k,n]).
  EXPECT_THAT(Runs({0, 1, 2}, {0, 1, 2}), ElementsAre("0:3 0+1 0+1"));
  EXPECT_THAT(Runs({0, 0}, {0, 1}), ElementsAre("0:2 0+0 0+1"));
  // Batches [2,1] x [1,3]: one run per a matrix.
  EXPECT_THAT(Runs({0, 0, 0, 1, 1, 1}, {0, 1, 2, 0, 1, 2}),
              ElementsAre("0:3 0+0 0+1", "3:3 1+0 0+1"));
  // b walked backwards (no plan does so; MatmulRuns must still give no
  // negative step): runs of one.
  EXPECT_THAT(Runs({0, 1, 0}, {2, 1, 0}), ElementsAre("0:1 0+0 2+0", "1:1 1+0 1+0", "2:1 0+0 0+0"));
}

TEST(MatmulKernels, EveryCandidateAgreesWithOneRank) {
  for (const MatmulCase& c : Cases()) {
    for (bool with_add : {false, true}) {
      std::vector<LocalTensor> in = {GridTensor(DataType::kFloat32, c.a, 6),
                                     GridTensor(DataType::kFloat32, c.b, 7)};
      if (with_add) in.push_back(GridTensor(DataType::kFloat32, OutDims(c), 8));
      SweepResult r = SweepSignatures(c.op, in, Attrs(c, 1.5));
      EXPECT_GT(r.checked, 5) << c.op;
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
  // f64 and f16 (partial sums of f16 products round per addend).
  SweepResult r = SweepSignatures("matmul", {GridTensor(DataType::kFloat64, {7, 5}, 9),
                                             GridTensor(DataType::kFloat64, {5, 3}, 10)});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
  SweepOptions half;
  half.tolerance = kernels::Tolerance{4e-3, 4e-2};
  r = SweepSignatures("broadcast_matmul", {GridTensor(DataType::kFloat16, {3, 5, 4}, 11),
                                           GridTensor(DataType::kFloat16, {4, 6}, 12)},
                      {}, half);
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

}  // namespace
}  // namespace oneflow_sbp::testing
