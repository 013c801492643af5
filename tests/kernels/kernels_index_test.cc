// CPU kernels of embedding, embedding_grad, gather, dim_gather and
// argwhere: against plain loops (padding_idx, scale_grad_by_freq, every
// axis, index dtypes i32/i64, data dtypes from bool to f64), global index
// checks, layouts a rank cannot compute, and every candidate signature of
// the rules (vocab-parallel embedding and gather to P included) on 2 and 3
// ranks and on [2,2] / [2,3] meshes against the single-rank run.
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

// in.take(indices, axis) with NumPy's shapes.
LocalTensor GatherRef(const LocalTensor& in, const LocalTensor& indices, int axis) {
  std::vector<int64_t> in_dims = DimsOf(in), out_dims(in_dims.begin(), in_dims.begin() + axis);
  for (int64_t d : DimsOf(indices)) out_dims.push_back(d);
  out_dims.insert(out_dims.end(), in_dims.begin() + axis + 1, in_dims.end());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= in.dim(d);
  for (int d = axis + 1; d < in.rank(); ++d) inner *= in.dim(d);
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < indices.elem_cnt(); ++j) {
      const int64_t v = static_cast<int64_t>(indices.GetDouble(j));
      for (int64_t i = 0; i < inner; ++i) {
        out.push_back(in.GetDouble((o * in.dim(axis) + v) * inner + i));
      }
    }
  }
  return Tensor(in.dtype(), out_dims, out);
}

LocalTensor EmbeddingGradRef(const LocalTensor& dy, const LocalTensor& weight,
                             const LocalTensor& indices, int64_t padding, bool scale) {
  const int64_t cols = weight.dim(1);
  std::vector<double> dx(weight.elem_cnt(), 0.0), count(weight.dim(0), 0.0);
  for (int64_t p = 0; p < indices.elem_cnt(); ++p) count[indices.GetDouble(p)] += 1;
  for (int64_t p = 0; p < indices.elem_cnt(); ++p) {
    const int64_t v = static_cast<int64_t>(indices.GetDouble(p));
    if (v == padding) continue;
    for (int64_t c = 0; c < cols; ++c) {
      dx[v * cols + c] += dy.GetDouble(p * cols + c) / (scale ? count[v] : 1.0);
    }
  }
  return Tensor(weight.dtype(), DimsOf(weight), dx);
}

// output[p] = input[p with p[dim] := index[p]].
LocalTensor DimGatherRef(const LocalTensor& input, const LocalTensor& index, int dim) {
  std::vector<double> out(index.elem_cnt());
  std::vector<int64_t> q(index.rank(), 0);
  for (int64_t i = 0; i < index.elem_cnt(); ++i) {
    int64_t at = 0;
    for (int d = 0; d < input.rank(); ++d) {
      at = at * input.dim(d) + (d == dim ? static_cast<int64_t>(index.GetDouble(i)) : q[d]);
    }
    out[i] = input.GetDouble(at);
    for (int d = index.rank() - 1; d >= 0; --d) {
      if (++q[d] < index.dim(d)) break;
      q[d] = 0;
    }
  }
  return Tensor(input.dtype(), DimsOf(index), out);
}

LocalTensor Indices(DataType dt, const std::vector<int64_t>& dims, int64_t extent, uint64_t seed) {
  return IntTensor(dt, dims, seed, 0, static_cast<int>(extent - 1));
}

// ------------------------------------------------------------ embedding

TEST(EmbeddingKernels, MatchPlainLoops) {
  for (DataType dt : {DataType::kFloat32, DataType::kFloat16, DataType::kInt64}) {
    for (DataType it : {DataType::kInt32, DataType::kInt64}) {
      const LocalTensor weight = IntTensor(dt, {10, 4}, 1);
      for (const std::vector<int64_t>& idims :
           std::vector<std::vector<int64_t>>{{3, 5}, {7}, {}}) {
        const LocalTensor idx = Indices(it, idims, 10, 2);
        absl::StatusOr<std::vector<LocalTensor>> got =
            RunOnce("embedding", {weight, idx}, {"padding_idx=3"});
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_TRUE(ExactlyEqual((*got)[0], GatherRef(weight, idx, 0)));
      }
    }
  }
  for (bool scale : {false, true}) {
    for (int64_t padding : {-1, 2}) {
      const LocalTensor weight = GridTensor(DataType::kFloat64, {10, 4}, 3);
      const LocalTensor idx = Indices(DataType::kInt64, {3, 5}, 10, 4);
      const LocalTensor dy = GridTensor(DataType::kFloat64, {3, 5, 4}, 5);
      absl::StatusOr<std::vector<LocalTensor>> got = RunOnce(
          "embedding_grad", {dy, weight, idx},
          {"padding_idx=" + std::to_string(padding),
           scale ? "scale_grad_by_freq=true" : "scale_grad_by_freq=false"});
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(kernels::CompareTensors((*got)[0],
                                        EmbeddingGradRef(dy, weight, idx, padding, scale),
                                        {1e-12, 1e-12}),
                "");
    }
  }
}

