// The sharded-execution harness: runs an op the way a distributed program
// would, on simulated ranks, from FULL (logical) tensors, so a kernel and an
// SBP rule can be checked against a single-rank run. The core of a
// soundness verifier (DTensor's brute-force validator does the same).
//
// Example:
//   std::shared_ptr<const OpCall> call = ...;              // "reduce_sum", axis=1
//   Placement p = *Placement::Parse("cpu:0-3 [2,2]");
//   NdSbpSignature sig = {*NdSbp::Parse("(S(1),S(0))"), *NdSbp::Parse("(P,S(0))")};
//   absl::StatusOr<std::vector<LocalTensor>> got = RunSharded(call, {x}, p, sig);
//   absl::StatusOr<std::vector<LocalTensor>> want = RunReference(call, {x});
//   CompareTensors((*got)[0], (*want)[0], DefaultTolerance(DataType::kFloat32));  // ""
//
// RunSharded, step by step:
//  1. distributes every input over every rank per its NdSbp
//     (DistributeTensor): S gives the rank its balanced slice, B a copy,
//     and P on a mesh axis small integer-valued addends that sum exactly to
//     the value (the axis coordinate 0 holds value minus the others);
//  2. allocates each rank's outputs with the local shape of the output's
//     logical desc (from OpCall::InferOutputDescs) under its NdSbp, fills
//     them with a poison pattern (NaN, 0x5A bytes, alternating bools) so an
//     element a kernel forgets to write shows up, and runs the kernel on
//     every rank (RunKernel): in turn on the calling thread, or, with
//     HarnessOptions::ranks_as_threads, as threads of an in-process world
//     (comm::RunRanks) with each rank's world communicator in its context
//     (KernelContext::SetWorld), for kernels that talk across ranks;
//  3. assembles each output (AssembleTensor): S places each rank's slice,
//     B requires every copy to agree exactly, P sums the addends over the P
//     axes (in double; bool outputs become "sum != 0");
//  4. returns the assembled full outputs, followed by the assembled final
//     values of the op's mutable inputs (updated in place, in input order;
//     sgd_update returns just its model).
// RunReference runs the kernel once, on one rank holding everything.
//
// Errors: kInvalidArgument for bad harness input (counts, dtypes, zero
// extents, an NdSbp that does not fit, a bool or inexact P split);
// kernel errors pass through with the rank prefixed; kInternal when ranks
// holding a B output disagree. With threads, the error reported is that of
// the lowest rank that failed on its own (ranks that only saw the world
// aborted because of it, kAborted, are passed over).
//
// Devices: with HarnessOptions::device other than kCpu, steps 1 and 3
// stay on the host; in step 2 every rank's input shards and poisoned
// output buffers are copied to the device (LocalTensor::CopyTo), the
// kernel registered for (op, device) runs with the placement re-typed to
// that device, and outputs and mutated inputs are copied back. So a device
// kernel is checked against the same host distribution and assembly as
// the CPU kernel. The reference (RunReference) always runs on the CPU.
// Kernels that need a communicator get the host world as today (a device
// kernel that needs one must cope with that; none registered does yet).
//
// Which path: sequential is the default (deterministic, one stack to
// debug, no threads); only kernels that need a communicator (today the
// class-split layout of sparse_softmax_cross_entropy_ms) must run with
// threads, and without them fail with kFailedPrecondition. Every other
// kernel gives the same bits either way (the kernel tests sweep some
// families both ways).
#ifndef KERNELS_SHARD_HARNESS_H_
#define KERNELS_SHARD_HARNESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {

struct HarnessOptions {
  // nullptr: KernelRegistry::Global().
  const KernelRegistry* registry = nullptr;
  // Seeds the P addends (different seeds, different splits, same sums).
  uint64_t seed = 1;
  // Largest magnitude of a generated addend (other than coordinate 0's).
  int max_addend = 3;
  // Poison preallocated outputs before running kernels.
  bool poison_outputs = true;
  // Run the ranks as threads of a fresh in-process world, one world rank
  // per device rank up to the placement's largest (world ranks outside
  // the placement idle), and give every kernel its world communicator.
  bool ranks_as_threads = false;
  // With ranks_as_threads: the timeout of every collective, so that a
  // kernel whose ranks disagree fails instead of hanging.
  absl::Duration collective_timeout = absl::Seconds(30);
  // RunSharded/RunReference also return every mutable input (optimizer
  // state, in the op's input order) as the kernels left it, assembled like
  // an output, after the outputs. Mutable inputs are always copied per
  // rank first, so the caller's full tensors are never written.
  bool return_mutable_inputs = true;
  // Where RunSharded runs the kernels (see "Devices" above). Without a
  // backend for it, the first copy fails with DeviceOps' kUnimplemented.
  DeviceType device = DeviceType::kCpu;
};

// The local tensor of every rank (indexed by parallel_id) of `full` laid out
// as `nd_sbp` on `placement` (step 1 above). `full` must have extents >= 1.
absl::StatusOr<std::vector<LocalTensor>> DistributeTensor(const LocalTensor& full,
                                                          const NdSbp& nd_sbp,
                                                          const Placement& placement,
                                                          const HarnessOptions& options = {});

// DistributeTensor's local tensor of one rank (by parallel id) only, the
// same as DistributeTensor(...)[parallel_id] without making the others.
absl::StatusOr<LocalTensor> DistributeTensorTo(const LocalTensor& full, const NdSbp& nd_sbp,
                                               const Placement& placement, int64_t parallel_id,
                                               const HarnessOptions& options = {});

// The full tensor of `logical` from every rank's local tensor (step 3).
// `bn` names the blob in messages.
absl::StatusOr<LocalTensor> AssembleTensor(absl::Span<const LocalTensor> locals,
                                           const TensorDesc& logical, const NdSbp& nd_sbp,
                                           const Placement& placement,
                                           absl::string_view bn = "tensor");

// Steps 1-4 for one N-D signature (one NdSbp per blob, inputs then
// outputs, each as long as the placement's hierarchy).
absl::StatusOr<std::vector<LocalTensor>> RunSharded(std::shared_ptr<const OpCall> call,
                                                    absl::Span<const LocalTensor> full_inputs,
                                                    const Placement& placement,
                                                    const NdSbpSignature& signature,
                                                    const HarnessOptions& options = {});

// The kernel on one cpu rank with every blob whole (options.device is
// ignored: the reference is always the host's CPU kernel).
absl::StatusOr<std::vector<LocalTensor>> RunReference(std::shared_ptr<const OpCall> call,
                                                      absl::Span<const LocalTensor> full_inputs,
                                                      const HarnessOptions& options = {});

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
// Exact for integers and bool; f64 1e-9, f32 1e-5, f16 and bf16 a few ulps
// of their 11 and 8 bit mantissas (relative and absolute alike).
Tolerance DefaultTolerance(DataType dtype);

// Fills a host tensor with a pattern no kernel computes by accident (NaN,
// 0x5A bytes, alternating bools), so that an element a kernel forgets to
// write shows up in a comparison. RunSharded poisons every output.
void Poison(LocalTensor& t);

// "" if `actual` and `expected` have the same dtype and dims and every
// element satisfies |a - e| <= atol + rtol * |e| in double (NaN matches
// NaN, infinities match themselves); otherwise the first offending element
// and the number of them, e.g. "3 of 24 elements differ; first at [1,2]:
// 4.5 vs 4".
std::string CompareTensors(const LocalTensor& actual, const LocalTensor& expected,
                           Tolerance tolerance);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_SHARD_HARNESS_H_
