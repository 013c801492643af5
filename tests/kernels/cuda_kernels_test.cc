// CUDA kernels and the device seam against the CPU kernels (GPU only).
//
// Built only under --config=cuda. Without a GPU every test is skipped and
// main() prints "SKIPPED: no CUDA device": a skip is NOT a pass, and the
// line makes that visible in CI logs (docs/GPU.md).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/shape.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/kernel_registry.h"
#include "kernels/shard_harness.h"
#include "runtime/region_copy.h"
#include "tests/kernels/cuda_compare.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using testing::Case;
using testing::CompareSharded;
using testing::CompareUpdateWithCpu;
using testing::CompareWithCpu;
using testing::GridTensor;
using testing::RunOnRank;

// A slice from ranges (end > begin in every dim).
TensorSlice Box(std::vector<IndexRange> ranges) {
  std::vector<int64_t> dims;
  for (const IndexRange& r : ranges) dims.push_back(r.end);
  TensorSlice s(*Shape::Make(dims));
  for (size_t d = 0; d < ranges.size(); ++d) s.set_range(static_cast<int>(d), ranges[d]);
  return s;
}

std::vector<DataType> Floating() {
  return {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16};
}

TEST(CudaDeviceTest, CopyToAndBackIsExact) {
  REQUIRE_DEVICE();
  LocalTensor x = GridTensor(DataType::kFloat32, {37, 5}, 1);
  absl::StatusOr<LocalTensor> d = x.CopyTo(DeviceType::kCuda);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->device(), DeviceType::kCuda);
  LocalTensor c = d->Clone();
  absl::StatusOr<LocalTensor> back = c.CopyTo(DeviceType::kCpu);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DescribeMismatch(*back, x), "");
  LocalTensor z = *LocalTensor::Zeros(DataType::kFloat32, {4}, DeviceType::kCuda);
  EXPECT_EQ(z.CopyTo(DeviceType::kCpu)->ToDoubles(), std::vector<double>(4, 0.0));
}

TEST(CudaDeviceTest, RegionCopiesMatchCpu) {
  REQUIRE_DEVICE();
  // Shard holds rows [2,6) x cols [0,5) of a [8,5] tensor; move the block
  // [3,5) x [1,4) through pack, unpack (copy and add) and shard-to-shard.
  const TensorSlice slice = Box({{2, 6}, {0, 5}});
  const TensorSlice region = Box({{3, 5}, {1, 4}});
  LocalTensor host = GridTensor(DataType::kFloat32, {4, 5}, 3);
  LocalTensor dev = *host.CopyTo(DeviceType::kCuda);
  std::vector<float> packed_cpu(6);
  ASSERT_TRUE(runtime::PackRegion(host, slice, region, packed_cpu.data()).ok());
  LocalTensor packed_dev = *LocalTensor::Empty(DataType::kFloat32, {6}, DeviceType::kCuda);
  ASSERT_TRUE(runtime::PackRegion(dev, slice, region, packed_dev.raw_data()).ok());
  EXPECT_EQ(packed_dev.CopyTo(DeviceType::kCpu)->ToDoubles(),
            std::vector<double>(packed_cpu.begin(), packed_cpu.end()));
  for (runtime::RegionOp op : {runtime::RegionOp::kCopy, runtime::RegionOp::kAdd}) {
    LocalTensor h2 = host.Clone();
    LocalTensor d2 = *host.CopyTo(DeviceType::kCuda);
    ASSERT_TRUE(runtime::UnpackRegion(packed_cpu.data(), region, &h2, slice, op).ok());
    ASSERT_TRUE(runtime::UnpackRegion(packed_dev.raw_data(), region, &d2, slice, op).ok());
    EXPECT_EQ(DescribeMismatch(*d2.CopyTo(DeviceType::kCpu), h2), "");
  }
  // Different devices are refused, not copied.
  LocalTensor other = host.Clone();
  EXPECT_THAT(runtime::CopyRegion(dev, slice, region, &other, slice, runtime::RegionOp::kCopy),
            StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CudaKernelsTest, UnaryMatchesCpu) {
  REQUIRE_DEVICE();
  for (const char* op : {"abs", "ceil", "cos", "erf", "exp", "fast_gelu", "floor", "gelu",
                         "mish", "negative", "relu", "round", "sigmoid", "sign", "silu", "sin",
                         "softplus", "square", "tanh", "identity"}) {
    for (DataType t : Floating()) {
      // Odd sizes exercise the vector body and the scalar tail.
      EXPECT_EQ(CompareWithCpu({op, {GridTensor(t, {7, 131}, 11)}}), "") << op;
    }
  }
  for (const char* op : {"log", "rsqrt", "sqrt", "reciprocal"}) {
    EXPECT_EQ(CompareWithCpu({op, {GridTensor(DataType::kFloat32, {1000}, 5, 0.125, 4)}}), "")
        << op;
  }
}

TEST(CudaKernelsTest, BinaryWithBroadcastingMatchesCpu) {
  REQUIRE_DEVICE();
  for (const char* op : {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_maximum",
                         "broadcast_minimum"}) {
    for (DataType t : Floating()) {
      EXPECT_EQ(CompareWithCpu({op, {GridTensor(t, {6, 40}, 1), GridTensor(t, {6, 40}, 2)}}), "")
          << op;
      EXPECT_EQ(CompareWithCpu({op, {GridTensor(t, {6, 1, 5}, 3), GridTensor(t, {4, 1}, 4)}}), "")
          << op;
    }
  }
  EXPECT_EQ(CompareWithCpu({"broadcast_div",
                            {GridTensor(DataType::kFloat32, {3, 8}, 1),
                             GridTensor(DataType::kFloat32, {8}, 2, 0.5, 2)}}),
            "");
}

TEST(CudaKernelsTest, BiasAddReduceSoftmaxMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType t : Floating()) {
    EXPECT_EQ(CompareWithCpu({"bias_add", {GridTensor(t, {4, 6, 5}, 1), GridTensor(t, {6}, 2)},
                              {"axis=1"}}),
              "");
    for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"}) {
      for (const char* axis : {"axis=0", "axis=1", "axis=[0,2]"}) {
        EXPECT_EQ(CompareWithCpu({op, {GridTensor(t, {5, 7, 3}, 4)}, {axis}}), "")
            << op << " " << axis;
      }
    }
    for (const char* op : {"softmax", "log_softmax"}) {
      EXPECT_EQ(CompareWithCpu({op, {GridTensor(t, {9, 300}, 5)}}), "") << op;
    }
    LocalTensor y = (*testing::RunOnce("softmax", {GridTensor(t, {9, 300}, 5)}))[0];
    EXPECT_EQ(CompareWithCpu({"softmax_grad", {y, GridTensor(t, {9, 300}, 6)}}), "");
    LocalTensor lp = (*testing::RunOnce("log_softmax", {GridTensor(t, {9, 300}, 5)}))[0];
    EXPECT_EQ(CompareWithCpu({"log_softmax_grad", {lp, GridTensor(t, {9, 300}, 6)}}), "");
  }
}