TEST(EmbeddingKernels, IndicesAreGlobalAndChecked) {
  const LocalTensor weight = IntTensor(DataType::kFloat32, {6, 2}, 1);
  const LocalTensor idx = Tensor(DataType::kInt64, {3}, {0, 5, 3});
  // Rank 1 of weight:S(0) holds rows [3,6): out row 1 is weight row 5,
  // its local row 2; rows 0 is not its: zeros in its addend.
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("embedding", {weight, idx}, {}, "cpu:0-1", {"S(0)", "B", "P"}, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].ToDoubles(),
            (std::vector<double>{0, 0, weight.GetDouble(10), weight.GetDouble(11),
                                 weight.GetDouble(6), weight.GetDouble(7)}));
  // The same layout with a whole output cannot be computed locally.
  got = RunOnRank("embedding", {weight, idx}, {}, "cpu:0-1", {"S(0)", "B", "B"}, 1);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("cannot be computed locally"));
  // Out-of-range indices.
  for (double bad : {-1.0, 6.0}) {
    absl::Status s =
        RunOnce("embedding", {weight, Tensor(DataType::kInt32, {2}, {1, bad})}).status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(s.message()), HasSubstr("indices_0 holds"));
  }
  // embedding_grad with part of the indices and scale_grad_by_freq.
  got = RunOnRank("embedding_grad",
                  {GridTensor(DataType::kFloat32, {4, 2}, 2), weight,
                   Tensor(DataType::kInt64, {4}, {1, 1, 2, 1})},
                  {"scale_grad_by_freq=true"}, "cpu:0-1", {"S(0)", "B", "S(0)", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("needs the count of every index"));
}

