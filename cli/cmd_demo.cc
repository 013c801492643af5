#include "cli/cmd_demo.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "comm/inprocess_world.h"
#include "eager/autograd.h"
#include "eager/tensor_layout.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/storage/tensor_difference.h"
#include "cli/demo_report.h"
#include "cli/program_capture.h"
#include "cli/rank_runner.h"

namespace oneflow_sbp::cli {
namespace {

using eager::EagerContext;
using eager::GlobalTensor;

struct Run {
  // Steps the run started after (a resumed checkpoint's count, else 0).
  int first_step = 0;
  std::vector<double> losses;
  // Step 0's gradient of every parameter, as the full tensor.
  std::vector<LocalTensor> grads;
  // Seconds of each step on this rank: forward, loss value, backward and
  // Adam; step 0's gathering of the gradients for the check is left out.
  std::vector<double> step_seconds;
};

// Trains for `steps` on `placement` through `ctx`; every rank of the
// placement calls it.
// `on_step(step, loss)` (may be empty) after each step's loss.
absl::StatusOr<Run> Train(EagerContext& ctx, const DemoOptions& o, const Placement& placement,
                          eager::ProgramRecorder* recorder = nullptr,
                          const std::function<void(int, double)>& on_step = {}) {
  OFS_ASSIGN_OR_RETURN(models::LlamaModel model, models::LlamaModel::Create(ctx, o.model, placement, o.seed));
  OFS_RETURN_IF_ERROR(model.SetBatch(ctx, o.seed));
  Run run;
  if (o.resume) {
    OFS_ASSIGN_OR_RETURN(run.first_step, model.Restore(ctx, *o.resume));
  }
  for (int step = 0; step < o.steps; ++step) {
    if (step == 0 && recorder != nullptr) {
      model.NameTensors(*recorder);
      ctx.set_recorder(recorder);
    }
    const absl::Time start = absl::Now();
    absl::Duration checking = absl::ZeroDuration();
    absl::StatusOr<GlobalTensor> loss_or = model.Loss(ctx);
    ctx.set_recorder(nullptr);
    OFS_ASSIGN_OR_RETURN(GlobalTensor loss, std::move(loss_or));
    if (step == 0 && recorder != nullptr) recorder->Name(loss, "loss");
    OFS_ASSIGN_OR_RETURN(LocalTensor value, eager::ToFull(ctx, loss));
    run.losses.push_back(value.GetDouble(0));
    if (on_step) on_step(step, run.losses.back());
    OFS_RETURN_IF_ERROR(eager::Backward(ctx, loss));
    if (step == 0) {
      const absl::Time check_start = absl::Now();
      for (const auto& [name, p] : model.parameters()) {
        if (!p.grad().defined()) {
          return absl::InternalError(absl::StrCat("demo: no gradient reached ", name));
        }
        OFS_ASSIGN_OR_RETURN(LocalTensor g, eager::ToFull(ctx, p.grad()));
        run.grads.push_back(g);
      }
      checking = absl::Now() - check_start;
    }
    OFS_RETURN_IF_ERROR(model.AdamStep(ctx, run.first_step + step + 1));
    run.step_seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start - checking));
  }
  if (o.save) OFS_RETURN_IF_ERROR(model.Save(ctx, *o.save, run.first_step + o.steps));
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
std::vector<eager::OpEvent> StepZeroOps(const eager::TraceRecorder& trace, bool all_ops) {
  std::vector<eager::OpEvent> ops;
  bool seen_backward = false;
  for (const eager::OpEvent& e : trace.events()) {
    if (e.backward) seen_backward = true;
    if (seen_backward && !all_ops) break;
    if (seen_backward && !e.backward && e.op != "redistribute") break;
    ops.push_back(e);
  }
  return ops;
}

// The options checked before any rank starts: a bad one is
// kInvalidArgument; a device this build or machine lacks fails here too.
struct DemoSetup {
  DeviceType device = DeviceType::kCpu;
  Placement placement;
  Backend backend = Backend::kThreads;
  PolicyName policy;
};

absl::StatusOr<DemoSetup> CheckDemoOptions(const DemoOptions& o, engine::Engine& engine) {
  DemoSetup setup;
  absl::StatusOr<DeviceType> device = ParseDeviceType(o.device);
  if (!device.ok() || (*device != DeviceType::kCpu && *device != DeviceType::kCuda)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device=", QuotedInput(o.device), ": expected cpu or cuda"));
  }
  setup.device = *device;
  OFS_ASSIGN_OR_RETURN(setup.placement, MeshPlacement(o.mesh, *device));
  OFS_RETURN_IF_ERROR(models::ValidateConfig(o.model, setup.placement));
  if (o.steps < 2) return absl::InvalidArgumentError("--steps must be at least 2 (the loss must go down)");
  OFS_ASSIGN_OR_RETURN(setup.backend, ParseBackend(o.backend));
  if (*device != DeviceType::kCpu) {
    if (setup.backend != Backend::kThreads) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device=", o.device, " runs on --backend=threads (rank threads sharing one GPU); ",
          "Gloo moves host memory only"));
    }
    absl::StatusOr<LocalTensor> probe = LocalTensor::Zeros(DataType::kFloat32, {1}, *device);
    if (!probe.ok()) {
      return absl::Status(probe.status().code(),
                          absl::StrCat("--device=", o.device, ": ", probe.status().message()));
    }
  }
  setup.policy = PolicyName::Of(o.cost);
  // An unknown policy is refused before any rank starts.
  OFS_RETURN_IF_ERROR(engine.SelectionPolicyFor(setup.policy, setup.placement).status());
  return setup;
}

