// The soundness verifier behind `sbp verify`: proves the catalog's SBP
// rules right by running them. For every registered op (or the ops asked
// for) it draws seeded inputs from the op's input recipe
// (input_recipes.h), runs the CPU kernel once on one rank for the
// reference, and then under every candidate signature on sharded ranks
// (signature_sweep.h): every 1-D candidate on [2] and [3], every kept N-D
// candidate on [2,2] and [2,3], and a deterministic sample of the N-D
// candidates on [2,2,2]. Ranks run as threads of an in-process world, as
// real ranks do. Each assembled result is compared with the reference in
// f64 under the tolerance of its dtype (DefaultTolerance: f64 1e-9, f32
// 1e-5, f16 2e-3, bf16 1.6e-2, relative and absolute alike; integers and
// bool exact).
//
//   VerifyOptions o;
//   o.ops = {"matmul"};
//   absl::StatusOr<VerifyReport> r = RunVerify(registry, o);
//   r->ok();   // no failure, every op had a kernel and a recipe
//
// Devices: with VerifyOptions::device = kCuda the reference stays the CPU
// kernel on one rank, and every sharded run executes the op's CUDA kernel
// on device copies of the shards (HarnessOptions::device), so a CUDA
// kernel is checked against the CPU one under every layout. RunVerify
// first asks for the device: without its backend linked it returns the
// DeviceOps kUnimplemented (naming --config=cuda) once; with the backend
// but no device, the backend's kFailedPrecondition ("no CUDA device").
//
// Outcome per op:
//   kPassed      every candidate matched;
//   kFailed      a candidate's run erred or differed (a wrong rule, or a
//                kernel that mishandles a shard), or the reference failed;
//   kNoKernel    no CPU kernel is registered (a coverage gap, reported
//                apart from failures, never a crash);
//   kNoRecipe    neither the table nor the default recipe makes a valid
//                call (the shape function's reason is given);
//   kNoDeviceKernel  (device runs only) no kernel for the device, or the
//                device kernel answers kUnimplemented for the recipe's
//                call on one rank (e.g. a dtype it lacks): a coverage gap
//                of the device, listed apart and not failing ok().
#ifndef KERNELS_VERIFY_VERIFIER_H_
#define KERNELS_VERIFY_VERIFIER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "kernels/kernel_registry.h"
#include "kernels/verify/signature_sweep.h"

namespace oneflow_sbp::kernels {

struct VerifyOptions {
  // Ops to check; empty: every registered op, sorted by name.
  std::vector<std::string> ops;
  // Mesh extents, e.g. {2, 3}; empty: the default meshes above. A 1-D mesh
  // checks the 1-D candidates, an N-D mesh every kept N-D candidate.
  std::vector<int64_t> mesh;
  // Seeds the inputs, the P addends and the [2,2,2] sample.
  uint64_t seed = 1;
  // At most this many candidates per op on [2,2,2] (default meshes only).
  int sample_3d = 8;
  // nullptr: KernelRegistry::Global().
  const KernelRegistry* kernels = nullptr;
  // Where the sharded runs execute the kernels (see "Devices" above).
  DeviceType device = DeviceType::kCpu;
};

enum class VerifyOutcome { kPassed, kFailed, kNoKernel, kNoRecipe, kNoDeviceKernel };
// "passed", "no cpu kernel", ..., "no cuda kernel" (the only non-CPU
// device type there is).
const char* VerifyOutcomeName(VerifyOutcome outcome);

struct OpVerification {
  std::string op;
  VerifyOutcome outcome = VerifyOutcome::kPassed;
  // The call's inputs and attrs, e.g. "f32[5,3] f32[3,2]".
  std::string inputs;
  int checked = 0;
  int skipped = 0;
  std::vector<SweepFailure> failures;
  // kNoKernel / kNoRecipe / kNoDeviceKernel: why.
  std::string reason;
  double seconds = 0;
};

struct VerifyReport {
  std::vector<OpVerification> ops;
  // The meshes checked, e.g. "[2] [3] [2,2] [2,3] [2,2,2](sample 8)".
  std::string meshes;
  double seconds = 0;
  DeviceType device = DeviceType::kCpu;
  int checked() const;
  int failed_ops() const;
  int count(VerifyOutcome outcome) const;
  // True if every op passed, except that ops without a kernel for a
  // non-CPU device are a known gap (CUDA covers part of the catalog) and
  // do not count against it.
  bool ok() const;
};

// kInvalidArgument for an unknown op (naming it) or a bad mesh (an extent
// < 1, more than 16 ranks, more than 3 axes); for a device, its backend's
// error (kUnimplemented without one, kFailedPrecondition without a device).
absl::StatusOr<VerifyReport> RunVerify(const OpRegistry& registry, const VerifyOptions& options);

// Per op a line "<op>: <outcome>, <checked> candidates (<inputs>)", each
// failure below it (mesh, signature, blob, max error, detail), then the
// summary and the lists of failed ops and ops without a kernel (cpu, and
// for a device run the device's).
std::string VerifyReportToText(const VerifyReport& report);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_VERIFY_VERIFIER_H_
