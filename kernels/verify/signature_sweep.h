// The signature sweep: runs one op call's CPU kernel under every candidate
// signature of its SBP rule on sharded ranks and compares each assembled
// result with a single-rank run (the shard harness does the running). The
// kernel tests call it per op family; `sbp verify` calls it for the whole
// catalog.
//
//   SweepResult r = SweepSignatures(call, {x});
//   if (!r.failures.empty()) std::cerr << r.Report();
//
// Which candidates:
//  * 1-D placements: every candidate of the op's rule (GetSbpCandidates)
//    plus all-B;
//  * N-D placements: every candidate the engine keeps after N-D expansion,
//    hooks and the shape filter (InferSignature with explain: chosen or
//    ranked), each distinct signature once;
//  * sampled N-D placements: the same list cut to a deterministic sample
//    (a seeded Fisher-Yates shuffle, then the first `nd_sample_size`), for
//    meshes such as [2,2,2] where the full product is large.
// Signatures with P on a bool input are skipped (bool has no addends).
// The kernels run where harness.device says (the reference on the CPU);
// placements may name that device ("cuda:0-1") so reports show it.
// Mutable inputs (optimizer updates) are compared as well as outputs: the
// harness returns them after the outputs (HarnessOptions::
// return_mutable_inputs) and the sweep names them by their blob.
#ifndef KERNELS_VERIFY_SIGNATURE_SWEEP_H_
#define KERNELS_VERIFY_SIGNATURE_SWEEP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "kernels/shard_harness.h"

namespace oneflow_sbp::kernels {

struct SweepOptions {
  std::vector<std::string> placements_1d = {"cpu:0-1", "cpu:0-2"};
  std::vector<std::string> placements_nd = {"cpu:0-3 [2,2]", "cpu:0-5 [2,3]"};
  std::vector<std::string> placements_nd_sampled;
  int nd_sample_size = 8;
  uint64_t sample_seed = 1;
  // Per-result tolerance; default DefaultTolerance of the result's dtype.
  std::optional<Tolerance> tolerance;
  // How the reference and every sharded run go; set
  // harness.ranks_as_threads for kernels that need a communicator.
  HarnessOptions harness;
};

struct SweepFailure {
  // Empty for failures of the whole op (shape function, reference run).
  std::string placement;
  std::string signature;
  // The output (or mutable input) that differs; empty when the run erred.
  std::string blob;
  // Largest |sharded - reference| over `blob` in f64 (infinity where one
  // side is NaN or infinite and the other not); 0 when the run erred.
  double max_error = 0;
  std::string detail;
  // "<signature> on <placement>: <blob> <detail>"
  std::string ToString() const;
};

struct SweepResult {
  std::string op;
  int checked = 0;
  int skipped = 0;
  std::vector<SweepFailure> failures;
  std::string Report() const;
};

SweepResult SweepSignatures(std::shared_ptr<const OpCall> call,
                            absl::Span<const LocalTensor> inputs,
                            const SweepOptions& options = {});

// max |a - e| over the elements in f64; infinity if the dims differ or one
// side is NaN/infinite where the other is not (NaN vs NaN counts as 0).
double MaxAbsError(const LocalTensor& actual, const LocalTensor& expected);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_VERIFY_SIGNATURE_SWEEP_H_