TEST(EmbeddingKernels, EveryCandidateAgreesWithOneRank) {
  struct Case {
    std::vector<int64_t> weight, indices;
  };
  for (const Case& c : std::vector<Case>{{{10, 4}, {3, 5}}, {{7, 5}, {6}}, {{5, 3}, {2, 1, 4}}}) {
    const LocalTensor weight = GridTensor(DataType::kFloat32, c.weight, 1);
    const LocalTensor idx = Indices(DataType::kInt64, c.indices, c.weight[0], 2);
    std::vector<int64_t> out = c.indices;
    out.push_back(c.weight[1]);
    const LocalTensor dy = GridTensor(DataType::kFloat32, out, 3);
    for (const std::string scale : {"false", "true"}) {
      const std::vector<std::string> attrs = {"padding_idx=1", "scale_grad_by_freq=" + scale};
      SweepResult r = SweepSignatures("embedding", {weight, idx}, attrs);
      EXPECT_GE(r.checked, 6);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
      r = SweepSignatures("embedding_grad", {dy, weight, idx}, attrs);
      EXPECT_GE(r.checked, 6);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
  SweepResult r = SweepSignatures("embedding", {IntTensor(DataType::kInt32, {9, 3}, 4),
                                                Indices(DataType::kInt32, {4, 2}, 9, 5)});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

// --------------------------------------------------------------- gather

struct GatherCase {
  std::vector<int64_t> in, indices;
  int axis;
};

const std::vector<GatherCase>& GatherCases() {
  static const auto* cases = new std::vector<GatherCase>{
      {{6, 7}, {2, 3}, 1}, {{6, 7}, {2, 3}, 0}, {{5, 4, 3}, {4}, 1}, {{7}, {5}, 0},
      {{5, 4, 3}, {}, 2},
  };
  return *cases;
}

TEST(GatherKernel, MatchesAPlainLoop) {
  for (const GatherCase& c : GatherCases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kBFloat16, DataType::kInt32}) {
      const LocalTensor in = IntTensor(dt, c.in, 1);
      const LocalTensor idx = Indices(DataType::kInt32, c.indices, c.in[c.axis], 2);
      absl::StatusOr<std::vector<LocalTensor>> got =
          RunOnce("gather", {in, idx}, {"axis=" + std::to_string(c.axis)});
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(ExactlyEqual((*got)[0], GatherRef(in, idx, c.axis)));
    }
  }
  // A negative axis counts from the end.
  const LocalTensor in = IntTensor(DataType::kFloat32, {3, 4}, 3);
  const LocalTensor idx = Tensor(DataType::kInt64, {2}, {3, 0});
  EXPECT_TRUE(ExactlyEqual((*RunOnce("gather", {in, idx}, {"axis=-1"}))[0], GatherRef(in, idx, 1)));
}

TEST(GatherKernel, EveryCandidateAgreesWithOneRank) {
  for (const GatherCase& c : GatherCases()) {
    SweepResult r = SweepSignatures(
        "gather",
        {GridTensor(DataType::kFloat32, c.in, 4), Indices(DataType::kInt64, c.indices, c.in[c.axis], 5)},
        {"axis=" + std::to_string(c.axis)});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
  SweepResult r = SweepSignatures("gather", {BoolTensor({6, 5}, 6), Indices(DataType::kInt32, {4}, 6, 7)});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

// ----------------------------------------------------------- dim_gather

struct DimGatherCase {
  std::vector<int64_t> input, index;
  int dim;
};

const std::vector<DimGatherCase>& DimGatherCases() {
  static const auto* cases = new std::vector<DimGatherCase>{
      {{4, 6}, {4, 3}, 1}, {{4, 6}, {2, 6}, 0}, {{3, 4, 5}, {3, 4, 2}, 2},
      {{3, 4, 5}, {3, 6, 5}, 1}, {{3, 4, 5}, {2, 3, 5}, 0}, {{7}, {9}, 0},
  };
  return *cases;
}

TEST(DimGatherKernel, MatchesAPlainLoop) {
  for (const DimGatherCase& c : DimGatherCases()) {
    for (DataType dt : {DataType::kFloat32, DataType::kInt64, DataType::kBool}) {
      const LocalTensor input = dt == DataType::kBool ? BoolTensor(c.input, 1) : IntTensor(dt, c.input, 1);
      const LocalTensor index = Indices(DataType::kInt64, c.index, c.input[c.dim], 2);
      absl::StatusOr<std::vector<LocalTensor>> got =
          RunOnce("dim_gather", {input, index}, {"dim=" + std::to_string(c.dim)});
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(ExactlyEqual((*got)[0], DimGatherRef(input, index, c.dim)));
    }
  }
}

TEST(DimGatherKernel, EveryCandidateAgreesWithOneRank) {
  for (const DimGatherCase& c : DimGatherCases()) {
    SweepResult r = SweepSignatures("dim_gather",
                                    {GridTensor(DataType::kFloat32, c.input, 3),
                                     Indices(DataType::kInt32, c.index, c.input[c.dim], 4)},
                                    {"dim=" + std::to_string(c.dim)});
    EXPECT_GE(r.checked, 4);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
  // OneFlow's index:S(0) input:S(0) with index shorter than input (the
  // pair our rule drops): rank 1 holds index row 1 but input rows [2,4).
  absl::StatusOr<std::vector<LocalTensor>> got = RunOnRank("dim_gather", {GridTensor(DataType::kFloat32, {4, 6}, 1),
                                 Indices(DataType::kInt64, {2, 3}, 6, 2)},
                {"dim=1"}, "cpu:0-1", {"S(0)", "S(0)", "S(0)"}, 1);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("cannot be computed locally"));
}

// ------------------------------------------------------------- argwhere

TEST(ArgwhereKernel, ListsNonzeroCoordinatesThenZeros) {
  const LocalTensor x = Tensor(DataType::kFloat32, {2, 3}, {0, 1.5, 0, -2, 0, NAN});
  for (const std::string dtype : {"i32", "i64"}) {
    absl::StatusOr<std::vector<LocalTensor>> got = RunOnce("argwhere", {x}, {"dtype=" + dtype});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)[0].ToDoubles(),
              (std::vector<double>{0, 1, 1, 0, 1, 2, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ((*got)[1].ToDoubles(), std::vector<double>{3});
  }
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnce("argwhere", {Tensor(DataType::kBool, {4}, {0, 1, 1, 0})});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].ToDoubles(), (std::vector<double>{1, 2, 0, 0}));
  // A scalar would give output [1,0], which Shape cannot express: the
  // shape function refuses it before any kernel runs.
  EXPECT_THAT(RunOnce("argwhere", {Tensor(DataType::kInt32, {}, {7})}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  // Only whole inputs.
  got = RunOnRank("argwhere", {x}, {}, "cpu:0-1", {"S(0)", "B", "B"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
}

TEST(ArgwhereKernel, EveryCandidateAgreesWithOneRank) {
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{4, 6}, {5}, {2, 3, 2}}) {
    SweepResult r = SweepSignatures("argwhere", {IntTensor(DataType::kInt32, dims, 1, -1, 1)});
    EXPECT_GE(r.checked, 2);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