TEST(CudaKernelsTest, SoftmaxRowsPastTheGridCapMatchCpu) {
  REQUIRE_DEVICE();
  // 70000 rows: more than GridFor's 65536 blocks, so blocks must stride on
  // to the rest (a one-pass grid would leave them poisoned).
  for (DataType t : {DataType::kFloat32, DataType::kFloat64}) {
    const LocalTensor x = GridTensor(t, {70000, 5}, 5);
    for (const char* op : {"softmax", "log_softmax"}) {
      EXPECT_EQ(CompareWithCpu({op, {x}}), "") << op;
    }
    const LocalTensor y = (*testing::RunOnce("softmax", {x}))[0];
    EXPECT_EQ(CompareWithCpu({"softmax_grad", {y, GridTensor(t, {70000, 5}, 6)}}), "");
    const LocalTensor lp = (*testing::RunOnce("log_softmax", {x}))[0];
    EXPECT_EQ(CompareWithCpu({"log_softmax_grad", {lp, GridTensor(t, {70000, 5}, 6)}}), "");
  }
}

TEST(CudaKernelsTest, SoftmaxOfLargeLogitsMatchesCpu) {
  REQUIRE_DEVICE();
  // Logits far apart (the default grid stays in [-1, 1]): exp(x - max)
  // underflows to 0 for much of a row, and log_softmax reaches -120.
  for (DataType t : Floating()) {
    const LocalTensor x = GridTensor(t, {4, 257}, 7, -60, 60);
    for (const char* op : {"softmax", "log_softmax"}) {
      EXPECT_EQ(CompareWithCpu({op, {x}}), "") << op << " " << DataTypeName(t);
    }
  }
}

TEST(CudaKernelsTest, MatmulFamilyMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType t : Floating()) {
    EXPECT_EQ(CompareWithCpu({"matmul", {GridTensor(t, {5, 3}, 1), GridTensor(t, {3, 7}, 2)}}),
              "");
    EXPECT_EQ(CompareWithCpu({"matmul",
                              {GridTensor(t, {3, 5}, 1), GridTensor(t, {7, 3}, 2)},
                              {"transpose_a=true", "transpose_b=true", "alpha=0.5"}}),
              "");
    EXPECT_EQ(CompareWithCpu({"batch_matmul",
                              {GridTensor(t, {4, 5, 3}, 1), GridTensor(t, {4, 3, 6}, 2)}}),
              "");
    EXPECT_EQ(CompareWithCpu({"broadcast_matmul",
                              {GridTensor(t, {2, 4, 5, 3}, 1), GridTensor(t, {3, 6}, 2)}}),
              "");
  }
}

TEST(CudaKernelsTest, DropoutIsLayoutIndependentAndMatchesCpu) {
  REQUIRE_DEVICE();
  const Case c{"dropout", {GridTensor(DataType::kFloat32, {10, 33}, 1)}, {"rate=0.3", "seed=77"}};
  EXPECT_EQ(CompareWithCpu(c), "");
  // Rank 1 of a row split holds rows [5,10): the same mask bits as the
  // CPU kernel for the same rows.
  EXPECT_EQ(CompareWithCpu(c, "cpu:0-1", "cuda:0-1", {"S(0)", "S(0)", "S(0)"}, 1), "");
  EXPECT_EQ(CompareWithCpu(c, "cpu:0-1", "cuda:0-1", {"S(1)", "S(1)", "S(1)"}, 1), "");
}

// "" if every output of `c` (one rank, every blob B) has the CPU's exact
// values on the GPU, sign of zero included (any NaN matches any NaN): for
// kernels with no rounding freedom (selection, one rounded product and
// sum), where CompareWithCpu's tolerance would hide an fma or a -0.
std::string BitwiseLikeCpu(const Case& c) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      testing::MakeCall(c.op, static_cast<int>(c.inputs.size()), c.attrs);
  if (!call.ok()) return std::string(call.status().message());
  const std::vector<std::string> sig((*call)->num_inputs() + (*call)->num_outputs(), "B");
  absl::StatusOr<std::vector<LocalTensor>> want = RunOnRank(c.op, c.inputs, c.attrs, "cpu:0", sig, 0);
  if (!want.ok()) return "cpu: " + std::string(want.status().message());
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank(c.op, c.inputs, c.attrs, "cuda:0", sig, 0, DeviceType::kCuda);
  if (!got.ok()) return "cuda: " + std::string(got.status().message());
  for (size_t o = 0; o < want->size(); ++o) {
    const std::vector<double> w = (*want)[o].ToDoubles(), g = (*got)[o].ToDoubles();
    if (w.size() != g.size()) return c.op + ": element counts differ";
    for (size_t i = 0; i < w.size(); ++i) {
      if (std::isnan(w[i]) && std::isnan(g[i])) continue;
      if (w[i] != g[i] || std::signbit(w[i]) != std::signbit(g[i])) {
        return c.op + " output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
               std::to_string(g[i]) + " (sign " + std::to_string(std::signbit(g[i])) + ") vs " +
               std::to_string(w[i]) + " (sign " + std::to_string(std::signbit(w[i])) + ")";
      }
    }
  }
  return "";
}

