#include "kernels/verify/verifier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "kernels/shard_harness.h"
#include "kernels/verify/input_recipes.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {
namespace {

constexpr int64_t kMaxRanks = 16;

std::string MeshToString(const std::vector<int64_t>& mesh) {
  return absl::StrCat("[", absl::StrJoin(mesh, ","), "]");
}

// "cpu:0-5 [2,3]" ("cuda:0-2" for a 1-D mesh on cuda).
std::string PlacementFor(const std::vector<int64_t>& mesh, DeviceType device) {
  int64_t n = 1;
  for (int64_t e : mesh) n *= e;
  const std::string ranks = absl::StrCat(DeviceTypeName(device), n == 1 ? ":0" : ":0-",
                                         n == 1 ? "" : absl::StrCat(n - 1));
  return mesh.size() == 1 ? ranks : absl::StrCat(ranks, " ", MeshToString(mesh));
}

absl::Status CheckMesh(const std::vector<int64_t>& mesh) {
  int64_t n = 1;
  for (int64_t e : mesh) {
    if (e < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh ", MeshToString(mesh), ": extent ", e, " is not positive"));
    }
    n *= e;
  }
  if (mesh.empty() || mesh.size() > 3 || n > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrCat("mesh ", MeshToString(mesh),
                                                   ": expected 1 to 3 axes and at most ",
                                                   kMaxRanks, " ranks, e.g. 2,3"));
  }
  return absl::OkStatus();
}

std::string InputsToString(const OpInputs& in) {
  std::vector<std::string> parts;
  for (const LocalTensor& t : in.inputs) {
    parts.push_back(absl::StrCat(DataTypeName(t.dtype()), DimsToString(t.dims())));
  }
  std::string s = absl::StrJoin(parts, " ");
  const std::string attrs = in.call->attrs().ToString();
  if (!attrs.empty() && attrs != "{}") absl::StrAppend(&s, " ", attrs);
  return s;
}

// One tensor on `device`, so that a missing backend or device is one error
// for the whole run instead of one per op and candidate.
absl::Status CheckDevice(DeviceType device) {
  if (device == DeviceType::kCpu) return absl::OkStatus();
  absl::StatusOr<LocalTensor> probe = LocalTensor::Zeros(DataType::kFloat32, {1}, device);
  if (probe.ok()) return absl::OkStatus();
  return absl::Status(probe.status().code(),
                      absl::StrCat("verify on ", DeviceTypeName(device), ": ",
                                   probe.status().message()));
}

// The device kernel on one rank with every blob whole: kUnimplemented
// means the device lacks this call (a dtype, an attribute), a coverage gap
// rather than a layout bug. Other errors are left for the sweep to report
// per candidate.
absl::Status ProbeDeviceKernel(const OpInputs& in, const HarnessOptions& harness) {
  const std::vector<int64_t> rank0 = {0};
  OFS_ASSIGN_OR_RETURN(Placement one, Placement::Make(harness.device, rank0));
  const NdSbpSignature all_b(in.call->num_blobs(), NdSbp{SbpParallel::Broadcast()});
  absl::StatusOr<std::vector<LocalTensor>> r =
      RunSharded(in.call, in.inputs, one, all_b, harness);
  return r.ok() || r.status().code() != absl::StatusCode::kUnimplemented ? absl::OkStatus()
                                                                         : r.status();
}

