#include "eager/program_runner.h"

#include <algorithm>
#include <cmath>

#include <memory>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eager/apply.h"
#include "eager/tensor_layout.h"
#include "graph/greedy.h"
#include "oneflow_sbp/values/seeded_stream.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::eager {
namespace {

bool IsFloating(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 ||
         dtype == DataType::kFloat32 || dtype == DataType::kFloat64;
}

}  // namespace

// The leaf's logical value, identical on every rank (see the header).
absl::StatusOr<LocalTensor> LeafValue(const graph::ProgramTensor& t, uint64_t seed,
                                      bool nonnegative) {
  OFS_ASSIGN_OR_RETURN(LocalTensor full, LocalTensor::Empty(t.desc.dtype, t.desc.shape.dims()));
  SeededStream stream(seed, t.name);
  const bool floating = IsFloating(t.desc.dtype);
  for (int64_t i = 0; i < full.elem_cnt(); ++i) {
    const double v = floating ? stream.Next() : static_cast<double>(stream.NextInt(2));
    full.SetDouble(i, nonnegative ? std::fabs(v) : v);
  }
  return full;
}

namespace {

absl::Status CheckAssignment(const graph::Program& program, const graph::Assignment& a,
                             ProgramRunMode mode) {
  const size_t free = program.FreeTensors().size();
  if (a.free_layouts.size() != free) {
    return absl::InvalidArgumentError(absl::StrCat("the assignment has ", a.free_layouts.size(),
                                                   " free-tensor layouts; the program has ",
                                                   free, " free tensors"));
  }
  if (mode == ProgramRunMode::kFollowPlan && a.op_signatures.size() != program.ops().size()) {
    return absl::InvalidArgumentError(absl::StrCat("the assignment has ", a.op_signatures.size(),
                                                   " op signatures; the program has ",
                                                   program.ops().size(), " ops"));
  }
  return absl::OkStatus();
}

// `value` checked against the leaf it is given for.
absl::StatusOr<LocalTensor> GivenLeaf(const graph::ProgramTensor& t, const LocalTensor& value) {
  if (value.dtype() != t.desc.dtype ||
      !std::equal(value.dims().begin(), value.dims().end(), t.desc.shape.dims().begin(),
                  t.desc.shape.dims().end())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor ", t.name, ": the given value is ", DataTypeName(value.dtype()), "[",
        absl::StrJoin(value.dims(), ","), "], the program declares ", t.desc.ToString()));
  }
  return value;
}

absl::Status Labelled(const graph::ProgramOp& op, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(op.label, ": ", s.message()));
}

}  // namespace

