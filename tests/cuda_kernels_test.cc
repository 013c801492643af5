// CUDA kernels and the device seam against the CPU kernels (GPU only).
//
// Built only under --config=cuda. Without a GPU every test is skipped and
// main() prints "SKIPPED: no CUDA device": a skip is NOT a pass, and the
// line makes that visible in CI logs (docs/GPU.md).
#include <cstdio>
#include <string>
#include <vector>

#include "boxing/region_copy.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/cuda/cuda_device.h"
#include "oneflow_sbp/local_tensor.h"
#include "ops/kernels/shard_harness.h"
#include "oneflow_sbp/shape.h"
#include "tests/infer_test_util.h"
#include "tests/kernel_test_util.h"

namespace oneflow_sbp {
namespace {

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

bool HasDevice() { return cuda::DeviceCount() > 0; }

#define REQUIRE_DEVICE() \
  if (!HasDevice()) GTEST_SKIP() << "no CUDA device"

struct Case {
  std::string op;
  std::vector<LocalTensor> inputs;
  std::vector<std::string> attrs;
};

// Runs `c` on one rank on the CPU and on the GPU; "" if every output agrees
// within the dtype's default tolerance (4x for halves: the GPU reduces in
// float where the CPU uses double).
std::string CompareWithCpu(const Case& c, const std::string& cpu_placement = "cpu:0",
                           const std::string& cuda_placement = "cuda:0",
                           std::vector<std::string> signature = {}, int64_t rank = 0) {
  if (signature.empty()) {
    absl::StatusOr<std::shared_ptr<const OpCall>> call =
        testing::MakeCall(c.op, static_cast<int>(c.inputs.size()), c.attrs);
    if (!call.ok()) return std::string(call.status().message());
    signature.assign((*call)->num_inputs() + (*call)->num_outputs(), "B");
  }
  absl::StatusOr<std::vector<LocalTensor>> want =
      RunOnRank(c.op, c.inputs, c.attrs, cpu_placement, signature, rank);
  if (!want.ok()) return "cpu: " + std::string(want.status().message());
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank(c.op, c.inputs, c.attrs, cuda_placement, signature, rank, DeviceType::kCuda);
  if (!got.ok()) return "cuda: " + std::string(got.status().message());
  for (size_t i = 0; i < want->size(); ++i) {
    kernels::Tolerance tol = kernels::DefaultTolerance((*want)[i].dtype());
    tol.rtol *= 4;
    tol.atol *= 4;
    const std::string diff = kernels::CompareTensors((*got)[i], (*want)[i], tol);
    if (!diff.empty()) return c.op + " output " + std::to_string(i) + ": " + diff;
  }
  return "";
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
  ASSERT_TRUE(boxing::PackRegion(host, slice, region, packed_cpu.data()).ok());
  LocalTensor packed_dev = *LocalTensor::Empty(DataType::kFloat32, {6}, DeviceType::kCuda);
  ASSERT_TRUE(boxing::PackRegion(dev, slice, region, packed_dev.raw_data()).ok());
  EXPECT_EQ(packed_dev.CopyTo(DeviceType::kCpu)->ToDoubles(),
            std::vector<double>(packed_cpu.begin(), packed_cpu.end()));
  for (boxing::RegionOp op : {boxing::RegionOp::kCopy, boxing::RegionOp::kAdd}) {
    LocalTensor h2 = host.Clone();
    LocalTensor d2 = *host.CopyTo(DeviceType::kCuda);
    ASSERT_TRUE(boxing::UnpackRegion(packed_cpu.data(), region, &h2, slice, op).ok());
    ASSERT_TRUE(boxing::UnpackRegion(packed_dev.raw_data(), region, &d2, slice, op).ok());
    EXPECT_EQ(DescribeMismatch(*d2.CopyTo(DeviceType::kCpu), h2), "");
  }
  // Different devices are refused, not copied.
  LocalTensor other = host.Clone();
  EXPECT_EQ(boxing::CopyRegion(dev, slice, region, &other, slice, boxing::RegionOp::kCopy).code(),
            absl::StatusCode::kInvalidArgument);
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

TEST(CudaKernelsTest, BadInputsAreStatusesNotCrashes) {
  REQUIRE_DEVICE();
  // Integer unary on CUDA is not implemented: a clean kUnimplemented.
  absl::StatusOr<std::vector<LocalTensor>> r =
      RunOnRank("relu", {testing::IntTensor(DataType::kInt32, {4}, 1)}, {}, "cuda:0", {"B", "B"},
                0, DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
  r = RunOnRank("dropout", {GridTensor(DataType::kFloat32, {4}, 1)}, {"rate=2", "seed=1"},
                "cuda:0", {"B", "B", "B"}, 0, DeviceType::kCuda);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
}

}  // namespace
}  // namespace oneflow_sbp

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (oneflow_sbp::cuda::DeviceCount() == 0) {
    std::printf("SKIPPED: no CUDA device\n");
  }
  return RUN_ALL_TESTS();
}