OpVerification VerifyOne(const std::shared_ptr<const OpDef>& def, const SweepOptions& sweep,
                         const KernelRegistry& kernels, uint64_t seed) {
  OpVerification v;
  v.op = def->type_name();
  const absl::Time start = absl::Now();
  absl::StatusOr<KernelFn> kernel = kernels.Find(v.op, DeviceType::kCpu);
  if (!kernel.ok()) {
    v.outcome = VerifyOutcome::kNoKernel;
    v.reason = std::string(kernel.status().message());
    return v;
  }
  const InputRecipe* listed = FindInputRecipe(v.op);
  const InputRecipe recipe = listed != nullptr ? *listed : DefaultInputRecipe(*def);
  absl::StatusOr<OpInputs> in = MakeOpInputs(def, recipe, seed);
  if (!in.ok()) {
    v.outcome = VerifyOutcome::kNoRecipe;
    v.reason = listed != nullptr
                   ? absl::StrCat("input recipe rejected: ", in.status().message())
                   : absl::StrCat("default recipe (", absl::StrJoin(recipe.inputs, " "),
                                  ") rejected: ", in.status().message());
    return v;
  }
  v.inputs = InputsToString(*in);
  const DeviceType device = sweep.harness.device;
  if (device != DeviceType::kCpu) {
    absl::StatusOr<KernelFn> on_device = kernels.Find(v.op, device);
    absl::Status probe = on_device.ok() ? ProbeDeviceKernel(*in, sweep.harness)
                                        : on_device.status();
    if (!probe.ok()) {
      v.outcome = VerifyOutcome::kNoDeviceKernel;
      v.reason = std::string(probe.message());
      v.seconds = absl::ToDoubleSeconds(absl::Now() - start);
      return v;
    }
  }
  SweepResult r = SweepSignatures(in->call, in->inputs, sweep);
  v.checked = r.checked;
  v.skipped = r.skipped;
  v.failures = std::move(r.failures);
  if (!v.failures.empty()) v.outcome = VerifyOutcome::kFailed;
  v.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return v;
}

}  // namespace

const char* VerifyOutcomeName(VerifyOutcome outcome) {
  switch (outcome) {
    case VerifyOutcome::kPassed: return "passed";
    case VerifyOutcome::kFailed: return "FAILED";
    case VerifyOutcome::kNoKernel: return "no cpu kernel";
    case VerifyOutcome::kNoRecipe: return "no input recipe";
    case VerifyOutcome::kNoDeviceKernel: return "no cuda kernel";
  }
  return "?";
}

int VerifyReport::checked() const {
  int n = 0;
  for (const OpVerification& v : ops) n += v.checked;
  return n;
}

int VerifyReport::count(VerifyOutcome outcome) const {
  return static_cast<int>(std::count_if(
      ops.begin(), ops.end(), [&](const OpVerification& v) { return v.outcome == outcome; }));
}

int VerifyReport::failed_ops() const { return count(VerifyOutcome::kFailed); }

bool VerifyReport::ok() const {
  return count(VerifyOutcome::kPassed) + count(VerifyOutcome::kNoDeviceKernel) ==
         static_cast<int>(ops.size());
}

absl::StatusOr<VerifyReport> RunVerify(const OpRegistry& registry, const VerifyOptions& options) {
  std::vector<std::shared_ptr<const OpDef>> defs;
  const std::vector<std::string> names = options.ops.empty() ? registry.OpNames() : options.ops;
  for (const std::string& name : names) {
    std::shared_ptr<const OpDef> def = registry.Find(name);
    if (def == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown op ", QuotedInput(name), "; `sbp ops` lists them"));
    }
    defs.push_back(std::move(def));
  }
  std::sort(defs.begin(), defs.end(),
            [](const auto& a, const auto& b) { return a->type_name() < b->type_name(); });

  absl::Status device_ok = CheckDevice(options.device);
  OFS_RETURN_IF_ERROR(device_ok);
  const DeviceType device = options.device;
  SweepOptions sweep;
  sweep.harness.device = device;
  sweep.harness.ranks_as_threads = true;
  sweep.harness.seed = options.seed;
  sweep.harness.registry = options.kernels;
  sweep.sample_seed = options.seed;
  sweep.nd_sample_size = options.sample_3d;
  VerifyReport report;
  report.device = device;
  if (options.mesh.empty()) {
    sweep.placements_1d = {PlacementFor({2}, device), PlacementFor({3}, device)};
    sweep.placements_nd = {PlacementFor({2, 2}, device), PlacementFor({2, 3}, device)};
    sweep.placements_nd_sampled = {PlacementFor({2, 2, 2}, device)};
    report.meshes = absl::StrCat("[2] [3] [2,2] [2,3] [2,2,2] (sample of ", options.sample_3d,
                                 " per op)");
  } else {
    absl::Status s = CheckMesh(options.mesh);
    OFS_RETURN_IF_ERROR(s);
    sweep.placements_1d.clear();
    sweep.placements_nd.clear();
    (options.mesh.size() == 1 ? sweep.placements_1d : sweep.placements_nd)
        .push_back(PlacementFor(options.mesh, device));
    report.meshes = MeshToString(options.mesh);
  }
  const KernelRegistry& kernels =
      options.kernels != nullptr ? *options.kernels : KernelRegistry::Global();
  const absl::Time start = absl::Now();
  for (const auto& def : defs) report.ops.push_back(VerifyOne(def, sweep, kernels, options.seed));
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return report;
}