std::string DemoHeader(const DemoOptions& o, const DemoSetup& setup) {
  const models::LlamaConfig& c = o.model;
  return absl::StrFormat(
      "LLaMA-style decoder: %d layer%s, batch %d, seq %d, hidden %d, %d heads, ffn %d, vocab %d\n"
      "mesh %s (%s): data parallel on axis 0; Megatron on axis 1 (q/k/v, gate/up and the\n"
      "vocabulary projection column-parallel, output and down projections row-parallel, the\n"
      "embedding vocabulary-parallel). Only inputs and weights are marked; every other\n"
      "layout is the engine's choice (cost policy %s).\n\n",
      c.layers, c.layers == 1 ? "" : "s", c.batch, c.seq, c.hidden, c.heads, c.ffn, c.vocab,
      setup.placement.ToString(), BackendName(setup.backend), setup.policy.str());
}

// The reference: the same model and seed on one CPU rank.
absl::StatusOr<Run> ReferenceRun(const DemoOptions& o, engine::Engine& engine) {
  Run reference;
  OFS_ASSIGN_OR_RETURN(Placement single, Placement::Parse("cpu:0"));
  OFS_ASSIGN_OR_RETURN(std::vector<absl::Status> ran,
                       comm::RunRanks(1, [&](comm::Communicator& one) {
                         eager::EagerOptions ref_options;
                         ref_options.kernels = o.kernels;
                         EagerContext ref_ctx(engine, one, ref_options);
                         DemoOptions ref = o;
                         ref.save.reset();  // the distributed run saves
                         OFS_ASSIGN_OR_RETURN(Run r, Train(ref_ctx, ref, single));
                         reference = std::move(r);
                         return absl::OkStatus();
                       }));
  OFS_RETURN_IF_ERROR(ran[0]);
  return reference;
}

// Step 0's forward as two programs for `sbp plan`: FILE (weights free)
// and FILE's stem + ".marked.json" (the Megatron marking).
absl::Status WriteRecordedPrograms(const std::string& path,
                                   const eager::ProgramRecorder& recorder) {
  std::string marked = path;
  if (absl::EndsWith(marked, ".json")) marked.resize(marked.size() - 5);
  marked += ".marked.json";
  const std::string loss_name = recorder.ops().empty() ? "" : recorder.ops().back().outputs[0];
  OFS_RETURN_IF_ERROR(WriteProgram(path, RecordedProgramToProto(recorder, false, loss_name)));
  return WriteProgram(marked, RecordedProgramToProto(recorder, true, loss_name));
}

// The checks of a run against the reference, into `report`.
void CheckAgainstReference(const Run& run, const Run& reference, DemoReport* report) {
  report->losses = run.losses;
  report->reference_losses = reference.losses;
  report->step_seconds = run.step_seconds;
  double loss_err = 0;
  for (size_t s = 0; s < run.losses.size(); ++s) {
    loss_err = std::max(loss_err, std::abs(run.losses[s] - reference.losses[s]) /
                                      std::max(1e-6, std::abs(reference.losses[s])));
  }
  double grad_err = 0;
  for (size_t i = 0; i < run.grads.size(); ++i) {
    grad_err = std::max(grad_err, MaxRelativeDifference(absl::MakeConstSpan(&run.grads[i], 1),
                                                        absl::MakeConstSpan(&reference.grads[i], 1),
                                                        1e-6));
  }
  report->loss_max_rel_err = loss_err;
  report->grad_max_rel_err = grad_err;
  report->gradients = static_cast<int>(run.grads.size());
  report->loss_matches = loss_err < 1e-4;
  report->gradients_match = grad_err < 1e-3;
  report->loss_went_down = run.losses.back() < run.losses.front();
}

