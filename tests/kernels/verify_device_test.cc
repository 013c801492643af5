// `sbp verify --device=cuda` without a GPU: the device path of the shard
// harness and the verifier, run on the EMULATED cuda device
// (tests/support/emulated_device.h: host memory in its own checked allocations)
// with CPU kernels registered as "cuda" kernels. It proves the plumbing
// (copies to and from the device, the (op, cuda) kernel, the CPU
// reference, gaps and errors), never a real CUDA kernel: those are
// //tests/kernels:cuda_verify_test's job on a GPU. The no-backend error is
// checked where no emulated device is linked (verify_test, the sbp tool
// tests).
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "ops/builtin_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/verify/verifier.h"
#include "tests/support/emulated_device.h"
#include "tests/support/status_matchers.h"
#include "cli/cmd_verify.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::kernels {
namespace {

using ::oneflow_sbp::emulated::EmulatedDevice;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Elementwise, matmul (P outputs), a reduction, softmax, a layout op and
// an in-place optimizer update (no outputs: only the mutated inputs come
// back from the device).
const std::vector<std::string> kCudaOps = {"adam_update", "matmul",  "reduce_sum",
                                           "relu",        "softmax", "transpose"};

class VerifyDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = EmulatedDevice::Install();
    device_->SetPresent(true);
    device_->ResetStats();
    ASSERT_TRUE(emulated::RegisterCpuKernelsAsCuda(kernels_, kCudaOps).ok());
  }
  // Every device buffer was given back, and nothing used the device wrongly.
  void TearDown() override {
    EXPECT_THAT(device_->misuses(), IsEmpty());
    EXPECT_EQ(device_->live_allocations(), 0);
  }
  absl::StatusOr<VerifyReport> Run(std::vector<std::string> ops, std::vector<int64_t> mesh,
                                   DeviceType device = DeviceType::kCuda) {
    VerifyOptions o;
    o.ops = std::move(ops);
    o.mesh = std::move(mesh);
    o.kernels = &kernels_;
    o.device = device;
    return RunVerify(ops::BuiltinOpRegistry(), o);
  }

  EmulatedDevice* device_ = nullptr;
  KernelRegistry kernels_;
};

TEST_F(VerifyDevice, CpuKernelsRunAsCudaPassOnEveryMesh) {
  for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{2}, std::vector<int64_t>{3},
                                           std::vector<int64_t>{2, 2}}) {
    absl::StatusOr<VerifyReport> r = Run(kCudaOps, mesh);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->ok()) << VerifyReportToText(*r);
    EXPECT_EQ(r->device, DeviceType::kCuda);
    for (const OpVerification& v : r->ops) {
      EXPECT_EQ(v.outcome, VerifyOutcome::kPassed) << v.op;
      EXPECT_GT(v.checked, 1) << v.op;
    }
    EXPECT_THAT(VerifyReportToText(*r),
                HasSubstr("cuda kernels against the cpu kernel: 6 passed, 0 failed, 0 without a "
                          "cuda kernel"));
  }
  // The kernels really ran on device copies: shards went over and back.
  const EmulatedDevice::Counts c = device_->copies();
  EXPECT_GT(c.host_to_device, 100);
  EXPECT_GT(c.device_to_host, 100);
}

TEST_F(VerifyDevice, WrongCudaKernelIsCaughtAndNamed) {
  ASSERT_TRUE(emulated::RegisterWrongCudaKernel(kernels_, "sigmoid").ok());
  // The same registry on the CPU: sigmoid's CPU kernel and rule are right.
  absl::StatusOr<VerifyReport> on_cpu = Run({"sigmoid"}, {2}, DeviceType::kCpu);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
  EXPECT_TRUE(on_cpu->ok()) << VerifyReportToText(*on_cpu);

  absl::StatusOr<VerifyReport> r = Run({"sigmoid"}, {2});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ops.size(), 1u);
  const OpVerification& v = r->ops[0];
  EXPECT_EQ(v.outcome, VerifyOutcome::kFailed);
  EXPECT_FALSE(r->ok());
  ASSERT_THAT(v.failures, Not(IsEmpty()));
  bool named = false;
  for (const SweepFailure& f : v.failures) {
    EXPECT_EQ(f.placement, "cuda:0-1") << f.ToString();
    if (f.signature == "x_0:S(0) -> y_0:S(0)") {
      named = true;
      EXPECT_EQ(f.blob, "y_0");
      EXPECT_NEAR(f.max_error, 1, 1e-6);
    }
  }
  EXPECT_TRUE(named) << VerifyReportToText(*r);
  const std::string text = VerifyReportToText(*r);
  EXPECT_THAT(text, HasSubstr("sigmoid: FAILED"));
  EXPECT_THAT(text, HasSubstr("on cuda:0-1: x_0:S(0) -> y_0:S(0)\n    y_0 max error 1: "));
  EXPECT_THAT(text, HasSubstr("failed: sigmoid\n"));
}

