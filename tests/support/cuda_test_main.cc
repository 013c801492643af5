// main() of the GPU tests: without a device every test skips (GTEST_SKIP
// "no CUDA device") and this line says so once, so a log never passes a
// skipped run off as a passing one (docs/GPU.md).
#include <cstdio>

#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (oneflow_sbp::cuda::DeviceCount() == 0) std::printf("SKIPPED: no CUDA device\n");
  return RUN_ALL_TESTS();
}