TEST(CudaKernelsTest, SelectionsSignsAndDropoutAreBitExact) {
  REQUIRE_DEVICE();
  const double nan = std::nan("");
  for (DataType t : Floating()) {
    SCOPED_TRACE(DataTypeName(t));
    // maximum(-0, +0) is -0 on the CPU (a < b picks), minimum(-0, +0) +0;
    // a NaN operand is the result.
    const LocalTensor a = testing::Tensor(t, {6}, {-0.0, 0.0, nan, 1, -0.0, 2});
    const LocalTensor b = testing::Tensor(t, {6}, {0.0, -0.0, 2, nan, -0.0, 1});
    for (const char* op : {"broadcast_maximum", "broadcast_minimum"}) {
      EXPECT_EQ(BitwiseLikeCpu({op, {a, b}}), "");
    }
    // 0 - x on the CPU: negative(+0) and abs(-0) are +0.
    for (const char* op : {"negative", "abs", "relu", "sign"}) {
      EXPECT_EQ(BitwiseLikeCpu({op, {a}}), "") << op;
    }
    // x * scale rounded, then + add: an fma would differ in the last bit.
    const LocalTensor x = GridTensor(t, {10, 33}, 1), add = GridTensor(t, {10, 33}, 2);
    EXPECT_EQ(BitwiseLikeCpu({"dropout", {x}, {"rate=0.3", "seed=77"}}), "");
    EXPECT_EQ(BitwiseLikeCpu({"dropout", {x, add}, {"rate=0.3", "seed=77"}}), "");
    const LocalTensor mask = (*testing::RunOnce("dropout", {x}, {"rate=0.3", "seed=77"}))[1];
    EXPECT_EQ(BitwiseLikeCpu({"dropout_grad", {add, mask}, {"scale=1.4285714285714286"}}), "");
    EXPECT_EQ(BitwiseLikeCpu({"bias_add", {GridTensor(t, {4, 6, 5}, 1), GridTensor(t, {6}, 2)},
                              {"axis=1"}}),
              "");
  }
}

// One host thread that moves between GPUs gets each GPU's own stream and
// cuBLAS handle (a stream or handle made on GPU 0 cannot launch on GPU 1).
TEST(CudaKernelsTest, AThreadSwitchingGpusRunsOnEach) {
  REQUIRE_DEVICE();
  if (cuda::DeviceCount() < 2) GTEST_SKIP() << "needs 2 GPUs, have " << cuda::DeviceCount();
  const int first = cuda::CurrentDevice();
  for (int device : {0, 1, 0}) {
    SCOPED_TRACE(device);
    ASSERT_EQ(cuda::SetCurrentDevice(device), "");
    EXPECT_EQ(cuda::CurrentDevice(), device);
    EXPECT_EQ(CompareWithCpu({"matmul", {GridTensor(DataType::kFloat32, {5, 3}, 1),
                                         GridTensor(DataType::kFloat32, {3, 7}, 2)}}),
              "");
    EXPECT_EQ(CompareWithCpu({"exp", {GridTensor(DataType::kFloat32, {33}, 1)}}), "");
  }
  ASSERT_EQ(cuda::SetCurrentDevice(first), "");
}

TEST(CudaKernelsTest, MatmulEmptyContractionAndAddToOutputMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType t : Floating()) {
    SCOPED_TRACE(DataTypeName(t));
    // k = 0 (an empty contraction) cannot reach the kernels through a
    // tensor (extents are >= 1), so the launcher is called directly: C =
    // zeros with beta 0 (cuBLAS refused a leading dim of 0), C unchanged
    // with beta 1 (_add_to_output), for one matrix and a strided batch.
    const LocalTensor c_init = GridTensor(t, {2, 3, 4}, 3);
    for (double beta : {0.0, 1.0}) {
      for (int64_t batch : {1, 2}) {
        LocalTensor c = *c_init.CopyTo(DeviceType::kCuda);
        ASSERT_EQ(kernels::cuda::Gemm(static_cast<int>(t), false, false, 3, 4, 0, 1.0, nullptr, 0,
                                      nullptr, 0, beta, c.raw_data(), 12, batch),
                  "");
        const std::vector<double> got = c.CopyTo(DeviceType::kCpu)->ToDoubles();
        const std::vector<double> init = c_init.ToDoubles();
        for (size_t i = 0; i < got.size(); ++i) {
          const bool touched = static_cast<int64_t>(i) < 12 * batch;
          const double want = touched && beta == 0 ? 0.0 : init[i];
          ASSERT_EQ(got[i], want) << "beta " << beta << " batch " << batch << " element " << i;
        }
      }
    }
    EXPECT_EQ(CompareWithCpu({"matmul",
                              {GridTensor(t, {5, 3}, 1), GridTensor(t, {3, 7}, 2),
                               GridTensor(t, {5, 7}, 3)},
                              {"alpha=0.5"}}),
              "");
    EXPECT_EQ(CompareWithCpu({"batch_matmul",
                              {GridTensor(t, {4, 5, 3}, 1), GridTensor(t, {4, 7, 3}, 2),
                               GridTensor(t, {4, 5, 7}, 3)},
                              {"transpose_b=true"}}),
              "");
    EXPECT_EQ(CompareWithCpu({"broadcast_matmul",
                              {GridTensor(t, {2, 3, 5}, 1), GridTensor(t, {5, 6}, 2)}}),
              "");
  }
}