void AddCollectives(const std::vector<int64_t>& totals, DemoReport* report) {
  for (int k = 0; k < kNumKinds; ++k) {
    if (totals[3 * k] == 0) continue;
    report->collectives.push_back({kKinds[k], totals[3 * k], totals[3 * k + 1], totals[3 * k + 2]});
  }
}

// Chrome traces: threads, one file with every rank's timeline (rank 0
// writes it once all have arrived); processes, one file per rank.
absl::Status WriteTraces(const DemoOptions& o, Backend backend, comm::Communicator& world,
                         EagerContext& ctx, std::vector<eager::TraceRecorder>& traces) {
  if (backend != Backend::kThreads) {
    return eager::WriteChromeTrace(absl::StrCat(*o.trace, ".rank", world.rank(), ".json"),
                                   {&ctx.trace()});
  }
  traces[world.rank()] = ctx.trace();
  OFS_RETURN_IF_ERROR(world.Barrier());
  if (world.rank() != 0) return absl::OkStatus();
  std::vector<const eager::TraceRecorder*> all;
  for (const eager::TraceRecorder& t : traces) all.push_back(&t);
  return eager::WriteChromeTrace(*o.trace, all);
}

}  // namespace

absl::StatusOr<std::string> RunDemo(const DemoOptions& o, engine::Engine& engine, int* exit_code) {
  OFS_ASSIGN_OR_RETURN(const DemoSetup setup, CheckDemoOptions(o, engine));
  auto progress = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  progress(DemoHeader(o, setup));
  progress(absl::StrCat("single-rank reference: ", o.steps, " steps on cpu:0 ...\n"));
  OFS_ASSIGN_OR_RETURN(const Run reference, ReferenceRun(o, engine));
  progress(absl::StrCat("training on ", setup.placement.ToString(), ":\n"));
  const int n = static_cast<int>(setup.placement.parallel_num());
  std::vector<eager::TraceRecorder> traces(n);
  RankRunOptions run_options;
  run_options.device = setup.device;
  OFS_ASSIGN_OR_RETURN(std::string out, RunOnRanks(setup.backend, n, [&](comm::Communicator& world)
                                                      -> absl::StatusOr<std::string> {
    eager::EagerOptions eo;
    eo.kernels = o.kernels;
    eo.trace = true;
    eo.cost_policy = setup.policy;
    EagerContext ctx(engine, world, eo);
    eager::ProgramRecorder recorder(setup.placement);
    const bool records = o.record.has_value() && world.rank() == 0;
    std::function<void(int, double)> on_step;
    if (world.rank() == 0) {
      on_step = [&](int step, double loss) {
        const int first = reference.first_step;
        progress(absl::StrFormat("  step %d/%d: loss %.6f (reference %.6f)\n", first + step + 1,
                                 first + o.steps, loss, reference.losses[step]));
      };
    }
    OFS_ASSIGN_OR_RETURN(Run run,
                         Train(ctx, o, setup.placement, records ? &recorder : nullptr, on_step));
    if (records) OFS_RETURN_IF_ERROR(WriteRecordedPrograms(*o.record, recorder));
    std::vector<int64_t> totals = KindTotals(ctx.trace());
    OFS_RETURN_IF_ERROR(world.AllReduce(totals.data(), totals.data(),
                                        static_cast<int64_t>(totals.size()), DataType::kInt64));
    if (o.trace) OFS_RETURN_IF_ERROR(WriteTraces(o, setup.backend, world, ctx, traces));
    if (world.rank() != 0) return std::string();
    DemoReport report;
    report.placement = setup.placement.ToString();
    report.backend = std::string(BackendName(setup.backend));
    report.cost_policy = std::string(setup.policy.str());
    report.steps = o.steps;
    report.first_step = run.first_step;
    if (o.save) report.saved = *o.save;
    report.ops = StepZeroOps(ctx.trace(), o.all_ops);
    AddCollectives(totals, &report);
    CheckAgainstReference(run, reference, &report);
    if (o.record) report.record = *o.record;
    if (o.trace) {
      report.trace = absl::StrCat(*o.trace, setup.backend == Backend::kThreads ? "" : ".rank<N>.json");
    }
    if (!report.passed() && exit_code != nullptr) *exit_code = 1;
    return o.json ? DemoReportJson(report) : absl::StrCat("\n", DemoReportText(report));
  }, run_options));
  // Without a progress sink the header leads the text report.
  if (!o.json && !o.progress) out = absl::StrCat(DemoHeader(o, setup), out);
  return out;
}

}  // namespace oneflow_sbp::cli
