#include "cli/cmd_boxing.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "io/boxing_plan_format.h"
#include "boxing/planner.h"
#include "oneflow_sbp/values/data_type.h"
#include "io/message_decode.h"
#include "cli/boxing_execution.h"
#include "cli/cli_format.h"
#include "cli/rank_runner.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunBoxing(const BoxingOptions& o, engine::Engine& engine, int* exit_code) {
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(o.format, "text|json|textproto|dot"));
  for (const auto& [value, flag, example] :
       {std::tuple<const std::string&, const char*, const char*>{o.shape, "shape", "8,6"},
        {o.placement, "placement", "'cpu:0-3 [2,2]'"},
        {o.from, "from", "'(S(0),S(1))'"},
        {o.to, "to", "'(S(1),S(0))'"}}) {
    if (value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " is required, e.g. --", flag, "=", example));
    }
  }
  if (o.repeat < 0 || o.repeat > 10000 || (o.repeat > 0 && !o.execute)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--repeat=", o.repeat, ": expected 0 to 10000 timed re-runs, and only with --execute"));
  }
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Parse(o.shape));
  OFS_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(o.dtype));
  OFS_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(shape, ByteSizeOf(dtype)));
  OFS_ASSIGN_OR_RETURN(Placement src_placement, io::DecodePlacement(o.placement));
  OFS_ASSIGN_OR_RETURN(Placement dst_placement,
       o.to_placement ? io::DecodePlacement(*o.to_placement) : src_placement);
  OFS_ASSIGN_OR_RETURN(NdSbp from, io::DecodeNdSbp(o.from));
  OFS_ASSIGN_OR_RETURN(NdSbp to, io::DecodeNdSbp(o.to));

  const boxing::PlanRequest request{shape, dtype, src_placement, from, dst_placement, to};
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const boxing::BoxingPlan> plan, engine.Plan(request));
  OFS_ASSIGN_OR_RETURN(boxing::BoxingPlan naive, boxing::NaivePerAxisPlan(request,
      engine.calibration()));
  if (format == OutputFormat::kDot) return io::PlanToGraphviz(*plan);
  oneflow::BoxingPlanProto proto = io::PlanToProto(*plan, &naive);
  std::string text = io::PlanToText(*plan, &naive);
  if (o.execute) {
    OFS_ASSIGN_OR_RETURN(Backend backend, ParseBackend(*o.execute));
    int world = o.nproc;
    if (world == 0) {
      for (int64_t r : plan->ranks) world = std::max<int>(world, static_cast<int>(r) + 1);
    }
    // A cuda placement runs on device memory: rank threads sharing the
    // current GPU (the in-process world on a device). The planner already
    // refused placements of two device types.
    const DeviceType device = src_placement.device_type();
    RankRunOptions run_options;
    run_options.device = device;
    const std::string label = device == DeviceType::kCpu
                                  ? *o.execute
                                  : absl::StrCat(*o.execute, ", ", DeviceTypeName(device),
                                                 " memory");
    absl::StatusOr<std::string> ran = RunOnRanks(
        backend, world, [&](comm::Communicator& comm) -> absl::StatusOr<std::string> {
          OFS_ASSIGN_OR_RETURN(ExecutionSummary summary, ExecuteAndVerify(*plan, comm, o.seed,
              device, o.repeat));
          if (comm.rank() != 0) return std::string();
          if (!summary.verified || !summary.bytes_as_planned) {
            if (exit_code != nullptr) *exit_code = 1;
          }
          *proto.mutable_execution() = ExecutionToProto(summary, label);
          absl::StrAppend(&text, ExecutionText(*plan, summary, label, world));
          return Render(format, proto, text);
        },
        run_options);
    return ran;
  }
  return Render(format, proto, text);
}

}  // namespace oneflow_sbp::cli
