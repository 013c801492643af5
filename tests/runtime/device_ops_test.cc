// The device seam on the CPU: the CPU backend's copies and strided boxes,
// and a clean kUnimplemented for CUDA in a build without the CUDA backend.
#include "oneflow_sbp/storage/device_ops.h"

#include <vector>

#include "gtest/gtest.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

TEST(DeviceOpsTest, CpuBackendAlwaysPresent) {
  absl::StatusOr<DeviceOps*> ops = GetDeviceOps(DeviceType::kCpu);
  ASSERT_TRUE(ops.ok()) << ops.status();
  EXPECT_EQ((*ops)->device(), DeviceType::kCpu);
  // A second CPU backend is refused.
  EXPECT_FALSE(RegisterDeviceOps(*ops));
}

TEST(DeviceOpsTest, CudaWithoutBackendIsUnimplemented) {
  // This test binary never links the CUDA backend, whatever the config.
  absl::StatusOr<DeviceOps*> ops = GetDeviceOps(DeviceType::kCuda);
  ASSERT_FALSE(ops.ok());
  EXPECT_THAT(ops, StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_NE(ops.status().message().find("--config=cuda"), std::string::npos);
  absl::StatusOr<LocalTensor> t = LocalTensor::Empty(DataType::kFloat32, {2}, DeviceType::kCuda);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t, StatusIs(absl::StatusCode::kUnimplemented));
}

TEST(DeviceOpsTest, CpuCopyBoxCopiesAndAdds) {
  DeviceOps* ops = *GetDeviceOps(DeviceType::kCpu);
  // src is a 3x4 row-major matrix; copy its [1:3, 1:3] block into a packed 2x2.
  std::vector<float> src = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::vector<float> dst(4, 100);
  StridedBox box;
  box.rank = 2;
  box.ext[0] = 2;
  box.ext[1] = 2;
  box.src_stride[0] = 4;
  box.src_stride[1] = 1;
  box.dst_stride[0] = 2;
  box.dst_stride[1] = 1;
  ASSERT_TRUE(ops->CopyBox(DataType::kFloat32, box, src.data() + 5, dst.data(), false).ok());
  EXPECT_EQ(dst, (std::vector<float>{5, 6, 9, 10}));
  ASSERT_TRUE(ops->CopyBox(DataType::kFloat32, box, src.data() + 5, dst.data(), true).ok());
  EXPECT_EQ(dst, (std::vector<float>{10, 12, 18, 20}));
  box.rank = StridedBox::kMaxRank + 1;
  EXPECT_THAT(ops->CopyBox(DataType::kFloat32, box, src.data(), dst.data(), false),
            StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DeviceOpsTest, CopyToCpuIsADeepCopy) {
  LocalTensor a = *LocalTensor::FromValues<float>({3}, {1, 2, 3});
  absl::StatusOr<LocalTensor> b = a.CopyTo(DeviceType::kCpu);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->SharesStorageWith(a));
  EXPECT_TRUE(ExactlyEqual(a, *b));
  EXPECT_THAT(a.CopyTo(DeviceType::kCuda), StatusIs(absl::StatusCode::kUnimplemented));
  EXPECT_THAT(LocalTensor().CopyTo(DeviceType::kCpu),
            StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace oneflow_sbp
