// Shared helpers for the kernel tests: input tensors with exact values,
// single-rank runs, and the signature sweep that checks a kernel against
// every candidate of its op's rule on simulated ranks.
//
//   std::vector<LocalTensor> in = {GridTensor(DataType::kFloat32, {5, 3}, 1)};
//   SweepResult r = SweepSignatures("relu", in);
//   EXPECT_TRUE(r.failures.empty()) << r.Report();
#ifndef TESTS_SUPPORT_KERNEL_TEST_UTIL_H_
#define TESTS_SUPPORT_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "kernels/shard_harness.h"
#include "kernels/verify/signature_sweep.h"

namespace oneflow_sbp::testing {

// Pseudo-random integers in [lo, hi] (exact in every numeric dtype).
LocalTensor IntTensor(DataType dtype, const std::vector<int64_t>& dims, uint64_t seed,
                      int lo = -4, int hi = 4);
// Pseudo-random multiples of 1/8 in [lo, hi] (exact in f16 and bf16 too
// for |v| < 8).
LocalTensor GridTensor(DataType dtype, const std::vector<int64_t>& dims, uint64_t seed,
                       double lo = -2, double hi = 2);
// Pseudo-random bools.
LocalTensor BoolTensor(const std::vector<int64_t>& dims, uint64_t seed);
// The given row-major values.
LocalTensor Tensor(DataType dtype, const std::vector<int64_t>& dims,
                   const std::vector<double>& values);

// d/dt of sum(dy * forward(t)) for every element of `t` by central
// differences with step h (t is copied, never changed); the gradient
// check of a backward kernel. forward(t) must have dy's element count.
LocalTensor CentralDifference(const LocalTensor& t, const LocalTensor& dy,
                              const std::function<LocalTensor(const LocalTensor&)>& forward,
                              double h = 1e-6);

// MakeCall (infer_test_util.h) or a failed test assertion's abort.
std::shared_ptr<const OpCall> CallOrDie(const std::string& op, int num_inputs,
                                        const std::vector<std::string>& attrs = {});

// The op's kernel on one rank holding everything.
absl::StatusOr<std::vector<LocalTensor>> RunOnce(const std::string& op,
                                                 const std::vector<LocalTensor>& inputs,
                                                 const std::vector<std::string>& attrs = {});

// The local outputs of rank `parallel_id` when the op runs with `signature`
// on `placement` (inputs distributed as the harness does). With `device`
// kCuda the rank's inputs are copied to the device, the placement's
// device type picks the kernel (write "cuda:0-1"), and the outputs come
// back to the host. `world` (optional) is the rank's world communicator
// (KernelContext::SetWorld), for a kernel that talks across ranks: call
// this on every rank's thread of one world (comm::RunRanks).
absl::StatusOr<std::vector<LocalTensor>> RunOnRank(const std::string& op,
                                                   const std::vector<LocalTensor>& inputs,
                                                   const std::vector<std::string>& attrs,
                                                   const std::string& placement,
                                                   const std::vector<std::string>& signature,
                                                   int64_t parallel_id,
                                                   DeviceType device = DeviceType::kCpu,
                                                   comm::Communicator* world = nullptr);

// Which placements and how (kernels/verify/signature_sweep.h): every
// 1-D rule candidate plus all-B on [2] and [3], every kept N-D candidate on
// [2,2] and [2,3] by default.
using SweepOptions = kernels::SweepOptions;

struct SweepResult {
  std::string op;
  int checked = 0;
  // Signatures not run: a bool input laid out with P (bool has no addends).
  int skipped = 0;
  // "<signature> on <placement>: <what differs or failed>"
  std::vector<std::string> failures;
  std::string Report() const;
};

// Runs the reference and every signature above; a signature fails when the
// sharded run errs or its assembled outputs differ from the reference.
// Signatures with P on a bool input are skipped (counted in `skipped`).
SweepResult SweepSignatures(const std::string& op, const std::vector<LocalTensor>& inputs,
                            const std::vector<std::string>& attrs = {},
                            const SweepOptions& options = {});
// The same for a call made by the caller: for optional inputs that
// MakeCall cannot express (a later optional input without an earlier one,
// see CallWithCounts).
SweepResult SweepSignatures(std::shared_ptr<const OpCall> call,
                            const std::vector<LocalTensor>& inputs,
                            const SweepOptions& options = {});

// The call of `op` with `input_counts` blobs per declared input arg
// (OpCall::Make), or a failed test assertion's abort. E.g. layer_norm with
// gamma and no beta: CallWithCounts("layer_norm", {1, 0, 1}, {...}).
std::shared_ptr<const OpCall> CallWithCounts(const std::string& op,
                                             const std::vector<int>& input_counts,
                                             const std::vector<std::string>& attrs = {});

}  // namespace oneflow_sbp::testing

#endif  // TESTS_SUPPORT_KERNEL_TEST_UTIL_H_
