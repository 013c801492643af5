#include "graph/program_costs.h"

#include "absl/strings/str_cat.h"
#include "graph/cost_graph.h"
#include "graph/kernel_collectives.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::graph {

std::vector<NdSbp> TensorLayouts(const Program& program, const Assignment& a) {
  std::vector<NdSbp> layouts(program.tensors().size());
  const std::vector<int> free = program.FreeTensors();
  for (size_t j = 0; j < free.size(); ++j) layouts[free[j]] = a.free_layouts[j];
  for (size_t t = 0; t < program.tensors().size(); ++t) {
    const ProgramTensor& tensor = program.tensors()[t];
    if (tensor.role == TensorRole::kFixed) layouts[t] = tensor.nd_sbp;
    if (tensor.role == TensorRole::kActivation) {
      layouts[t] = a.op_signatures[tensor.producer][tensor.producer_blob];
    }
  }
  return layouts;
}

NdSbp OutputTarget(const ProgramOutput& output, const NdSbp& from) {
  if (output.nd_sbp.has_value()) return *output.nd_sbp;
  NdSbp to = from;
  for (int i = 0; i < to.size(); ++i) {
    if (to[i].is_partial()) to.set(i, SbpParallel::Broadcast());
  }
  return to;
}

int64_t CopyBytes(const TensorDesc& desc, const NdSbp& from, const NdSbp& to,
                  absl::Span<const int64_t> hierarchy) {
  return from == to ? 0 : LocalBytes(desc, to, hierarchy);
}

absl::StatusOr<BoxingPrice> ReadPrice(BoxingPrices& prices, const OpCall& call, int blob,
                                      const TensorDesc& desc, const NdSbp& from, const NdSbp& to) {
  if (from == to) return BoxingPrice();
  if (call.is_mutable_input(blob)) {
    BoxingPrice p;
    p.time_s = kInfeasible;
    p.supported = false;
    p.summary = "mutable input may not be boxed";
    return p;
  }
  return prices.Price(desc, from, to);
}

namespace {

// An assignment that fits the program: a signature of the right length per
// op and a layout valid for its shape per free tensor.
absl::Status CheckAssignmentFits(const Program& program, const Assignment& a) {
  const std::vector<int> free = program.FreeTensors();
  if (a.op_signatures.size() != program.ops().size() || a.free_layouts.size() != free.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "assignment: ", a.op_signatures.size(), " signatures and ", a.free_layouts.size(),
        " free layouts for ", program.ops().size(), " ops and ", free.size(), " free tensors"));
  }
  const absl::Span<const int64_t> hierarchy = program.placement().hierarchy();
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const ProgramOp& op = program.ops()[i];
    if (static_cast<int>(a.op_signatures[i].size()) != op.call->num_blobs()) {
      return absl::InvalidArgumentError(absl::StrCat("assignment: ", op.label, ": ",
                                                     a.op_signatures[i].size(), " layouts for ",
                                                     op.call->num_blobs(), " blobs"));
    }
  }
  for (size_t j = 0; j < free.size(); ++j) {
    const ProgramTensor& tensor = program.tensors()[free[j]];
    absl::Status valid = ValidateNdSbp(a.free_layouts[j], tensor.desc.shape, hierarchy);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("assignment: free tensor ", QuotedInput(tensor.name), ": ", valid.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProgramCosts> EvaluateAssignment(const Program& program, const Assignment& a,
                                                BoxingPrices& prices) {
  OFS_RETURN_IF_ERROR(CheckAssignmentFits(program, a));
  const absl::Span<const int64_t> hierarchy = program.placement().hierarchy();
  const std::vector<NdSbp> layouts = TensorLayouts(program, a);
  const boxing::Calibration& calibration = prices.engine().calibration();
  ProgramCosts costs;
  auto add_edge = [&costs](BoxingEdge e) {
    costs.comm_time_s += e.price.time_s;
    costs.comm_bytes += e.price.bytes;
    costs.edges.push_back(std::move(e));
  };
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const ProgramOp& op = program.ops()[i];
    const NdSbpSignature& sig = a.op_signatures[i];
    std::vector<TensorDesc> descs;
    for (int t : op.inputs) descs.push_back(program.tensors()[t].desc);
    for (int t : op.outputs) descs.push_back(program.tensors()[t].desc);
    for (int b = 0; b < op.call->num_blobs(); ++b) {
      absl::Status valid = ValidateNdSbp(sig[b], descs[b].shape, hierarchy);
      if (!valid.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("assignment: ", op.label, " blob ",
                                                       op.call->bn(b), ": ", valid.message()));
      }
    }
    for (int b = 0; b < op.call->num_inputs(); ++b) {
      const int t = op.inputs[b];
      OFS_ASSIGN_OR_RETURN(BoxingPrice price, ReadPrice(prices, *op.call, b, descs[b],
          layouts[t], sig[b]));
      add_edge(BoxingEdge{t, static_cast<int>(i), b, layouts[t], sig[b], std::move(price)});
    }
    // What the kernel itself communicates under `sig` (not a read: no edge).
    for (const BoxingPrices::Request& r : KernelCollectives(*op.call, descs, sig)) {
      OFS_ASSIGN_OR_RETURN(BoxingPrice price, prices.Price(r.desc, r.from, r.to));
      costs.comm_time_s += price.time_s;
      costs.comm_bytes += price.bytes;
      costs.kernel_comm_time_s += price.time_s;
      costs.kernel_comm_bytes += price.bytes;
    }
    costs.op_work.push_back(EstimateOpWork(*op.call, descs, sig, hierarchy, calibration));
    costs.compute_time_s += costs.op_work.back().time_s;
  }
  for (const ProgramOutput& out : program.outputs()) {
    const NdSbp& from = layouts[out.tensor];
    const NdSbp to = OutputTarget(out, from);
    OFS_ASSIGN_OR_RETURN(BoxingPrice price, prices.Price(program.tensors()[out.tensor].desc, from,
        to));
    add_edge(BoxingEdge{out.tensor, -1, -1, from, to, std::move(price)});
  }
  for (size_t t = 0; t < program.tensors().size(); ++t) {
    costs.peak_memory_bytes += LocalBytes(program.tensors()[t].desc, layouts[t], hierarchy);
  }
  for (const BoxingEdge& e : costs.edges) {
    costs.copy_memory_bytes += CopyBytes(program.tensors()[e.tensor].desc, e.from, e.to, hierarchy);
  }
  costs.peak_memory_bytes += costs.copy_memory_bytes;
  costs.total_time_s = costs.comm_time_s + costs.compute_time_s;
  return costs;
}

}  // namespace oneflow_sbp::graph