std::string VerifyReportToText(const VerifyReport& report) {
  std::string out;
  std::vector<std::string> failed, no_kernel, no_recipe, no_device_kernel;
  for (const OpVerification& v : report.ops) {
    absl::StrAppend(&out, v.op, ": ", VerifyOutcomeName(v.outcome));
    switch (v.outcome) {
      case VerifyOutcome::kNoKernel:
      case VerifyOutcome::kNoRecipe:
      case VerifyOutcome::kNoDeviceKernel:
        absl::StrAppend(&out, " (", v.reason, ")\n");
        (v.outcome == VerifyOutcome::kNoKernel   ? no_kernel
         : v.outcome == VerifyOutcome::kNoRecipe ? no_recipe
                                                 : no_device_kernel)
            .push_back(v.op);
        continue;
      case VerifyOutcome::kFailed:
        failed.push_back(v.op);
        break;
      case VerifyOutcome::kPassed:
        break;
    }
    absl::StrAppend(&out, ", ", v.checked, " candidates",
                    v.skipped ? absl::StrCat(" (", v.skipped, " skipped: P on bool)") : "",
                    v.failures.empty() ? "" : absl::StrCat(", ", v.failures.size(), " failures"),
                    "  [", v.inputs, "]\n");
    for (const SweepFailure& f : v.failures) {
      if (f.signature.empty()) {
        absl::StrAppend(&out, "  ", f.detail, "\n");
        continue;
      }
      absl::StrAppend(&out, "  on ", f.placement, ": ", f.signature, "\n    ");
      if (!f.blob.empty()) {
        absl::StrAppend(&out, f.blob, absl::StrFormat(" max error %g: ", f.max_error));
      }
      absl::StrAppend(&out, f.detail, "\n");
    }
  }
  const bool on_device = report.device != DeviceType::kCpu;
  const std::string device = std::string(DeviceTypeName(report.device));
  absl::StrAppend(&out, "\n", report.ops.size(), " ops on ", report.meshes,
                  on_device ? absl::StrCat(", ", device, " kernels against the cpu kernel") : "",
                  ": ", report.count(VerifyOutcome::kPassed), " passed, ", failed.size(),
                  " failed, ",
                  on_device ? absl::StrCat(no_device_kernel.size(), " without a ", device,
                                           " kernel, ")
                            : "",
                  no_kernel.size(), " without a cpu kernel, ", no_recipe.size(),
                  " without an input recipe; ", report.checked(), " candidates checked in ",
                  absl::StrFormat("%.1f", report.seconds), " s\n");
  if (!failed.empty()) absl::StrAppend(&out, "failed: ", absl::StrJoin(failed, " "), "\n");
  if (!no_kernel.empty()) {
    absl::StrAppend(&out, "no cpu kernel: ", absl::StrJoin(no_kernel, " "), "\n");
  }
  if (!no_recipe.empty()) {
    absl::StrAppend(&out, "no input recipe: ", absl::StrJoin(no_recipe, " "), "\n");
  }
  if (!no_device_kernel.empty()) {
    absl::StrAppend(&out, "no ", device, " kernel: ", absl::StrJoin(no_device_kernel, " "), "\n");
  }
  return out;
}

}  // namespace oneflow_sbp::kernels