TEST(CudaKernelsTest, ElementwiseLaunchersTakeUnalignedPointers) {
  REQUIRE_DEVICE();
  // A view can start at any element: 4 bytes past a 256-byte aligned
  // buffer the launchers must take their scalar paths, writing exactly
  // elements [1, 41) and nothing before.
  const LocalTensor x = GridTensor(DataType::kFloat32, {41}, 3);
  const LocalTensor y = GridTensor(DataType::kFloat32, {41}, 4);
  LocalTensor dx = *x.CopyTo(DeviceType::kCuda);
  LocalTensor dy = *y.CopyTo(DeviceType::kCuda);
  const LocalTensor fill = *LocalTensor::Full(DataType::kFloat32, {41}, -7);
  LocalTensor du = *fill.CopyTo(DeviceType::kCuda);
  LocalTensor db = *fill.CopyTo(DeviceType::kCuda);
  float* px = static_cast<float*>(dx.raw_data()) + 1;
  float* py = static_cast<float*>(dy.raw_data()) + 1;
  ASSERT_EQ(kernels::cuda::Unary(kernels::cuda::UnaryCode::kSquare, cuda::kF32, px,
                                 static_cast<float*>(du.raw_data()) + 1, 40),
            "");
  const int64_t dims[1] = {40}, unit[1] = {1};
  ASSERT_EQ(kernels::cuda::Binary(kernels::cuda::BinaryCode::kSub, cuda::kF32, 1, dims, unit, unit,
                                  px, py, static_cast<float*>(db.raw_data()) + 1),
            "");
  const std::vector<double> u = du.CopyTo(DeviceType::kCpu)->ToDoubles();
  const std::vector<double> d = db.CopyTo(DeviceType::kCpu)->ToDoubles();
  const std::vector<double> xs = x.ToDoubles(), ys = y.ToDoubles();
  EXPECT_EQ(u[0], -7);
  EXPECT_EQ(d[0], -7);
  for (int i = 1; i < 41; ++i) {
    EXPECT_EQ(u[i], static_cast<double>(static_cast<float>(xs[i]) * static_cast<float>(xs[i])))
        << i;
    EXPECT_EQ(d[i], xs[i] - ys[i]) << i;  // multiples of 1/8: exact
  }
}

TEST(CudaKernelsTest, BadInputsAreStatusesNotCrashes) {
  REQUIRE_DEVICE();
  // exp on integers is not implemented (on either device; relu, abs and a
  // few others are): a clean kUnimplemented.
  absl::StatusOr<std::vector<LocalTensor>> r =
      RunOnRank("exp", {testing::IntTensor(DataType::kInt32, {4}, 1)}, {}, "cuda:0", {"B", "B"},
                0, DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnimplemented)) << r.status();
  r = RunOnRank("dropout", {GridTensor(DataType::kFloat32, {4}, 1)}, {"rate=2", "seed=1"},
                "cuda:0", {"B", "B", "B"}, 0, DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument)) << r.status();
}


// --------------------------------- norms and adam (f32 f64 f16 bf16) --
//
// Each comparison runs per floating dtype (Floating()); the halves keep
// f32 statistics (mean, inv_variance, inv_rms), as the CPU's.

void RmsNormMatchesCpu(DataType f) {
  struct RmsCase {
    std::vector<int64_t> x, w;
    std::string ns;
  };
  for (const RmsCase& c : std::vector<RmsCase>{{{4, 6, 8}, {8}, "normalized_shape=8"},
                                             {{4, 6, 8}, {6, 8}, "normalized_shape=6,8"},
                                             {{5, 300}, {300}, "normalized_shape=300"}}) {
    const LocalTensor x = GridTensor(f, c.x, 1, -3, 3), dy = GridTensor(f, c.x, 2);
    const LocalTensor w = GridTensor(f, c.w, 3, 0.5, 2);
    EXPECT_EQ(CompareWithCpu({"rms_norm", {x}, {c.ns}}), "") << c.ns;
    EXPECT_EQ(CompareWithCpu({"rms_norm", {x, w}, {c.ns}}), "") << c.ns;
    const LocalTensor inv = (*testing::RunOnce("rms_norm", {x, w}, {c.ns}))[1];
    EXPECT_EQ(CompareWithCpu({"rms_norm_grad", {dy, x, inv}}), "") << c.ns;
    EXPECT_EQ(CompareWithCpu({"rms_norm_grad", {dy, x, inv, w}}), "") << c.ns;
    EXPECT_EQ(CompareWithCpu({"rms_norm_param_grad", {dy, x, inv}}), "") << c.ns;
  }
  // Split layouts (rank 1 of 2, rank 2 of 3 holding no rows): rows split
  // in the forward and grads, a P addend or a column slice of weight_grad.
  const LocalTensor x = GridTensor(f, {4, 6, 8}, 4, -3, 3), dy = GridTensor(f, {4, 6, 8}, 5);
  const LocalTensor w = GridTensor(f, {8}, 6, 0.5, 2);
  const LocalTensor inv = (*testing::RunOnce("rms_norm", {x, w}, {"normalized_shape=8"}))[1];
  EXPECT_EQ(CompareSharded({"rms_norm", {x, w}, {"normalized_shape=8"}},
                           {"0-1", {"S(1)", "B", "S(1)", "S(1)"}, 1}),
            "");
  EXPECT_EQ(CompareSharded({"rms_norm_grad", {dy, x, inv, w}},
                           {"0-1", {"S(0)", "S(0)", "S(0)", "B", "S(0)"}, 1}),
            "");
  EXPECT_EQ(CompareSharded({"rms_norm_param_grad", {dy, x, inv}},
                           {"0-1", {"S(1)", "S(1)", "S(1)", "P"}, 1}),
            "");
  EXPECT_EQ(CompareSharded({"rms_norm_param_grad", {dy, x, inv}},
                           {"0-1", {"S(2)", "S(2)", "B", "S(0)"}, 1}),
            "");
  const LocalTensor x2 = GridTensor(f, {2, 8}, 7, -3, 3), dy2 = GridTensor(f, {2, 8}, 8);
  const LocalTensor inv2 = (*testing::RunOnce("rms_norm", {x2}, {"normalized_shape=8"}))[1];
  EXPECT_EQ(CompareSharded({"rms_norm_param_grad", {dy2, x2, inv2}},
                           {"0-2", {"S(0)", "S(0)", "S(0)", "P"}, 2}),
            "");
}

