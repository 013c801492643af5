#include "tools/cmd_demo.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "boxing/comm/inprocess_world.h"
#include "oneflow_sbp/eager/autograd.h"
#include "oneflow_sbp/eager/tensor_layout.h"
#include "oneflow_sbp/status_macros.h"
#include "oneflow_sbp/tensor_difference.h"
#include "tools/program_capture.h"
#include "tools/rank_runner.h"

namespace oneflow_sbp::cli {
namespace {

using eager::EagerContext;
using eager::GlobalTensor;

struct Run {
  std::vector<double> losses;
  // Step 0's gradient of every parameter, as the full tensor.
  std::vector<LocalTensor> grads;
};

// Trains for `steps` on `placement` through `ctx`; every rank of the
// placement calls it.
absl::StatusOr<Run> Train(EagerContext& ctx, const DemoOptions& o, const Placement& placement,
                          eager::ProgramRecorder* recorder = nullptr) {
  OFS_ASSIGN_OR_RETURN(LlamaModel model, LlamaModel::Create(ctx, o.model, placement, o.seed));
  OFS_RETURN_IF_ERROR(model.SetBatch(ctx, o.seed));
  Run run;
  for (int step = 0; step < o.steps; ++step) {
    if (step == 0 && recorder != nullptr) {
      model.NameTensors(*recorder);
      ctx.set_recorder(recorder);
    }
    absl::StatusOr<GlobalTensor> loss_or = model.Loss(ctx);
    ctx.set_recorder(nullptr);
    OFS_ASSIGN_OR_RETURN(GlobalTensor loss, std::move(loss_or));
    if (step == 0 && recorder != nullptr) recorder->Name(loss, "loss");
    OFS_ASSIGN_OR_RETURN(LocalTensor value, eager::ToFull(ctx, loss));
    run.losses.push_back(value.GetDouble(0));
    OFS_RETURN_IF_ERROR(eager::Backward(ctx, loss));
    if (step == 0) {
      for (const auto& [name, p] : model.parameters()) {
        if (!p.grad().defined()) {
          return absl::InternalError(absl::StrCat("demo: no gradient reached ", name));
        }
        OFS_ASSIGN_OR_RETURN(LocalTensor g, eager::ToFull(ctx, p.grad()));
        run.grads.push_back(g);
      }
    }
    OFS_RETURN_IF_ERROR(model.AdamStep(ctx, step + 1));
  }
  return run;
}

absl::StatusOr<Placement> MeshPlacement(const std::string& mesh, DeviceType device) {
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (absl::string_view d : absl::StrSplit(mesh, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v) || v < 1 || v > 64) {
      return absl::InvalidArgumentError(absl::StrCat("--mesh=", mesh, ": expected extents such as 2,2"));
    }
    dims.push_back(v);
    n *= v;
  }
  if (dims.empty() || dims.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mesh=", mesh, ": the demo runs on a 1- or 2-axis mesh (data, then tensor parallel)"));
  }
  return Placement::Parse(absl::StrCat(DeviceTypeName(device), ":0-", n - 1, " [",
                                       absl::StrJoin(dims, ","), "]"));
}

// Collective kinds, in report order.
constexpr const char* kKinds[] = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "p2p",
                                  "local_slice", "local_b_to_p", "local_s_to_p"};
constexpr int kNumKinds = 8;

int KindIndex(const std::string& step) {
  for (int k = 0; k < kNumKinds; ++k) {
    if (absl::StartsWith(step, kKinds[k])) return k;
  }
  return -1;
}

// Per kind: steps, planned bytes received, measured bytes received.
std::vector<int64_t> KindTotals(const eager::TraceRecorder& trace) {
  std::vector<int64_t> t(3 * kNumKinds, 0);
  for (const eager::OpEvent& e : trace.events()) {
    for (const eager::BoxingEvent& b : e.boxing_steps) {
      const int k = KindIndex(b.step);
      if (k < 0) continue;
      t[3 * k] += 1;
      t[3 * k + 1] += b.planned_received;
      t[3 * k + 2] += b.received;
    }
  }
  return t;
}

