// CPU kernels of sparse_softmax_cross_entropy[_ms] and their gradients:
// against plain formulas in double, global label checks, the class-split
// (vocab-parallel) layout of the _ms op with ranks as threads (statistics
// all-reduced across the ranks that split the classes, on 1-D and N-D
// meshes), its refusal without a communicator, and every candidate
// signature of the rules against the single-rank run.
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

NdSbp Nd(const std::string& text) { return *NdSbp::Parse(text); }

// Pseudo-random labels in [0, depth).
LocalTensor Labels(DataType dtype, const std::vector<int64_t>& dims, int64_t depth, uint64_t seed) {
  return IntTensor(dtype, dims, seed, 0, static_cast<int>(depth - 1));
}

std::vector<int64_t> Rows(const std::vector<int64_t>& dims) {
  return std::vector<int64_t>(dims.begin(), dims.end() - 1);
}

// prob and the loss of prediction [..., D] against label [...].
std::vector<LocalTensor> CeRef(const LocalTensor& x, const LocalTensor& label) {
  const int64_t d = x.dim(x.rank() - 1);
  std::vector<double> prob(x.elem_cnt()), out(label.elem_cnt());
  for (int64_t r = 0; r < label.elem_cnt(); ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < d; ++c) mx = std::max(mx, x.GetDouble(r * d + c));
    for (int64_t c = 0; c < d; ++c) sum += std::exp(x.GetDouble(r * d + c) - mx);
    for (int64_t c = 0; c < d; ++c) prob[r * d + c] = std::exp(x.GetDouble(r * d + c) - mx) / sum;
    out[r] = -std::log(prob[r * d + static_cast<int64_t>(label.GetDouble(r))]);
  }
  const std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  return {Tensor(x.dtype(), dims, prob), Tensor(x.dtype(), Rows(dims), out)};
}

LocalTensor CeGradRef(const LocalTensor& dy, const LocalTensor& label, const LocalTensor& prob) {
  const int64_t d = prob.dim(prob.rank() - 1);
  std::vector<double> dx(prob.elem_cnt());
  for (int64_t i = 0; i < prob.elem_cnt(); ++i) {
    const int64_t r = i / d;
    dx[i] = (prob.GetDouble(i) - (label.GetDouble(r) == i % d ? 1 : 0)) * dy.GetDouble(r);
  }
  return Tensor(prob.dtype(), std::vector<int64_t>(prob.dims().begin(), prob.dims().end()), dx);
}

const std::string kCe = "sparse_softmax_cross_entropy";
const std::string kCeMs = "sparse_softmax_cross_entropy_ms";

std::string Depth(const std::vector<int64_t>& dims) {
  return "depth=" + std::to_string(dims.back());
}

const std::vector<std::vector<int64_t>>& Shapes() {
  static const auto* shapes =
      new std::vector<std::vector<int64_t>>{{5, 7}, {4, 10}, {2, 3, 5}, {3, 1}, {1, 6}};
  return *shapes;
}

TEST(CrossEntropyKernels, MatchPlainFormulas) {
  for (const auto& dims : Shapes()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      for (DataType lt : {DataType::kInt32, DataType::kInt64}) {
        const LocalTensor x = GridTensor(dt, dims, 1, -3, 3);
        const LocalTensor label = Labels(lt, Rows(dims), dims.back(), 2);
        const std::vector<LocalTensor> want = CeRef(x, label);
        for (const std::string& op : {kCe, kCeMs}) {
          absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(op, {x, label}, {Depth(dims)});
          ASSERT_TRUE(got.ok()) << op << ": " << got.status();
          for (int i = 0; i < 2; ++i) {
            EXPECT_EQ(kernels::CompareTensors((*got)[i], want[i], kernels::DefaultTolerance(dt)),
                      "")
                << op << " output " << i << " " << DataTypeName(dt);
          }
          const LocalTensor dy = GridTensor(dt, Rows(dims), 3);
          got = RunOnce(op + "_grad", {dy, label, want[0]}, {Depth(dims)});
          ASSERT_TRUE(got.ok()) << op << "_grad: " << got.status();
          EXPECT_EQ(kernels::CompareTensors((*got)[0], CeGradRef(dy, label, want[0]),
                                            kernels::DefaultTolerance(dt)),
                    "")
              << op << "_grad " << DataTypeName(dt);
        }
      }
    }
  }
}