TEST(CudaKernelsTest, RmsNormAndGradsMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    RmsNormMatchesCpu(f);
  }
}

void LayerNormMatchesCpu(DataType f) {
  struct Ln {
    std::vector<int64_t> x, params;
    int k;
  };
  for (const Ln& c : std::vector<Ln>{{{4, 6, 8}, {8}, 2}, {{4, 6, 8}, {6, 8}, 1},
                                     {{5, 300}, {300}, 1}}) {
    const std::vector<std::string> attrs = {"begin_norm_axis=" + std::to_string(c.k),
                                            "begin_params_axis=" + std::to_string(c.k)};
    const LocalTensor x = GridTensor(f, c.x, 1, -3, 3), dy = GridTensor(f, c.x, 2);
    const LocalTensor beta = GridTensor(f, c.params, 3);
    const LocalTensor gamma = GridTensor(f, c.params, 4, 0.5, 2);
    EXPECT_EQ(CompareWithCpu({"layer_norm", {x}, attrs}), "") << c.k;
    EXPECT_EQ(CompareWithCpu({"layer_norm", {x, beta, gamma}, attrs}), "") << c.k;
    const std::vector<LocalTensor> fwd = *testing::RunOnce("layer_norm", {x, beta, gamma}, attrs);
    EXPECT_EQ(CompareWithCpu({"layer_norm_grad", {dy, x, fwd[1], fwd[2]}, {attrs[0]}}), "");
    EXPECT_EQ(CompareWithCpu({"layer_norm_grad", {dy, x, fwd[1], fwd[2], gamma}, {attrs[0]}}),
              "");
    EXPECT_EQ(CompareWithCpu({"layer_norm_param_grad", {dy, x, fwd[1], fwd[2]}, {attrs[1]}}),
              "");
  }
  // Split layouts: rows split (gamma whole), P addends of the param grads
  // and a column slice of them.
  const std::vector<std::string> attrs = {"begin_norm_axis=2", "begin_params_axis=2"};
  const LocalTensor x = GridTensor(f, {4, 6, 8}, 5, -3, 3), dy = GridTensor(f, {4, 6, 8}, 6);
  const LocalTensor beta = GridTensor(f, {8}, 7), gamma = GridTensor(f, {8}, 8, 0.5, 2);
  const std::vector<LocalTensor> fwd = *testing::RunOnce("layer_norm", {x, beta, gamma}, attrs);
  EXPECT_EQ(CompareSharded({"layer_norm", {x, beta, gamma}, attrs},
                           {"0-1", {"S(1)", "B", "B", "S(1)", "S(1)", "S(1)"}, 1}),
            "");
  EXPECT_EQ(CompareSharded({"layer_norm_grad", {dy, x, fwd[1], fwd[2], gamma}, {attrs[0]}},
                           {"0-1", {"S(0)", "S(0)", "S(0)", "S(0)", "B", "S(0)"}, 1}),
            "");
  EXPECT_EQ(CompareSharded({"layer_norm_param_grad", {dy, x, fwd[1], fwd[2]}, {attrs[1]}},
                           {"0-1", {"S(0)", "S(0)", "S(0)", "S(0)", "P", "P"}, 1}),
            "");
  EXPECT_EQ(CompareSharded({"layer_norm_param_grad", {dy, x, fwd[1], fwd[2]}, {attrs[1]}},
                           {"0-1", {"S(2)", "S(2)", "B", "B", "S(0)", "S(0)"}, 1}),
            "");
}

TEST(CudaKernelsTest, LayerNormAndGradsMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    LayerNormMatchesCpu(f);
  }
}

TEST(CudaKernelsTest, AdamUpdateMatchesCpu) {
  REQUIRE_DEVICE();
  // 1003 elements: the 16-byte packs and a scalar tail (1003 is odd, so
  // every dtype has a tail).
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{1003}, {4, 6}}) {
      const LocalTensor w = GridTensor(f, dims, 1), g = GridTensor(f, dims, 2);
      const LocalTensor m = GridTensor(f, dims, 3), v = GridTensor(f, dims, 4, 0, 1);
      EXPECT_EQ(CompareUpdateWithCpu({"adam_update", {w, g, m, v}, {}}), "");
      EXPECT_EQ(CompareUpdateWithCpu({"adam_update",
                                      {w, g, m, v},
                                      {"learning_rate=0.01", "weight_decay=0.1", "scale=0.5",
                                       "beta1=0.8", "beta2=0.99", "epsilon=1e-6",
                                       "bias_correction1=0.488", "bias_correction2=0.029701"}}),
                "");
    }
  }
}