absl::StatusOr<ProgramRunResult> RunProgram(EagerContext& ctx, const graph::Program& program,
                                            const graph::Assignment& assignment,
                                            ProgramRunMode mode, const ProgramRunOptions& options) {
  OFS_RETURN_IF_ERROR(CheckAssignment(program, assignment, mode));
  const Placement& placement = program.placement();
  const std::vector<graph::ProgramTensor>& tensors = program.tensors();
  std::vector<GlobalTensor> values(tensors.size());

  // Leaves: no communication (FromFull takes this rank's part).
  auto leaf = [&](int id) -> absl::StatusOr<LocalTensor> {
    auto given = options.given.find(id);
    if (given != options.given.end()) return GivenLeaf(tensors[id], given->second);
    return LeafValue(tensors[id], options.seed, absl::c_linear_search(options.nonnegative, id));
  };
  const std::vector<int> free = program.FreeTensors();
  for (size_t k = 0; k < free.size(); ++k) {
    OFS_ASSIGN_OR_RETURN(LocalTensor full, leaf(free[k]));
    OFS_ASSIGN_OR_RETURN(values[free[k]],
                         FromFull(ctx, full, placement, assignment.free_layouts[k]));
  }
  for (size_t id = 0; id < tensors.size(); ++id) {
    if (tensors[id].role != graph::TensorRole::kFixed) continue;
    OFS_ASSIGN_OR_RETURN(LocalTensor full, leaf(static_cast<int>(id)));
    OFS_ASSIGN_OR_RETURN(values[id], FromFull(ctx, full, placement, tensors[id].nd_sbp));
  }

  ProgramRunResult result;
  const comm::Traffic before = ctx.world().total_traffic();
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const graph::ProgramOp& op = program.ops()[i];
    std::vector<GlobalTensor> inputs;
    inputs.reserve(op.inputs.size());
    for (int id : op.inputs) inputs.push_back(values[id]);
    // The signature the op runs with: the plan's, or eager inference's.
    // Not the inputs' layouts before the call: Apply boxes them to the
    // signature first, so those are where the op read from, not what it
    // read (issue 23: recording them reported 15 of the demo's 30 ops as
    // "another signature" although inference chose exactly the predicted
    // ones).
    NdSbpSignature sig;
    if (mode == ProgramRunMode::kFollowPlan) {
      sig = assignment.op_signatures[i];
    } else {
      std::vector<InferInput> metas;
      metas.reserve(inputs.size());
      for (const GlobalTensor& t : inputs) metas.push_back(t.meta());
      // The request Apply makes (a cache hit when Apply runs it below).
      absl::StatusOr<std::shared_ptr<const InferResult>> inferred = ctx.engine().Infer(
          graph::EagerInferRequest(op.call, placement, std::move(metas), ctx.options().cost_policy));
      if (!inferred.ok()) return Labelled(op, inferred.status());
      sig = (*inferred)->signature;
    }
    absl::StatusOr<std::vector<GlobalTensor>> outs =
        mode == ProgramRunMode::kFollowPlan
            ? ApplyWithSignature(ctx, op.call, inputs, assignment.op_signatures[i])
            : Apply(ctx, op.call, inputs);
    if (!outs.ok()) return Labelled(op, outs.status());
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      values[op.outputs[o]] = (*outs)[o];
      // Apply's outputs carry its signature's layouts: a difference means
      // EagerInferRequest no longer builds the request Apply does.
      if (!((*outs)[o].nd_sbp() == sig[inputs.size() + o])) {
        return Labelled(op, absl::InternalError(absl::StrCat(
                                "output ", o, " has layout ", (*outs)[o].nd_sbp().ToString(),
                                " but the signature recorded for it says ",
                                sig[inputs.size() + o].ToString())));
      }
    }
    result.signatures.push_back(std::move(sig));
  }

  // Outputs to their target layout (priced by the plan), then gathered
  // whole (not priced, not counted).
  std::vector<GlobalTensor> targets;
  for (const graph::ProgramOutput& out : program.outputs()) {
    const GlobalTensor& t = values[out.tensor];
    absl::StatusOr<GlobalTensor> moved =
        Redistribute(ctx, t, placement, graph::OutputTarget(out, t.nd_sbp()));
    if (!moved.ok()) {
      return absl::Status(moved.status().code(),
                          absl::StrCat("output ", tensors[out.tensor].name, ": ",
                                       moved.status().message()));
    }
    targets.push_back(*std::move(moved));
  }
  const comm::Traffic after = ctx.world().total_traffic();
  result.traffic.bytes_sent = after.bytes_sent - before.bytes_sent;
  result.traffic.bytes_received = after.bytes_received - before.bytes_received;
  for (const GlobalTensor& t : targets) {
    OFS_ASSIGN_OR_RETURN(LocalTensor full, ToFull(ctx, t));
    result.outputs.push_back(std::move(full));
  }
  for (int id : options.gather) {
    if (id < 0 || id >= static_cast<int>(values.size()) || !values[id].defined()) {
      return absl::InvalidArgumentError(absl::StrCat("gather: tensor ", id, " has no value"));
    }
    OFS_ASSIGN_OR_RETURN(LocalTensor full, ToFull(ctx, values[id]));
    result.gathered.push_back(std::move(full));
  }
  return result;
}

}  // namespace oneflow_sbp::eager
