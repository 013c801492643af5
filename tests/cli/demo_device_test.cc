// `sbp demo --device=cuda` end to end without a GPU: the emulated cuda
// device (tests/support/emulated_device.h) with the CPU kernels registered as cuda
// ones. This covers everything of a device run but the CUDA kernels
// themselves: the cuda placement, shards placed on the device and read
// back, kernels picked by device, every boxing step through the device
// world's buffer seam (rank threads sharing one device), host-buffer calls
// (the run's counters, the vocabulary-parallel cross entropy's row
// statistics) on the host path, and the check against the CPU reference.
// The real kernels are checked by cuda_kernels_test and cuda_verify_test
// on a GPU.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "tests/support/emulated_device.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/status_matchers.h"
#include "cli/cmd_demo.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

engine::Engine& Eng() { return **testing::EngineFor(); }

// Every op with a CPU kernel, also as a cuda kernel.
const kernels::KernelRegistry& EmulatedKernels() {
  static const kernels::KernelRegistry* registry = [] {
    auto* r = new kernels::KernelRegistry();
    const std::vector<std::string> ops =
        kernels::KernelRegistry::Global().OpsWithKernels(DeviceType::kCpu);
    const absl::Status s = emulated::RegisterCpuKernelsAsCuda(*r, ops);
    if (!s.ok()) ADD_FAILURE() << s;
    return r;
  }();
  return *registry;
}

TEST(DemoOnDevice, TrainsOnTheEmulatedDeviceAndMatchesTheCpuReference) {
  emulated::EmulatedDevice* dev = emulated::EmulatedDevice::Install();
  dev->ResetStats();
  DemoOptions o;  // [2,2], 1 layer, 3 steps
  o.device = "cuda";
  o.kernels = &EmulatedKernels();
  int exit_code = 0;
  absl::StatusOr<std::string> out = RunDemo(o, Eng(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("mesh cuda:0-3 [2,2]"));
  EXPECT_THAT(*out, HasSubstr("loss matches"));
  EXPECT_THAT(*out, HasSubstr("12 gradients match"));
  EXPECT_THAT(*out, HasSubstr("loss went down"));
  // Shards really lived on the device: data went there and came back, and
  // nothing misused device memory.
  EXPECT_GT(dev->copies().host_to_device, 0);
  EXPECT_GT(dev->copies().device_to_host, 0);
  // Boxing moved shards device to device (the world's transport copies).
  EXPECT_GT(dev->copies().same_device, 0);
  EXPECT_THAT(dev->misuses(), IsEmpty());
}

TEST(DemoOnDevice, RefusesGlooAndUnknownDevices) {
  emulated::EmulatedDevice::Install();
  DemoOptions o;
  o.device = "cuda";
  o.backend = "gloo";
  o.kernels = &EmulatedKernels();
  absl::StatusOr<std::string> out = RunDemo(o, Eng());
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument)) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("--backend=threads"));
  o.backend = "threads";
  o.device = "tpu";
  out = RunDemo(o, Eng());
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument)) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("--device='tpu'"));
}

TEST(DemoOnDevice, NoDeviceIsAFailedPreconditionBeforeAnyRankStarts) {
  emulated::EmulatedDevice* dev = emulated::EmulatedDevice::Install();
  dev->SetPresent(false);
  DemoOptions o;
  o.device = "cuda";
  o.kernels = &EmulatedKernels();
  absl::StatusOr<std::string> out = RunDemo(o, Eng());
  dev->SetPresent(true);
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kFailedPrecondition)) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("--device=cuda"));
}

}  // namespace
}  // namespace oneflow_sbp::cli