// Runs `op` on one rank (every blob B) on the CPU and on the GPU; both
// must fail with the same code (a dtype the CPU kernel refuses).
void ExpectRefusedAlike(const std::string& op, const std::vector<LocalTensor>& inputs,
                        const std::vector<std::string>& attrs, int blobs) {
  const std::vector<std::string> sig(blobs, "B");
  absl::StatusOr<std::vector<LocalTensor>> cpu = RunOnRank(op, inputs, attrs, "cpu:0", sig, 0);
  absl::StatusOr<std::vector<LocalTensor>> gpu =
      RunOnRank(op, inputs, attrs, "cuda:0", sig, 0, DeviceType::kCuda);
  ASSERT_FALSE(cpu.ok()) << op;
  ASSERT_FALSE(gpu.ok()) << op;
  EXPECT_EQ(gpu.status().code(), cpu.status().code()) << op << ": " << gpu.status() << " vs "
                                                      << cpu.status();
}

TEST(CudaKernelsTest, NormAndAdamCasesTheLaunchersLackAreUnimplemented) {
  REQUIRE_DEVICE();
  // begin_params_axis != begin_norm_axis, an integer x (refused as on the
  // CPU), and adam's bad corrections.
  const LocalTensor x = GridTensor(DataType::kFloat32, {4, 6, 8}, 1);
  absl::StatusOr<std::vector<LocalTensor>> r =
      RunOnRank("layer_norm", {x, GridTensor(DataType::kFloat32, {8}, 2)},
                {"begin_norm_axis=1", "begin_params_axis=2"}, "cuda:0", {"B", "B", "B", "B", "B"},
                0, DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnimplemented)) << r.status();
  ExpectRefusedAlike("rms_norm", {GridTensor(DataType::kInt32, {4, 8}, 1)},
                     {"normalized_shape=8"}, 3);
  const LocalTensor t = GridTensor(DataType::kFloat32, {4}, 1);
  r = RunOnRank("adam_update", {t, t, t, t}, {"bias_correction1=0"}, "cuda:0",
                {"B", "B", "B", "B"}, 0, DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument)) << r.status();
}

// ------------------------- rotary and attention (f32 f64 f16 bf16) --

void RotaryMatchesCpu(DataType f) {
  const LocalTensor x = GridTensor(f, {2, 3, 5, 6}, 1);
  const LocalTensor cos = GridTensor(f, {5, 6}, 2, -1, 1);
  const LocalTensor sin = GridTensor(f, {5, 6}, 3, -1, 1);
  for (const char* op : {"rotary_embedding", "rotary_embedding_grad"}) {
    EXPECT_EQ(CompareWithCpu({op, {x, cos, sin}}), "") << op;
    // Sequence split with cos/sin whole (rows from the global offset) or
    // split alike, batch and heads split, and 3 ranks over 5 rows.
    EXPECT_EQ(CompareSharded({op, {x, cos, sin}}, {"0-1", {"S(2)", "B", "B", "S(2)"}, 1}), "")
        << op;
    EXPECT_EQ(CompareSharded({op, {x, cos, sin}}, {"0-1", {"S(2)", "S(0)", "S(0)", "S(2)"}, 1}),
              "")
        << op;
    EXPECT_EQ(CompareSharded({op, {x, cos, sin}}, {"0-2", {"S(2)", "B", "B", "S(2)"}, 2}), "")
        << op;
    EXPECT_EQ(CompareSharded({op, {x, cos, sin}}, {"0-1", {"S(1)", "B", "B", "S(1)"}, 1}), "")
        << op;
  }
}

TEST(CudaKernelsTest, RotaryAndGradMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    RotaryMatchesCpu(f);
  }
}

void AttentionMatchesCpu(DataType f) {
  struct Shape4 {
    std::vector<int64_t> q, k, v;
  };
  // Sq < Sk, Sq > Sk (causal rows with every key masked), value width
  // differing from the query's. The kernels give a block 64 query (or key)
  // rows and stage the other side in tiles of up to 64 rows (12 at head
  // dims 256 in f64, 24 in f32, 48 in halves): rows past one tile and not
  // a multiple of it, on either side, and a staged tile cut short.
  for (const Shape4& sh : std::vector<Shape4>{{{2, 2, 5, 8}, {2, 2, 7, 8}, {2, 2, 7, 6}},
                                              {{1, 2, 6, 4}, {1, 2, 4, 4}, {1, 2, 4, 4}},
                                              {{1, 2, 70, 8}, {1, 2, 130, 8}, {1, 2, 130, 6}},
                                              {{1, 2, 70, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}},
                                              {{1, 2, 20, 256}, {1, 2, 30, 256}, {1, 2, 30, 256}}}) {
    const LocalTensor q = GridTensor(f, sh.q, 1), k = GridTensor(f, sh.k, 2);
    const LocalTensor v = GridTensor(f, sh.v, 3);
    std::vector<int64_t> od = sh.q;
    od[3] = sh.v[3];
    const LocalTensor dout = GridTensor(f, od, 4);
    for (const std::vector<std::string>& attrs : std::vector<std::vector<std::string>>{
             {}, {"causal=true"}, {"causal=true", "scale=0.3"}}) {
      std::string where = DimsToString(sh.q);
      for (const std::string& a : attrs) where += " " + a;
      EXPECT_EQ(CompareWithCpu({"scaled_dot_product_attention", {q, k, v}, attrs}), "") << where;
      EXPECT_EQ(CompareWithCpu({"scaled_dot_product_attention_grad", {dout, q, k, v}, attrs}), "")
          << where;
      // Query rows split (causal masks with the GLOBAL row: rank 1 holds
      // rows from 3), heads split; the grad's dk, dv are P addends.
      EXPECT_EQ(CompareSharded({"scaled_dot_product_attention", {q, k, v}, attrs},
                               {"0-1", {"S(2)", "B", "B", "S(2)"}, 1}),
                "")
          << where;
      EXPECT_EQ(CompareSharded({"scaled_dot_product_attention", {q, k, v}, attrs},
                               {"0-1", {"S(1)", "S(1)", "S(1)", "S(1)"}, 1}),
                "")
          << where;
      EXPECT_EQ(CompareSharded({"scaled_dot_product_attention_grad", {dout, q, k, v}, attrs},
                               {"0-1", {"S(2)", "S(2)", "B", "B", "S(2)", "P", "P"}, 1}),
                "")
          << where;
      // Three ranks over the query rows: the middle and last ranks' masks
      // start mid-row-range (shift = global row offset + Sk - Sq).
      for (int64_t rank : {1, 2}) {
        EXPECT_EQ(CompareSharded({"scaled_dot_product_attention", {q, k, v}, attrs},
                                 {"0-2", {"S(2)", "B", "B", "S(2)"}, rank}),
                  "")
            << where << " rank " << rank;
        EXPECT_EQ(CompareSharded({"scaled_dot_product_attention_grad", {dout, q, k, v}, attrs},
                                 {"0-2", {"S(2)", "S(2)", "B", "B", "S(2)", "P", "P"}, rank}),
                  "")
            << where << " rank " << rank;
      }
    }
  }
}

