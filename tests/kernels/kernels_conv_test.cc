// CPU kernels of bias_add and conv2d: against plain loops in double
// (strides, padding, dilation, groups, bias, _add_to_output, every
// floating dtype; bias_add also integers), the errors for layouts and
// attributes the kernels cannot take, and every candidate signature of the
// rules on 2 and 3 ranks and on [2,2] / [2,3] meshes against one rank.
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

// ------------------------------------------------------------- bias_add

LocalTensor BiasAddRef(const LocalTensor& a, const LocalTensor& b, int axis) {
  std::vector<double> out(a.elem_cnt());
  int64_t inner = 1;
  for (int d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  for (int64_t i = 0; i < a.elem_cnt(); ++i) {
    out[i] = a.GetDouble(i) + b.GetDouble((i / inner) % a.dim(axis));
  }
  return Tensor(a.dtype(), std::vector<int64_t>(a.dims().begin(), a.dims().end()), out);
}

struct BiasCase {
  std::vector<int64_t> a;
  int axis;
};

const std::vector<BiasCase>& BiasCases() {
  static const auto* cases =
      new std::vector<BiasCase>{{{4, 6}, 1}, {{5, 7, 3}, 1}, {{5, 7, 3}, 0}, {{5, 7, 3}, 2}, {{7}, 0}};
  return *cases;
}

TEST(BiasAddKernel, MatchesAPlainLoop) {
  for (const BiasCase& c : BiasCases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kBFloat16,
                        DataType::kInt32, DataType::kInt64}) {
      const bool integer = dt == DataType::kInt32 || dt == DataType::kInt64;
      const LocalTensor a = integer ? IntTensor(dt, c.a, 1) : GridTensor(dt, c.a, 1);
      const LocalTensor b = IntTensor(dt, {c.a[c.axis]}, 2);
      absl::StatusOr<std::vector<LocalTensor>> got =
          RunOnce("bias_add", {a, b}, {"axis=" + std::to_string(c.axis)});
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(kernels::CompareTensors((*got)[0], BiasAddRef(a, b, c.axis),
                                        kernels::DefaultTolerance(dt)),
                "");
    }
  }
  // A negative axis counts from the end.
  const LocalTensor a = GridTensor(DataType::kFloat32, {3, 4}, 3);
  const LocalTensor b = GridTensor(DataType::kFloat32, {4}, 4);
  EXPECT_EQ(kernels::CompareTensors((*RunOnce("bias_add", {a, b}, {"axis=-1"}))[0],
                                    BiasAddRef(a, b, 1), {0, 0}),
            "");
}

TEST(BiasAddKernel, EveryCandidateAgreesWithOneRank) {
  for (const BiasCase& c : BiasCases()) {
    SweepResult r = SweepSignatures("bias_add",
                                    {GridTensor(DataType::kFloat32, c.a, 5),
                                     GridTensor(DataType::kFloat32, {c.a[c.axis]}, 6)},
                                    {"axis=" + std::to_string(c.axis)});
    EXPECT_GT(r.checked, 3);
    EXPECT_TRUE(r.failures.empty()) << r.Report();
  }
  SweepResult r = SweepSignatures(
      "bias_add", {IntTensor(DataType::kInt64, {5, 4}, 7), IntTensor(DataType::kInt64, {4}, 8)});
  EXPECT_TRUE(r.failures.empty()) << r.Report();
}

// --------------------------------------------------------------- conv2d

struct ConvCase {
  std::vector<int64_t> in, weight;  // NCHW, [F, C/groups, kh, kw]
  std::vector<int64_t> strides = {1, 1}, pad = {0, 0}, dilation = {1, 1};
  int64_t groups = 1;
};

std::string Pair(const std::vector<int64_t>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]);
}

std::vector<std::string> ConvAttrs(const ConvCase& c) {
  return {"filters=" + std::to_string(c.weight[0]),
          "kernel_size=" + std::to_string(c.weight[2]) + "," + std::to_string(c.weight[3]),
          "strides=" + Pair(c.strides), "padding_before=" + Pair(c.pad),
          "dilation_rate=" + Pair(c.dilation), "groups=" + std::to_string(c.groups)};
}

std::vector<int64_t> ConvOutDims(const ConvCase& c) {
  std::vector<int64_t> dims = {c.in[0], c.weight[0]};
  for (int s = 0; s < 2; ++s) {
    dims.push_back((c.in[2 + s] + 2 * c.pad[s] - (c.dilation[s] * (c.weight[2 + s] - 1) + 1)) /
                       c.strides[s] +
                   1);
  }
  return dims;
}