TEST_F(VerifyDevice, OpWithoutCudaKernelIsAGapNotAFailure) {
  absl::StatusOr<VerifyReport> r = Run({"gelu", "relu"}, {2});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ops.size(), 2u);
  EXPECT_EQ(r->ops[0].op, "gelu");
  EXPECT_EQ(r->ops[0].outcome, VerifyOutcome::kNoDeviceKernel);
  EXPECT_THAT(r->ops[0].reason, HasSubstr("no cuda kernel for op 'gelu'"));
  EXPECT_EQ(r->ops[1].outcome, VerifyOutcome::kPassed);
  EXPECT_EQ(r->failed_ops(), 0);
  EXPECT_TRUE(r->ok());
  const std::string text = VerifyReportToText(*r);
  EXPECT_THAT(text, HasSubstr("gelu: no cuda kernel ("));
  EXPECT_THAT(text, HasSubstr("1 passed, 0 failed, 1 without a cuda kernel"));
  EXPECT_THAT(text, HasSubstr("no cuda kernel: gelu\n"));
  EXPECT_THAT(text, Not(HasSubstr("failed:")));

  // The command: JSON names the device and the gap; the exit code stays 0.
  cli::VerifyCmdOptions o;
  o.op = "gelu,relu";
  o.mesh = "2";
  o.format = "json";
  o.device = "cuda";
  o.kernels = &kernels_;
  int exit_code = 0;
  absl::StatusOr<std::string> out = cli::RunVerify(o, ops::BuiltinOpRegistry(), &exit_code);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(*out, HasSubstr("\"device\": \"cuda\""));
  EXPECT_THAT(*out, HasSubstr("\"no_device_kernel\": [\"gelu\"]"));
  EXPECT_THAT(*out, HasSubstr("\"outcome\": \"no cuda kernel\""));
}

// Every CPU kernel of the catalog as a "cuda" kernel, on the default
// meshes: the device path (copies, mutated inputs, P outputs, the world
// for the class-split cross entropy, which here sees host memory) gives
// the CPU path's verdict for every op.
TEST_F(VerifyDevice, WholeCatalogAsCudaMatchesTheCpuRun) {
  KernelRegistry all;
  ASSERT_TRUE(emulated::RegisterCpuKernelsAsCuda(
                  all, KernelRegistry::Global().OpsWithKernels(DeviceType::kCpu))
                  .ok());
  VerifyOptions o;
  o.kernels = &all;
  o.device = DeviceType::kCuda;
  absl::StatusOr<VerifyReport> r = RunVerify(ops::BuiltinOpRegistry(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << VerifyReportToText(*r);
  EXPECT_EQ(r->count(VerifyOutcome::kPassed), static_cast<int>(r->ops.size()));
  o.device = DeviceType::kCpu;
  absl::StatusOr<VerifyReport> on_cpu = RunVerify(ops::BuiltinOpRegistry(), o);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
  EXPECT_EQ(r->checked(), on_cpu->checked());
}

// A cuda kernel that answers kUnimplemented for the recipe's call (a dtype
// it lacks) is the same kind of gap, with the kernel's reason.
TEST_F(VerifyDevice, UnimplementedCudaKernelIsAGapWithItsReason) {
  ASSERT_TRUE(kernels_
                  .Register("tanh", DeviceType::kCuda,
                            [](KernelContext& ctx) { return ctx.UnsupportedDtype(
                                                         ctx.input(0).dtype(), "x_0"); })
                  .ok());
  absl::StatusOr<VerifyReport> r = Run({"tanh"}, {2});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ops[0].outcome, VerifyOutcome::kNoDeviceKernel);
  EXPECT_THAT(r->ops[0].reason, HasSubstr("no cuda kernel for op 'tanh' with dtype f32"));
}

TEST_F(VerifyDevice, NoDeviceIsOneFailedPrecondition) {
  device_->SetPresent(false);
  absl::StatusOr<VerifyReport> r = Run({"relu", "matmul"}, {2});
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(r.status().message(), HasSubstr("no CUDA device"));
  // The command passes it on (the tool exits 1, not 2).
  cli::VerifyCmdOptions o;
  o.op = "relu";
  o.device = "cuda";
  o.kernels = &kernels_;
  EXPECT_THAT(cli::RunVerify(o, ops::BuiltinOpRegistry()),
            StatusIs(absl::StatusCode::kFailedPrecondition));
  device_->SetPresent(true);
}

// The emulated device itself: the checks the tests above rely on.
TEST_F(VerifyDevice, EmulatedDevicePoisonsAndRejectsWrongDirections) {
  absl::StatusOr<LocalTensor> fresh = LocalTensor::Empty(DataType::kFloat32, {3}, DeviceType::kCuda);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  absl::StatusOr<LocalTensor> back = fresh->CopyTo(DeviceType::kCpu);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(back->GetDouble(i)));

  float host[3] = {1, 2, 3};
  void* dev = fresh->raw_data();
  EXPECT_TRUE(device_->Copy(dev, host, sizeof(host), CopyDirection::kHostToDevice).ok());
  EXPECT_THAT(device_->Copy(host, host, sizeof(host), CopyDirection::kDeviceToHost).message(),
              HasSubstr("kDeviceToHost copy of 12 bytes from host to host memory"));
  EXPECT_THAT(device_->Copy(dev, dev, sizeof(host), CopyDirection::kHostToDevice).message(),
              HasSubstr("kHostToDevice copy of 12 bytes from device to device memory"));
  EXPECT_THAT(device_->Copy(dev, host, sizeof(host), CopyDirection::kSameDevice).message(),
              HasSubstr("kSameDevice copy of 12 bytes from host to device memory"));
  // Past the end of the allocation (64 bytes at least) is not device memory.
  EXPECT_FALSE(device_->Copy(host, dev, 1024, CopyDirection::kDeviceToHost).ok());
  EXPECT_FALSE(device_->Zero(host, 4).ok());
  device_->Free(host, 12);
  EXPECT_EQ(device_->misuses().size(), 6u);
  device_->ResetStats();  // the misuses above were on purpose
}

}  // namespace
}  // namespace oneflow_sbp::kernels