TEST(CudaKernelsTest, AttentionAndGradMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    AttentionMatchesCpu(f);
  }
}

// A NaN in one key row: every query row that sees that key is NaN on the
// CPU (its softmax sum is NaN), rows that do not see it stay finite and
// rows without keys stay 0. The CUDA forward once wrote 0 (and lse -inf)
// for a NaN row, deciding "no keys" by l > 0.
TEST(CudaKernelsTest, AttentionNaNKeyPropagatesAsOnCpu) {
  REQUIRE_DEVICE();
  auto values = [](int64_t n, int salt) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = ((i * 37 + salt * 11) % 17) / 8.0 - 1;
    return v;
  };
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    std::vector<double> kv = values(2 * 9 * 8, 2);
    kv[(1 * 9 + 4) * 8 + 3] = std::nan("");  // head 1, key 4
    const LocalTensor q = testing::Tensor(f, {1, 2, 70, 8}, values(2 * 70 * 8, 1));
    const LocalTensor k = testing::Tensor(f, {1, 2, 9, 8}, kv);
    const LocalTensor v = testing::Tensor(f, {1, 2, 9, 8}, values(2 * 9 * 8, 3));
    const LocalTensor dout = testing::Tensor(f, {1, 2, 70, 8}, values(2 * 70 * 8, 4));
    // Causal with Sq > Sk: rows < 61 see no key, 61..64 see keys before
    // the NaN one, 65.. see it.
    for (const std::vector<std::string>& attrs :
         std::vector<std::vector<std::string>>{{}, {"causal=true"}}) {
      const std::string where = attrs.empty() ? "full" : "causal";
      EXPECT_EQ(CompareWithCpu({"scaled_dot_product_attention", {q, k, v}, attrs}), "") << where;
      EXPECT_EQ(CompareWithCpu({"scaled_dot_product_attention_grad", {dout, q, k, v}, attrs}), "")
          << where;
    }
  }
}

// A key whose softmax weight underflows to 0 is skipped on the CPU, so an
// infinite value row there leaves out, dq, dk and dv finite (0 * inf would
// be NaN): scores 800 and -800 (scale 100), v's second row inf.
TEST(CudaKernelsTest, AttentionSkipsKeysOfZeroWeightAsOnCpu) {
  REQUIRE_DEVICE();
  const double inf = INFINITY;
  for (DataType f : Floating()) {
    SCOPED_TRACE(DataTypeName(f));
    const LocalTensor q = testing::Tensor(f, {1, 1, 1, 8}, std::vector<double>(8, 1));
    std::vector<double> kv(16, 1), vv(16, 0.5), gv(8, 0.25);
    std::fill(kv.begin() + 8, kv.end(), -1.0);
    std::fill(vv.begin() + 8, vv.end(), inf);
    const LocalTensor k = testing::Tensor(f, {1, 1, 2, 8}, kv);
    const LocalTensor v = testing::Tensor(f, {1, 1, 2, 8}, vv);
    const LocalTensor dout = testing::Tensor(f, {1, 1, 1, 8}, gv);
    const std::vector<std::string> attrs = {"scale=100"};
    EXPECT_EQ(CompareWithCpu({"scaled_dot_product_attention", {q, k, v}, attrs}), "");
    EXPECT_EQ(CompareWithCpu({"scaled_dot_product_attention_grad", {dout, q, k, v}, attrs}), "");
  }
}

TEST(CudaKernelsTest, RotaryAndAttentionCasesTheLaunchersLackAreUnimplemented) {
  REQUIRE_DEVICE();
  // An integer x and an odd head dim for rotary (refused as on the CPU), a
  // head dim above 256 for attention (the CPU takes it).
  const LocalTensor xi = GridTensor(DataType::kInt32, {1, 1, 2, 4}, 1);
  const LocalTensor csi = GridTensor(DataType::kInt32, {2, 4}, 2);
  ExpectRefusedAlike("rotary_embedding", {xi, csi, csi}, {}, 4);
  const LocalTensor x3 = GridTensor(DataType::kFloat32, {1, 1, 2, 3}, 1);
  const LocalTensor cs3 = GridTensor(DataType::kFloat32, {2, 3}, 2);
  // The rule refuses an odd D before any kernel runs (kInvalidArgument).
  ExpectRefusedAlike("rotary_embedding_grad", {x3, cs3, cs3}, {}, 4);
  const LocalTensor t = GridTensor(DataType::kFloat32, {1, 1, 2, 300}, 1);
  absl::StatusOr<std::vector<LocalTensor>> r =
      RunOnRank("scaled_dot_product_attention", {t, t, t}, {}, "cuda:0", {"B", "B", "B", "B"}, 0,
                DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnimplemented)) << r.status();
}

// ------------------------------------------- layout, fill, add_n, scalar --

