// Comparisons of a CUDA kernel with the CPU kernel on the same inputs, for
// the GPU tests of //tests/kernels:cuda_kernels_test (header-only: both of its
// sources use them). Without a device, REQUIRE_DEVICE skips the test.
#ifndef TESTS_KERNELS_CUDA_COMPARE_H_
#define TESTS_KERNELS_CUDA_COMPARE_H_

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/shard_harness.h"
#include "tests/support/infer_test_util.h"
#include "tests/support/kernel_test_util.h"

namespace oneflow_sbp::testing {

inline bool HasDevice() { return cuda::DeviceCount() > 0; }

#define REQUIRE_DEVICE() \
  if (!::oneflow_sbp::testing::HasDevice()) GTEST_SKIP() << "no CUDA device"

struct Case {
  std::string op;
  std::vector<LocalTensor> inputs;
  std::vector<std::string> attrs;
};

// Runs `c` on one rank on the CPU and on the GPU; "" if every output agrees
// within the dtype's default tolerance (4x for halves: the GPU reduces in
// float where the CPU uses double).
inline std::string CompareWithCpu(const Case& c, const std::string& cpu_placement = "cpu:0",
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

// The optimizer updates (adam_update, sgd_update) have no outputs: they
// write their mutable inputs in place. Runs `c` on rank `rank` of `ranks`
// (default: one rank, every blob B; `layout` one 1-D sbp for every input,
// e.g. "S(0)") on the CPU and on the GPU and compares the rank's inputs
// after the update.
inline std::string CompareUpdateWithCpu(const Case& c, const std::string& ranks = "0",
                                        const std::string& layout = "B", int64_t rank = 0) {
  const int n = static_cast<int>(c.inputs.size());
  absl::StatusOr<std::shared_ptr<const OpCall>> call = testing::MakeCall(c.op, n, c.attrs);
  if (!call.ok()) return std::string(call.status().message());
  std::vector<TensorDesc> descs;
  for (const LocalTensor& t : c.inputs) descs.push_back({*Shape::Make(t.dims()), t.dtype()});
  const NdSbpSignature sig(n, *NdSbp::Parse(layout));
  std::vector<LocalTensor> state[2];
  for (int dev = 0; dev < 2; ++dev) {
    const DeviceType device = dev == 0 ? DeviceType::kCpu : DeviceType::kCuda;
    const Placement placement = *Placement::Parse((dev == 0 ? "cpu:" : "cuda:") + ranks);
    // Copies of the rank's shards: the CPU run must not write the caller's
    // tensors.
    for (int b = 0; b < n; ++b) {
      absl::StatusOr<std::vector<LocalTensor>> shards =
          kernels::DistributeTensor(c.inputs[b], sig[b], placement);
      if (!shards.ok()) return std::string(shards.status().message());
      const LocalTensor& t = (*shards)[rank];
      absl::StatusOr<LocalTensor> copy = dev == 0 ? t.Clone() : t.CopyTo(device);
      if (!copy.ok()) return "cuda: " + std::string(copy.status().message());
      state[dev].push_back(*std::move(copy));
    }
    absl::StatusOr<kernels::KernelContext> ctx =
        kernels::KernelContext::Make(*call, placement, rank, descs, sig, state[dev], {});
    absl::Status s = ctx.ok() ? kernels::RunKernel(*ctx) : ctx.status();
    if (!s.ok()) return (dev == 0 ? "cpu: " : "cuda: ") + std::string(s.message());
  }
  for (int i = 0; i < n; ++i) {
    // Exact: adam_update and sgd_update compute in double on both devices
    // with the same operations and roundings (no fma; double -> half
    // through float), element by element.
    const kernels::Tolerance tol{0, 0};
    const std::string diff =
        kernels::CompareTensors(*state[1][i].CopyTo(DeviceType::kCpu), state[0][i], tol);
    if (!diff.empty()) return c.op + " input " + std::to_string(i) + ": " + diff;
  }
  return "";
}

// A rank's layouts for CompareWithCpu: placement suffix, signature, rank.
struct Sharded {
  std::string ranks;
  std::vector<std::string> signature;
  int64_t rank;
};

inline std::string CompareSharded(const Case& c, const Sharded& s) {
  return CompareWithCpu(c, "cpu:" + s.ranks, "cuda:" + s.ranks, s.signature, s.rank);
}

}  // namespace oneflow_sbp::testing

#endif  // TESTS_KERNELS_CUDA_COMPARE_H_
