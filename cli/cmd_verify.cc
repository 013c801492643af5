#include "cli/cmd_verify.h"

#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "kernels/verify/verifier.h"
#include "cli/cli_format.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

using kernels::OpVerification;
using kernels::VerifyOutcome;

// JSON is written here rather than through a proto message: the report is
// flat, and its only non-JSON number (an infinite max error) is written as
// the string "inf".
std::string Number(double v) {
  return std::isfinite(v) ? absl::StrFormat("%.6g", v) : "\"inf\"";
}

std::string QuotedList(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const std::string& s : items) q.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(q, ", "), "]");
}

std::vector<std::string> OpsWith(const kernels::VerifyReport& r, VerifyOutcome outcome) {
  std::vector<std::string> out;
  for (const OpVerification& v : r.ops) {
    if (v.outcome == outcome) out.push_back(v.op);
  }
  return out;
}

std::string ReportToJson(const kernels::VerifyReport& r) {
  std::vector<std::string> ops;
  for (const OpVerification& v : r.ops) {
    std::vector<std::string> failures;
    for (const kernels::SweepFailure& f : v.failures) {
      failures.push_back(absl::StrCat(
          "{\"placement\": ", JsonQuote(f.placement), ", \"signature\": ", JsonQuote(f.signature),
          ", \"blob\": ", JsonQuote(f.blob), ", \"max_error\": ", Number(f.max_error),
          ", \"detail\": ", JsonQuote(f.detail), "}"));
    }
    ops.push_back(absl::StrCat(
        "    {\"op\": ", JsonQuote(v.op), ", \"outcome\": ", JsonQuote(kernels::VerifyOutcomeName(v.outcome)),
        ", \"inputs\": ", JsonQuote(v.inputs), ", \"checked\": ", v.checked,
        ", \"skipped\": ", v.skipped, ", \"seconds\": ", Number(v.seconds),
        v.reason.empty() ? "" : absl::StrCat(", \"reason\": ", JsonQuote(v.reason)),
        ", \"failures\": [", absl::StrJoin(failures, ", "), "]}"));
  }
  return absl::StrCat(
      "{\n  \"device\": ", JsonQuote(DeviceTypeName(r.device)), ",\n  \"meshes\": ", JsonQuote(r.meshes),
      ",\n  \"ok\": ", r.ok() ? "true" : "false",
      ",\n  \"checked\": ", r.checked(), ",\n  \"seconds\": ", Number(r.seconds),
      ",\n  \"passed\": ", r.count(VerifyOutcome::kPassed),
      ",\n  \"failed\": ", QuotedList(OpsWith(r, VerifyOutcome::kFailed)),
      ",\n  \"no_cpu_kernel\": ", QuotedList(OpsWith(r, VerifyOutcome::kNoKernel)),
      ",\n  \"no_input_recipe\": ", QuotedList(OpsWith(r, VerifyOutcome::kNoRecipe)),
      ",\n  \"no_device_kernel\": ", QuotedList(OpsWith(r, VerifyOutcome::kNoDeviceKernel)),
      ",\n  \"ops\": [\n", absl::StrJoin(ops, ",\n"), "\n  ]\n}\n");
}

}  // namespace

absl::StatusOr<std::string> RunVerify(const VerifyCmdOptions& o, const OpRegistry& registry,
                                      int* exit_code) {
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(o.format, "text|json"));
  kernels::VerifyOptions options;
  options.seed = o.seed;
  options.kernels = o.kernels;
  absl::StatusOr<DeviceType> device = ParseDeviceType(o.device);
  if (!device.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device=", QuotedInput(o.device), ": expected cpu or cuda"));
  }
  options.device = *device;
  if (o.op.has_value()) {
    options.ops = absl::StrSplit(*o.op, ',', absl::SkipWhitespace());
    if (options.ops.empty()) {
      return absl::InvalidArgumentError("--op is empty; give an op name such as relu");
    }
  }
  if (o.mesh.has_value()) {
    for (absl::string_view part : absl::StrSplit(*o.mesh, ',')) {
      int64_t e = 0;
      if (!absl::SimpleAtoi(part, &e)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--mesh='", *o.mesh, "': expected extents like 2,3"));
      }
      options.mesh.push_back(e);
    }
  }
  absl::StatusOr<kernels::VerifyReport> report = kernels::RunVerify(registry, options);
  if (report.status().code() == absl::StatusCode::kUnimplemented) {
    // The usual cause: the default build, which links no CUDA backend.
    return absl::UnimplementedError(absl::StrCat(
        "--device=", o.device, ": this sbp has no ", DeviceTypeName(options.device),
        " backend; build it with `bazel build --config=cuda //cli:sbp` (",
        report.status().message(), ")"));
  }
  OFS_RETURN_IF_ERROR(report.status());
  if (exit_code != nullptr && !report->ok()) *exit_code = 1;
  return format == OutputFormat::kJson ? ReportToJson(*report)
                                        : kernels::VerifyReportToText(*report);
}

}  // namespace oneflow_sbp::cli
