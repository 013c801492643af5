// RunProgram: runs a graph::Program (graph/program.h) on this rank through
// the eager interpreter, either as a graph-level plan dictates or op by op
// as eager inference chooses. This is how a solved plan is executed and
// checked: the same program run both ways must give the same outputs, and
// the bytes the executor moves must equal the plan's prediction.
//
//   comm::RunRanks(4, [&](comm::Communicator& world) {
//     EagerContext ctx(*engine, world);
//     absl::StatusOr<ProgramRunResult> r =
//         RunProgram(ctx, program, plan->chosen, ProgramRunMode::kFollowPlan, {});
//     ...
//   });
//
// Leaves (fixed and free tensors) are built from SeededStream(seed, name):
// the same logical values on every rank and for every layout. Floating
// tensors are uniform in [-1, 1); integer tensors are 0 or 1, valid as
// indices for any gather or label over at least two rows.
//
// Every rank of the placement runs every op; each call is collective.
#ifndef EAGER_PROGRAM_RUNNER_H_
#define EAGER_PROGRAM_RUNNER_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/traffic.h"
#include "eager/eager_context.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/storage/local_tensor.h"

namespace oneflow_sbp::eager {

enum class ProgramRunMode : uint8_t {
  // Every op gets its signature from the assignment (ApplyWithSignature),
  // every free tensor its layout.
  kFollowPlan,
  // Free tensors take the assignment's layouts; ops choose for themselves
  // (Apply with the context's cost policy), as an eager program would.
  kEagerInference,
};

struct ProgramRunOptions {
  uint64_t seed = 1;
  // Leaves (tensor ids) seeded with |x| instead: values that must not be
  // negative, such as Adam's second moment in a training step.
  std::vector<int> nonnegative;
  // Leaves (tensor ids) whose logical value is given, as a model's weights
  // and inputs are (`sbp run`); each must have the tensor's dtype and
  // shape. Other leaves are seeded.
  std::map<int, LocalTensor> given;
  // Tensor ids whose logical values come back in `gathered` after the last
  // op, e.g. a training step's gradients and its parameters as the updates
  // left them. Gathering them is not counted in `traffic`.
  std::vector<int> gather;
};

struct ProgramRunResult {
  // Per Program::outputs(): the logical value, on every rank of the
  // placement.
  std::vector<LocalTensor> outputs;
  // Per ProgramRunOptions::gather entry: the logical value after the run.
  std::vector<LocalTensor> gathered;
  // Per op: the signature it ran with.
  std::vector<NdSbpSignature> signatures;
  // This rank's traffic over the program's own boxing: op inputs moved to
  // their signature and program outputs moved to their target layout
  // (graph::OutputTarget), as graph::EvaluateAssignment prices them. The
  // final gathering of outputs for the result is not counted.
  comm::Traffic traffic;
};

// The logical value RunProgram gives leaf `t` (see above); `nonnegative`:
// its absolute value.
absl::StatusOr<LocalTensor> LeafValue(const graph::ProgramTensor& t, uint64_t seed,
                                      bool nonnegative = false);

// kInvalidArgument if the assignment does not fit the program; op errors
// name the op's label.
absl::StatusOr<ProgramRunResult> RunProgram(EagerContext& ctx, const graph::Program& program,
                                            const graph::Assignment& assignment,
                                            ProgramRunMode mode, const ProgramRunOptions& options);

}  // namespace oneflow_sbp::eager

#endif  // EAGER_PROGRAM_RUNNER_H_