// Step 0 of rank 0: the forward ops (until the first backward op), or
// with `all_ops` forward and backward (until the next step's forward).
std::string OpTable(const eager::TraceRecorder& trace, bool all_ops) {
  std::string out;
  bool seen_backward = false;
  for (const eager::OpEvent& e : trace.events()) {
    if (e.backward) seen_backward = true;
    if (seen_backward && !all_ops) break;
    if (seen_backward && !e.backward && e.op != "redistribute") break;
    absl::StrAppend(&out, absl::StrFormat("  %s%-28s %s\n", e.backward ? "bwd " : "", e.op, e.signature));
    for (const eager::BoxingEvent& b : e.boxing_steps) {
      absl::StrAppend(&out, absl::StrFormat("      boxing %-6s %-28s planned %9d B, measured %9d B\n",
                                            b.blob, b.step, b.planned_received, b.received));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunDemo(const DemoOptions& o, Engine& engine, int* exit_code) {
  absl::StatusOr<DeviceType> device = ParseDeviceType(o.device);
  if (!device.ok() || (*device != DeviceType::kCpu && *device != DeviceType::kCuda)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device='", o.device, "': expected cpu or cuda"));
  }
  OFS_ASSIGN_OR_RETURN(Placement placement, MeshPlacement(o.mesh, *device));
  OFS_RETURN_IF_ERROR(ValidateConfig(o.model, placement));
  if (o.steps < 2) return absl::InvalidArgumentError("--steps must be at least 2 (the loss must go down)");
  OFS_ASSIGN_OR_RETURN(Backend backend, ParseBackend(o.backend));
  if (*device != DeviceType::kCpu) {
    if (backend != Backend::kThreads) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device=", o.device, " runs on --backend=threads (rank threads sharing one GPU); ",
          "Gloo moves host memory only"));
    }
    // Fail before any rank starts: no backend in this build, or no device.
    absl::StatusOr<LocalTensor> probe = LocalTensor::Zeros(DataType::kFloat32, {1}, *device);
    if (!probe.ok()) {
      return absl::Status(probe.status().code(),
                          absl::StrCat("--device=", o.device, ": ", probe.status().message()));
    }
  }
  const PolicyName policy = PolicyName::Of(o.cost);
  {
    // Refuse an unknown policy before any rank starts.
    absl::StatusOr<Engine::PolicyPtr> known = engine.SelectionPolicyFor(policy, placement);
    if (!known.ok()) return known.status();
  }
  const int n = static_cast<int>(placement.parallel_num());
  std::vector<eager::TraceRecorder> traces(n);
  RankRunOptions run_options;
  run_options.device = *device;
  return RunOnRanks(backend, n, [&](comm::Communicator& world) -> absl::StatusOr<std::string> {
    // The reference: the same model and seed on one rank.
    Run reference;
    OFS_ASSIGN_OR_RETURN(Placement single, Placement::Parse("cpu:0"));
    absl::StatusOr<std::vector<absl::Status>> ref_ran = comm::RunRanks(1, [&](comm::Communicator& one) {
      eager::EagerOptions ref_options;
      ref_options.kernels = o.kernels;
      EagerContext ref_ctx(engine, one, ref_options);
      absl::StatusOr<Run> r = Train(ref_ctx, o, single);
      if (!r.ok()) return r.status();
      reference = *std::move(r);
      return absl::OkStatus();
    });
    if (!ref_ran.ok()) return ref_ran.status();
    if (!(*ref_ran)[0].ok()) return (*ref_ran)[0];

    eager::EagerOptions eo;
    eo.kernels = o.kernels;
    eo.trace = true;
    eo.cost_policy = policy;
    EagerContext ctx(engine, world, eo);
    eager::ProgramRecorder recorder(placement);
    const bool records = o.record.has_value() && world.rank() == 0;
    OFS_ASSIGN_OR_RETURN(Run run, Train(ctx, o, placement, records ? &recorder : nullptr));
    if (records) {
      std::string marked = *o.record;
      if (absl::EndsWith(marked, ".json")) marked.resize(marked.size() - 5);
      marked += ".marked.json";
      const std::string loss_name = recorder.ops().empty() ? "" : recorder.ops().back().outputs[0];
      OFS_RETURN_IF_ERROR(WriteProgram(*o.record, RecordedProgramToProto(recorder, false, loss_name)));
      OFS_RETURN_IF_ERROR(WriteProgram(marked, RecordedProgramToProto(recorder, true, loss_name)));
    }

    std::vector<int64_t> totals = KindTotals(ctx.trace());
    OFS_RETURN_IF_ERROR(world.AllReduce(totals.data(), totals.data(),
                                        static_cast<int64_t>(totals.size()), DataType::kInt64));
    if (o.trace) {
      // Threads: one file with every rank's timeline; processes: one file
      // per rank (Perfetto opens several).
      if (backend == Backend::kThreads) {
        traces[world.rank()] = ctx.trace();
        OFS_RETURN_IF_ERROR(world.Barrier());
        if (world.rank() == 0) {
          std::vector<const eager::TraceRecorder*> all;
          for (const eager::TraceRecorder& t : traces) all.push_back(&t);
          OFS_RETURN_IF_ERROR(eager::WriteChromeTrace(*o.trace, all));
        }
      } else {
        OFS_RETURN_IF_ERROR(eager::WriteChromeTrace(
            absl::StrCat(*o.trace, ".rank", world.rank(), ".json"), {&ctx.trace()}));
      }
    }
    if (world.rank() != 0) return std::string();

    // Checks.
    double loss_err = 0;
    for (size_t s = 0; s < run.losses.size(); ++s) {
      loss_err = std::max(loss_err, std::abs(run.losses[s] - reference.losses[s]) /
                                        std::max(1e-6, std::abs(reference.losses[s])));
    }
    double grad_err = 0;
    for (size_t i = 0; i < run.grads.size(); ++i) {
      const double e = MaxRelativeDifference(absl::MakeConstSpan(&run.grads[i], 1),
                                             absl::MakeConstSpan(&reference.grads[i], 1), 1e-6);
      if (e > grad_err) grad_err = e;
    }
    const bool loss_ok = loss_err < 1e-4;
    const bool grads_ok = grad_err < 1e-3;
    const bool descends = run.losses.back() < run.losses.front();
    if (!(loss_ok && grads_ok && descends) && exit_code != nullptr) *exit_code = 1;

    const LlamaConfig& c = o.model;
    std::string out = absl::StrFormat(
        "LLaMA-style decoder: %d layer%s, batch %d, seq %d, hidden %d, %d heads, ffn %d, vocab %d\n"
        "mesh %s (%s): data parallel on axis 0; Megatron on axis 1 (q/k/v, gate/up and the\n"
        "vocabulary projection column-parallel, output and down projections row-parallel, the\n"
        "embedding vocabulary-parallel). Only inputs and weights are marked; every other\n"
        "layout is the engine's choice (cost policy %s).\n\n",
        c.layers, c.layers == 1 ? "" : "s", c.batch, c.seq, c.hidden, c.heads, c.ffn, c.vocab,
        placement.ToString(), BackendName(backend), policy.str());
    absl::StrAppend(&out, "step 0, forward, as rank 0 runs it (signature; boxing with planned and "
                          "measured bytes received by rank 0):\n");
    absl::StrAppend(&out, OpTable(ctx.trace(), o.all_ops));
    absl::StrAppend(&out, "\ncollectives over ", o.steps, " steps (forward, backward, Adam; all ranks):\n");
    for (int k = 0; k < kNumKinds; ++k) {
      if (totals[3 * k] == 0) continue;
      absl::StrAppend(&out, absl::StrFormat("  %-14s %5d steps, %12d bytes received (planned %d)\n",
                                            kKinds[k], totals[3 * k], totals[3 * k + 2],
                                            totals[3 * k + 1]));
    }
    std::vector<std::string> losses, ref_losses;
    for (double l : run.losses) losses.push_back(absl::StrFormat("%.6f", l));
    for (double l : reference.losses) ref_losses.push_back(absl::StrFormat("%.6f", l));
    absl::StrAppend(&out, "\nloss per step:        ", absl::StrJoin(losses, "  "), "\n");
    absl::StrAppend(&out, "single-rank reference: ", absl::StrJoin(ref_losses, "  "), "\n");
    absl::StrAppend(&out, absl::StrFormat(
        "check: loss %s (max rel err %.2g), %d gradients %s (max rel err %.2g), loss %s\n",
        loss_ok ? "matches" : "DIFFERS", loss_err, static_cast<int>(run.grads.size()),
        grads_ok ? "match" : "DIFFER", grad_err, descends ? "went down" : "DID NOT GO DOWN"));
    if (o.record) {
      absl::StrAppend(&out, "program: ", *o.record, " (weights free) and its .marked.json twin "
                      "(Megatron marking); plan them with sbp plan --program=FILE\n");
    }
    if (o.trace) {
      absl::StrAppend(&out, "trace: ", *o.trace,
                      backend == Backend::kThreads ? "" : ".rank<N>.json",
                      " (open in ui.perfetto.dev or chrome://tracing)\n");
    }
    return out;
  }, run_options);
}

}  // namespace oneflow_sbp::cli