TEST(CrossEntropyKernels, LabelsOutsideTheClassesAreInvalid) {
  const LocalTensor x = GridTensor(DataType::kFloat32, {2, 4}, 1);
  for (double bad : {-1.0, 4.0}) {
    const LocalTensor label = Tensor(DataType::kInt64, {2}, {0, bad});
    absl::Status s = RunOnce(kCe, {x, label}, {"depth=4"}).status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(s.message()), HasSubstr("label_0 holds"));
    s = RunOnce(kCe + "_grad", {GridTensor(DataType::kFloat32, {2}, 2), label, x}, {"depth=4"})
            .status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST(CrossEntropyKernels, ClassSplitNeedsACommunicator) {
  const LocalTensor x = GridTensor(DataType::kFloat32, {4, 10}, 1);
  const LocalTensor label = Labels(DataType::kInt64, {4}, 10, 2);
  auto call = CallOrDie(kCeMs, 2, {"depth=10"});
  const NdSbpSignature sig = {Nd("S(1)"), Nd("B"), Nd("S(1)"), Nd("P")};
  absl::Status s = kernels::RunSharded(call, {x, label}, *Placement::Parse("cpu:0-1"), sig)
                       .status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(s.message()), HasSubstr("this layout needs a communicator"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("prediction_0 f32[4,10] (S(1))"));
}

TEST(CrossEntropyKernels, ClassSplitAllReducesAcrossTheSplittingRanks) {
  // Rows whose labels fall on different ranks, uneven class splits (7 over
  // 2 and 3), N-D meshes where the classes are split on one axis (the
  // group is a mesh row or column) or both (the whole mesh), a rank with
  // no rows, and a placement whose ranks are not 0..n-1.
  kernels::HarnessOptions threads;
  threads.ranks_as_threads = true;
  struct Case {
    std::vector<int64_t> dims;
    std::string placement, pred, label, out;
  };
  const std::vector<Case> cases = {
      {{5, 7}, "cpu:0-1", "S(1)", "B", "P"},
      {{5, 7}, "cpu:0-2", "S(1)", "B", "P"},
      {{5, 7}, "cpu:2,5,6", "S(1)", "B", "P"},
      {{5, 7}, "cpu:0-3 [2,2]", "(S(0),S(1))", "(S(0),B)", "(S(0),P)"},
      {{5, 7}, "cpu:0-3 [2,2]", "(S(1),S(0))", "(B,S(0))", "(P,S(0))"},
      {{5, 7}, "cpu:0-3 [2,2]", "(S(1),S(1))", "(B,B)", "(P,P)"},
      {{5, 9}, "cpu:0-5 [2,3]", "(S(1),S(1))", "(B,B)", "(P,P)"},
      {{1, 6}, "cpu:0-3 [2,2]", "(S(0),S(1))", "(S(0),B)", "(S(0),P)"},
      {{2, 3, 6}, "cpu:0-3 [2,2]", "(S(2),S(1))", "(B,S(1))", "(P,S(1))"},
  };
  for (const Case& c : cases) {
    const LocalTensor x = GridTensor(DataType::kFloat64, c.dims, 3, -3, 3);
    const LocalTensor label = Labels(DataType::kInt32, Rows(c.dims), c.dims.back(), 4);
    const std::vector<LocalTensor> want = CeRef(x, label);
    auto call = CallOrDie(kCeMs, 2, {Depth(c.dims)});
    absl::StatusOr<std::vector<LocalTensor>> got = kernels::RunSharded(
        call, {x, label}, *Placement::Parse(c.placement),
        {Nd(c.pred), Nd(c.label), Nd(c.pred), Nd(c.out)}, threads);
    ASSERT_TRUE(got.ok()) << c.placement << " " << c.pred << ": " << got.status();
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(kernels::CompareTensors((*got)[i], want[i], {1e-12, 1e-12}), "")
          << c.placement << " " << c.pred << " output " << i;
    }
  }
}

TEST(CrossEntropyKernels, LossAddendsOnAnAxisThatDoesNotSplitClassesAreRefused) {
  // out:P with whole rows: every rank would add the full loss.
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank(kCeMs,
                {GridTensor(DataType::kFloat32, {4, 10}, 1), Labels(DataType::kInt64, {4}, 10, 2)},
                {"depth=10"}, "cpu:0-1", {"B", "B", "B", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("must be P exactly on the mesh axes that split the classes"));
}

TEST(CrossEntropyKernels, EveryCandidateAgreesWithOneRank) {
  SweepOptions threads;
  threads.harness.ranks_as_threads = true;
  for (const auto& dims : Shapes()) {
    const LocalTensor x = GridTensor(DataType::kFloat32, dims, 5, -3, 3);
    const LocalTensor label = Labels(DataType::kInt64, Rows(dims), dims.back(), 6);
    const LocalTensor dy = GridTensor(DataType::kFloat32, Rows(dims), 7);
    const LocalTensor prob = CeRef(x, label)[0];
    SweepResult r = SweepSignatures(kCe, {x, label}, {Depth(dims)});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    r = SweepSignatures(kCeMs, {x, label}, {Depth(dims)}, threads);
    EXPECT_GE(r.checked, 6);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
    // The sweep does reach the class-split candidates: without threads
    // (no communicator) exactly those fail.
    const SweepResult sequential = SweepSignatures(kCeMs, {x, label}, {Depth(dims)});
    EXPECT_FALSE(sequential.failures.empty());
    for (const std::string& f : sequential.failures) {
      EXPECT_THAT(f, HasSubstr("this layout needs a communicator"));
    }
    for (const std::string& op : {kCe + "_grad", kCeMs + "_grad"}) {
      r = SweepSignatures(op, {dy, label, prob}, {Depth(dims)});
      EXPECT_GE(r.checked, 4);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