// A direct 7-deep loop.
LocalTensor ConvRef(const ConvCase& c, const LocalTensor& in, const LocalTensor& w,
                    const LocalTensor* bias, const LocalTensor* add) {
  const std::vector<int64_t> od = ConvOutDims(c);
  const int64_t C = c.in[1], H = c.in[2], W = c.in[3], F = c.weight[0];
  const int64_t cg = c.weight[1], fg = F / c.groups, kh = c.weight[2], kw = c.weight[3];
  std::vector<double> out(od[0] * od[1] * od[2] * od[3]);
  int64_t at = 0;
  for (int64_t n = 0; n < od[0]; ++n) {
    for (int64_t f = 0; f < F; ++f) {
      for (int64_t y = 0; y < od[2]; ++y) {
        for (int64_t x = 0; x < od[3]; ++x, ++at) {
          double sum = (bias ? bias->GetDouble(f) : 0) + (add ? add->GetDouble(at) : 0);
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t ch = (f / fg) * cg + ci;
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * c.strides[0] - c.pad[0] + i * c.dilation[0];
                const int64_t ix = x * c.strides[1] - c.pad[1] + j * c.dilation[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                sum += in.GetDouble(((n * C + ch) * H + iy) * W + ix) *
                       w.GetDouble(((f * cg + ci) * kh + i) * kw + j);
              }
            }
          }
          out[at] = sum;
        }
      }
    }
  }
  return Tensor(in.dtype(), od, out);
}

const std::vector<ConvCase>& ConvCases() {
  static const auto* cases = new std::vector<ConvCase>{
      {{2, 3, 6, 5}, {4, 3, 3, 3}},
      {{3, 4, 7, 6}, {5, 4, 3, 2}, {2, 2}, {1, 1}},
      {{2, 2, 7, 7}, {3, 2, 2, 2}, {1, 2}, {1, 0}, {2, 2}},
      {{2, 4, 5, 5}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {{3, 3, 5, 4}, {3, 1, 2, 2}, {1, 1}, {0, 1}, {1, 1}, 3},  // depthwise
      {{1, 5, 4, 4}, {7, 5, 1, 1}},                                // 1x1
  };
  return *cases;
}

// Input counts per declared arg (in, weight, bias, _add_to_output).
std::vector<int> Counts(bool bias, bool add) { return {1, 1, bias ? 1 : 0, add ? 1 : 0}; }

TEST(Conv2dKernel, MatchesADirectLoop) {
  for (const ConvCase& c : ConvCases()) {
    for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16,
                        DataType::kBFloat16}) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool with_bias = variant & 1, with_add = variant & 2;
        const LocalTensor in = GridTensor(dt, c.in, 1, -1, 1);
        const LocalTensor w = GridTensor(dt, c.weight, 2, -1, 1);
        const LocalTensor bias = GridTensor(dt, {c.weight[0]}, 3);
        const LocalTensor add = GridTensor(dt, ConvOutDims(c), 4);
        std::vector<LocalTensor> inputs = {in, w};
        if (with_bias) inputs.push_back(bias);
        if (with_add) inputs.push_back(add);
        auto call = CallWithCounts("conv2d", Counts(with_bias, with_add), ConvAttrs(c));
        absl::StatusOr<std::vector<LocalTensor>> got = kernels::RunReference(call, inputs);
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_EQ(kernels::CompareTensors(
                      (*got)[0],
                      ConvRef(c, in, w, with_bias ? &bias : nullptr, with_add ? &add : nullptr),
                      kernels::DefaultTolerance(dt)),
                  "")
            << call->ToString() << " " << DataTypeName(dt);
      }
    }
  }
}

TEST(Conv2dKernel, BadLayoutsAndAttributes) {
  const ConvCase c = ConvCases()[0];
  const LocalTensor in = GridTensor(DataType::kFloat32, c.in, 1);
  const LocalTensor w = GridTensor(DataType::kFloat32, c.weight, 2);
  // Channels split in the input only.
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank("conv2d", {in, w}, ConvAttrs(c), "cpu:0-1", {"S(1)", "B", "P"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("do not form a convolution"));
  // A split image height changes the local output height.
  got = RunOnRank("conv2d", {in, w}, ConvAttrs(c), "cpu:0-1", {"S(2)", "B", "S(2)"}, 0);
  EXPECT_THAT(got, StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("preallocated out_0"));
}

TEST(Conv2dKernel, EveryCandidateAgreesWithOneRank) {
  for (const ConvCase& c : ConvCases()) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool with_bias = variant & 1, with_add = variant & 2;
      std::vector<LocalTensor> inputs = {GridTensor(DataType::kFloat32, c.in, 5),
                                         GridTensor(DataType::kFloat32, c.weight, 6)};
      if (with_bias) inputs.push_back(GridTensor(DataType::kFloat32, {c.weight[0]}, 7));
      if (with_add) inputs.push_back(GridTensor(DataType::kFloat32, ConvOutDims(c), 8));
      SweepResult r = SweepSignatures(
          CallWithCounts("conv2d", Counts(with_bias, with_add), ConvAttrs(c)), inputs);
      EXPECT_GT(r.checked, 2);
      EXPECT_TRUE(r.failures.empty()) << r.Report();
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::testing