std::vector<DataType> EveryDtype() {
  return {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
          DataType::kInt8,    DataType::kInt32,    DataType::kInt64,   DataType::kUInt8,
          DataType::kBool};
}

TEST(CudaSupportKernelsTest, LayoutOpsMatchCpuOnEveryDtype) {
  REQUIRE_DEVICE();
  for (DataType t : EveryDtype()) {
    const LocalTensor x = GridTensor(t, {4, 6, 5}, 1);
    EXPECT_EQ(CompareWithCpu({"reshape", {x}, {"shape=6,-1"}}), "") << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"transpose", {x}, {"perm=2,0,1"}}), "") << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"cat", {x, GridTensor(t, {4, 2, 5}, 2)}, {"axis=1"}}), "");
    EXPECT_EQ(CompareWithCpu({"stack", {x, x}, {"axis=1"}}), "") << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"slice", {x}, {"start=0,1,0", "stop=4,6,5", "step=2,2,3"}}), "");
    EXPECT_EQ(CompareWithCpu({"narrow", {x}, {"dim=1", "start=-2", "length=2"}}), "");
    EXPECT_EQ(CompareWithCpu({"expand", {GridTensor(t, {1, 5}, 3)}, {"expand_shape=3,4,5"}}),
              "");
  }
  const LocalTensor x = GridTensor(DataType::kFloat32, {3, 5}, 4);
  const LocalTensor dy = GridTensor(DataType::kFloat32, {2, 2}, 5);
  EXPECT_EQ(CompareWithCpu({"slice_grad", {dy, x}, {"start=0,1", "stop=3,5", "step=2,2"}}), "");
  EXPECT_EQ(CompareWithCpu({"slice_update", {x, dy}, {"start=0,1", "stop=3,5", "step=2,2"}}), "");
  EXPECT_EQ(CompareWithCpu({"broadcast_like", {GridTensor(DataType::kFloat32, {5}, 6), x},
                            {"broadcast_axes=0"}}),
            "");
  EXPECT_EQ(CompareWithCpu({"split", {x}, {"axis=1", "sizes=1,4"}}), "");
}

TEST(CudaSupportKernelsTest, LayoutOpsMatchCpuOnSplitLayouts) {
  REQUIRE_DEVICE();
  const LocalTensor x = GridTensor(DataType::kFloat32, {6, 4, 5}, 7);
  // A transpose of a split moves the split dim; a reshape of a row split
  // whose blocks line up is one contiguous copy per rank.
  EXPECT_EQ(CompareSharded({"transpose", {x}, {"perm=2,0,1"}}, {"0-1", {"S(0)", "S(1)"}, 1}), "");
  EXPECT_EQ(CompareSharded({"reshape", {x}, {"shape=6,20"}}, {"0-2", {"S(0)", "S(0)"}, 2}), "");
  EXPECT_EQ(CompareSharded({"slice", {x}, {"start=0,1,0", "stop=6,4,5", "step=1,2,1"}},
                           {"0-1", {"S(1)", "P"}, 1}),
            "");
}

TEST(CudaSupportKernelsTest, FillAddNScalarAndActivationGradsMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType t : EveryDtype()) {
    const LocalTensor like = GridTensor(t, {7, 33}, 1);
    EXPECT_EQ(CompareWithCpu({"zeros_like", {like}}), "") << DataTypeName(t);
  }
  for (const char* dtype : {"f32", "f16", "bf16", "f64", "i32", "i64", "i8", "u8", "bool"}) {
    EXPECT_EQ(CompareWithCpu({"fill", {GridTensor(DataType::kFloat32, {5, 9}, 2)},
                              {"value=3", std::string("dtype=") + dtype}}),
              "")
        << dtype;
  }
  EXPECT_EQ(CompareWithCpu({"fill", {GridTensor(DataType::kFloat32, {5, 9}, 2)}, {"value=-1.5"}}),
            "");
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                     DataType::kBFloat16, DataType::kInt32, DataType::kInt64}) {
    const LocalTensor a = GridTensor(t, {9, 17}, 1), b = GridTensor(t, {9, 17}, 2);
    EXPECT_EQ(CompareWithCpu({"add_n", {a}}), "") << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"add_n", {a, b, a}}), "") << DataTypeName(t);
  }
  const std::vector<std::string> by_float = {"has_float_operand=true", "has_int_operand=false",
                                             "float_operand=1.25"};
  const std::vector<std::string> by_int = {"has_float_operand=false", "has_int_operand=true",
                                           "int_operand=3"};
  for (DataType t : Floating()) {
    const LocalTensor x = GridTensor(t, {11, 13}, 3, 0.25, 2);
    for (const char* op : {"scalar_add", "scalar_mul", "scalar_div", "scalar_pow"}) {
      EXPECT_EQ(CompareWithCpu({op, {x}, by_float}), "") << op << " " << DataTypeName(t);
      EXPECT_EQ(CompareWithCpu({op, {x}, by_int}), "") << op << " " << DataTypeName(t);
    }
    const LocalTensor s = GridTensor(t, {11, 13}, 4), dy = GridTensor(t, {11, 13}, 5);
    for (const char* op : {"relu_grad", "silu_grad", "gelu_grad"}) {
      EXPECT_EQ(CompareWithCpu({op, {s, dy}}), "") << op << " " << DataTypeName(t);
    }
  }
  // A float operand on an integer tensor: the CPU's kUnimplemented, not a
  // launch (integer tensors: cuda_select_kernels_test).
  absl::StatusOr<std::vector<LocalTensor>> r =
      RunOnRank("scalar_mul", {GridTensor(DataType::kInt32, {4}, 1)}, by_float, "cuda:0",
                {"B", "B"}, 0, DeviceType::kCuda);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnimplemented)) << r.status();
}

}  // namespace
}  // namespace oneflow_sbp
